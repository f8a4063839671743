"""OS::Cinder::Volume: a Cinder volume, empty or made from an image, volume, snapshot or backup.

Create posts the volume (or restores a backup into a new one) and polls it to
``available``, then sets the read-only flag when asked. Updates are in place: name,
description and metadata at once; a new type, a backup restore, a larger size and the
read-only flag by pollable steps (kiln.resources.cinder._volume_update), detaching the
volume from its servers and attaching it again where Cinder requires it. Delete waits
for the volume to be gone. ``deletion_policy: Snapshot`` and stack snapshots keep a
Cinder backup. Reference: resource-types.md section 3.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.block_storage import Backup, BlockStorageApi, Volume
from kiln.cloud.api.errors import NotFound
from kiln.core.errors import KilnError, raise_all
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.cinder._volume_schema import ATTRIBUTES, PROPERTIES, source_errors
from kiln.resources.cinder._volume_update import TRANSITIONAL, advance, plan_steps

#: statuses of a volume being made, from nothing, an image or a backup
BUILDING = frozenset({"creating", "restoring-backup", "downloading"})
#: attributes read straight from the volume and returned as text (as Heat does)
_TEXT_ATTRIBUTES = frozenset(
    {
        "availability_zone",
        "size",
        "snapshot_id",
        "volume_type",
        "source_volid",
        "status",
        "created_at",
        "bootable",
        "encrypted",
        "attachments",
    }
)


@resource_type("OS::Cinder::Volume")
class CinderVolume(Resource):
    """A block storage volume; ``get_resource`` gives its id."""

    properties_schema = PROPERTIES
    attributes_schema = ATTRIBUTES
    supports_snapshot = True

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        return source_errors(properties)

    # -- helpers ------------------------------------------------------------------------
    @property
    def _volumes(self) -> BlockStorageApi:
        return self.ctx.client("block_storage")  # type: ignore[no-any-return]

    def _name(self) -> str:
        return self.properties.get("name") or self.ctx.physical_resource_name()

    def _volume(self) -> Volume | None:
        if not self.ctx.physical_id:
            return None
        try:
            return self._volumes.get_volume(self.ctx.physical_id)
        except NotFound:
            return None

    def needs_replace_failed(self) -> bool:
        """Keep a failed volume that still exists and is not in an error state."""
        volume = self._volume()
        return volume is None or str(volume.status).startswith("error")

    def _create_body(self) -> dict[str, Any]:
        props = self.properties
        image = props.get("image") or props.get("imageRef")
        source = props.get("source_volid")
        snapshot = props.get("snapshot_id")
        body: dict[str, Any] = {
            "name": self._name(),
            "description": props.get("description"),
            "size": props.get("size"),
            "availability_zone": props.get("availability_zone"),
            "volume_type": props.get("volume_type"),
            "imageRef": self.ctx.client("image").find_image(image).id if image else None,
            "source_volid": self._volumes.find_volume(source).id if source else None,
            "snapshot_id": self._volumes.find_snapshot(snapshot).id if snapshot else None,
            # Cinder keeps metadata values as strings
            "metadata": {k: _text(v) for k, v in (props.get("metadata") or {}).items()},
        }
        if props.get("multiattach"):
            body["multiattach"] = True
        return {k: v for k, v in body.items() if v is not None}

    # -- create -------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        found = self._volumes.list_volumes(name=self._name())
        return found[0].id if len(found) == 1 else None

    def handle_create(self) -> Cookie:
        raise_all(self.validate(self.properties))
        backup = self.properties.get("backup_id")
        if backup:
            restored = self._volumes.restore_backup(self._volumes.find_backup(backup).id)
            self.ctx.set_physical_id(restored.volume_id)
            self._volumes.update_volume(
                restored.volume_id,
                {"name": self._name(), "description": self.properties.get("description")},
            )
        else:
            hints = self.properties.get("scheduler_hints")
            volume = self._volumes.create_volume(self._create_body(), hints or None)
            self.ctx.set_physical_id(volume.id)
        return {"readonly_set": False}

    def check_create_complete(self, cookie: Cookie) -> bool:
        volume = self._volumes.get_volume(str(self.ctx.physical_id))
        if volume.status in BUILDING:
            return False
        if volume.status == "error":
            raise ResourceFailure('Went to status error due to "Unknown"')
        if volume.status != "available":
            raise ResourceFailure(f"Volume create failed - Unknown status {volume.status}")
        self.ctx.data_set("volume_type", volume.volume_type)
        read_only = self.properties.get("read_only")
        if read_only is not None and not cookie["readonly_set"]:
            self._volumes.set_volume_readonly(volume.id, read_only)
            cookie["readonly_set"] = True
        return True

    # -- update -------------------------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        volume_id = str(self.ctx.physical_id)
        volume = self._volumes.get_volume(volume_id)
        steps = plan_steps(volume, changed)  # refuses a shrink before anything changes
        if "name" in changed or "description" in changed:
            self._volumes.update_volume(
                volume_id,
                {
                    "name": new_properties.get("name") or self.ctx.physical_resource_name(),
                    "description": new_properties.get("description") or "",
                },
            )
        if "metadata" in changed:
            metadata = changed["metadata"] or {}
            self._volumes.replace_volume_metadata(
                volume_id, {k: _text(v) for k, v in metadata.items()}
            )
        new_type = changed.get("volume_type")
        if new_type is not None and new_type != self.ctx.data_get("volume_type"):
            self._volumes.retype_volume(volume_id, new_type, "never")
            self.ctx.data_set("volume_type", new_type)
        elif new_type is not None:
            steps = [s for s in steps if s["kind"] != "retype"]
        return {"steps": steps}

    def check_update_complete(self, cookie: Cookie) -> bool:
        steps = cookie["steps"]
        while steps:
            if not advance(self.ctx, steps[0]):
                return False
            steps.pop(0)
        return True

    # -- delete -------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        if not self.ctx.physical_id:
            return None
        return {"volume": self.ctx.physical_id}

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        try:
            volume = self._volumes.get_volume(cookie["volume"])
            if volume.status == "in-use":
                raise ResourceFailure("Volume in use")
            if volume.status == "error_deleting":
                raise ResourceFailure("Volume delete failed - status error_deleting")
            if volume.status == "deleting" or volume.status in TRANSITIONAL:
                return False
            self._volumes.delete_volume(volume.id)
        except NotFound:
            return True
        return False

    # -- deletion_policy: Snapshot (a backup, then the delete) --------------------------
    def handle_snapshot_delete(self) -> Cookie:
        if not self.ctx.physical_id:
            return {"stage": "delete", "inner": None}
        try:
            backup = self._volumes.create_backup({"volume_id": self.ctx.physical_id})
        except NotFound:
            return {"stage": "delete", "inner": None}
        return {"stage": "backup", "backup": backup.id}

    def check_snapshot_delete_complete(self, cookie: Cookie) -> bool:
        if cookie["stage"] == "backup":
            if not self._backup_done(self._volumes.get_backup(cookie["backup"])):
                return False
            cookie.update(stage="delete", inner=self.handle_delete())
        return self.check_delete_complete(cookie["inner"])

    @staticmethod
    def _backup_done(backup: Backup) -> bool:
        if backup.status == "creating":
            return False
        if backup.status != "available":
            raise ResourceFailure(
                f"Backup {backup.id} went to status {backup.status}: {backup.fail_reason}"
            )
        return True

    # -- stack snapshot and check -------------------------------------------------------
    def handle_snapshot(self) -> Cookie:
        backup = self._volumes.create_backup({"volume_id": self.ctx.physical_id, "force": True})
        self.ctx.data_set("backup_id", backup.id)
        return {"backup": backup.id}

    def check_snapshot_complete(self, cookie: Cookie) -> bool:
        return self._backup_done(self._volumes.get_backup(cookie["backup"]))

    @classmethod
    def properties_from_snapshot(
        cls, properties: Mapping[str, Any], snapshot: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A restored stack's volume comes from the backup its snapshot made.

        The volume's source and size go: the backup has them (a volume made from an
        image or another volume is replaced by one restored from the backup, any other
        is restored in place).
        """
        backup = (snapshot.get("resource_data") or {}).get("backup_id")
        if not backup:
            return dict(properties)
        dropped = ("image", "imageRef", "source_volid", "size")
        out = {k: v for k, v in properties.items() if k not in dropped}
        out["backup_id"] = backup
        return out

    def handle_check(self) -> Cookie:
        volume = self._volumes.get_volume(str(self.ctx.physical_id))
        if volume.status not in ("available", "in-use"):
            raise ResourceFailure(f"Volume is {volume.status}, not available or in-use")
        return None

    # -- attributes -----------------------------------------------------------------------
    def _show(self) -> Any:
        volume = self._volume()
        return None if volume is None else volume.show()

    def get_attribute(self, name: str) -> Any:
        if name == "show":
            return self._show()
        volume = self._volume()
        if volume is None:
            return None
        if name == "metadata":
            return json.dumps(volume.metadata)
        if name == "metadata_values":
            return volume.metadata
        if name == "display_name":
            return volume.name
        if name == "display_description":
            return volume.raw.get("description")
        if name == "attachments_list":
            return volume.attachments
        if name == "multiattach":
            return volume.multiattach
        if name in _TEXT_ATTRIBUTES:
            return str(volume.raw.get(name))
        return super().get_attribute(name)


def _text(value: Any) -> str:
    """A metadata value as Cinder stores it."""
    if isinstance(value, str):
        return value
    return json.dumps(value)
