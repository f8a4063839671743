"""Simulated Cinder volumes: create from every source, read, update, delete, metadata.

Create runs ``creating -> available`` (``downloading`` in between for an image source,
``restoring-backup`` for a backup) after the ``block_storage.volume.create`` delay; an
outcome fault on ``block_storage.create_volume`` ends it in ``error``. Delete runs
``deleting -> gone`` (``block_storage.volume.delete``). Reference
simulated-cloud-api.md 5.1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.base import (
    AVAILABILITY_ZONE,
    DEFAULT_TYPE,
    SERVICE,
    BlockStorageBase,
    as_bool,
    as_size,
    check_metadata,
    final_state,
    project_of,
)

#: statuses a volume may be deleted in (anything else is busy: 400)
DELETABLE = frozenset(
    {"available", "error", "error_restoring", "error_extending", "error_managing"}
)
_IMAGE_KEYS = ("disk_format", "container_format", "min_disk", "min_ram", "size", "checksum")
GIB = 1024**3
VOLUME_DELETED_HOOK = "block_storage.volume_deleted"


class VolumeOperations(BlockStorageBase):
    """Volume CRUD and metadata."""

    def _register_volume_hooks(self) -> None:
        self.store.on(VOLUME_DELETED_HOOK, self._forget("volume"))

    # -- create --------------------------------------------------------------------------------
    def create_volume(
        self,
        scope: CloudScope,
        body: Mapping[str, Any],
        scheduler_hints: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``POST /volumes``: a ``creating`` volume."""
        self._enter(scope, "create_volume", body.get("name"))
        with self.store.lock:
            return self._create_volume(scope, body)

    def _create_volume(self, scope: CloudScope, body: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(body, Mapping):
            raise BadRequest("Invalid input received: volume must be an object.")
        sources = [
            k for k in ("imageRef", "snapshot_id", "source_volid", "backup_id") if body.get(k)
        ]
        if len(sources) > 1:
            raise BadRequest(
                "Invalid input received: only one of imageRef, snapshot_id, source_volid "
                "and backup_id may be given."
            )
        source = sources[0] if sources else None
        inherited_size, volume_type, extra = self._source(scope, source, body)
        size = as_size(body["size"]) if body.get("size") is not None else inherited_size
        if size is None:
            raise BadRequest("Invalid input received: size is required.")
        if inherited_size is not None and size < inherited_size:
            raise BadRequest(
                f"Invalid input received: volume size {size}G is smaller than its source "
                f"({inherited_size}G)."
            )
        if body.get("volume_type"):
            volume_type = self._type(str(body["volume_type"]), scope)
        elif volume_type is None:
            volume_type = self._type(DEFAULT_TYPE)
        zone = body.get("availability_zone") or AVAILABILITY_ZONE
        if zone != AVAILABILITY_ZONE:
            raise BadRequest(f"Invalid input received: Availability zone '{zone}' is invalid.")
        metadata = check_metadata(body.get("metadata") or {})
        multiattach = as_bool(body.get("multiattach", False), "multiattach") or (
            volume_type.get("extra_specs", {}).get("multiattach") == "<is> True"
        )
        for key in ("name", "description"):
            if body.get(key) is not None and not isinstance(body[key], str):
                raise BadRequest(f"Invalid input received: {key} must be a string.")
        self._check_volume_quota(scope.project_id, 1, size)
        volume_id = self.cloud.new_id()
        now = self.now()
        document: dict[str, Any] = {
            "id": volume_id,
            "name": body.get("name"),
            "description": body.get("description"),
            "size": size,
            "status": "creating",
            "availability_zone": zone,
            "volume_type": volume_type["name"],
            "volume_type_id": volume_type["id"],
            "bootable": "false",
            "encrypted": self._encryption_of(volume_type["id"]) is not None,
            "multiattach": multiattach,
            "metadata": metadata,
            "snapshot_id": body.get("snapshot_id"),
            "source_volid": body.get("source_volid"),
            "backup_id": body.get("backup_id"),
            "attachments": [],
            "created_at": now,
            "updated_at": now,
            "user_id": scope.user_id or None,
            "os-vol-tenant-attr:tenant_id": scope.project_id,
            "os-vol-host-attr:host": "sandbox@lvmdriver-1#lvmdriver-1",
            "replication_status": None,
            "migration_status": None,
            "consistencygroup_id": None,
            "group_id": None,
            "provider_id": None,
            "service_uuid": "9f6d0b0e-6c1f-4b8c-b7f4-0f6a8e3c2d10",
            "shared_targets": False,
            "consumes_quota": True,
            "links": [],
        }
        document.update(extra)
        self.store.put("volume", document)
        fault = self.cloud.sim.outcome(scope, SERVICE, "create_volume")
        delay = self.cloud.sim.delay(SERVICE, "volume", "create")
        if source == "imageRef":
            self.store.schedule("volume", volume_id, 0.0, {"status": "downloading"})
        elif source == "backup_id":
            self._start_restore(str(body["backup_id"]), volume_id, fresh=True, fault=fault)
            return document
        done = "available" if fault is None else final_state(fault.final_state, "error")
        self.store.schedule("volume", volume_id, delay, {"status": done})
        return document

    def _source(
        self, scope: CloudScope, source: str | None, body: Mapping[str, Any]
    ) -> tuple[int | None, dict[str, Any] | None, dict[str, Any]]:
        """(minimum size, inherited type, extra fields) for the volume's source."""
        if source is None:
            return None, None, {}
        ref = str(body[source])
        if source == "imageRef":
            try:
                image = self.cloud.image.get_image_internal(scope.project_id, ref)
            except NotFound:
                raise BadRequest(
                    f"Invalid image identifier or unable to access requested image {ref}."
                ) from None
            if image.get("status") != "active":
                raise BadRequest(f"Invalid input received: Image {ref} is not active.")
            min_gb = max(int(image.get("min_disk") or 0), math.ceil((image.get("size") or 0) / GIB))
            if body.get("size") is None:
                raise BadRequest("Invalid input received: size is required.")
            return (
                max(min_gb, 1),
                None,
                {"bootable": "true", "volume_image_metadata": _image_meta(image)},
            )
        if source == "snapshot_id":
            snapshot = self._owned("snapshot", ref, scope, "Snapshot")
            if snapshot["status"] != "available":
                raise BadRequest(f"Invalid snapshot: snapshot {ref} is not available.")
            parent = self.store.get("volume", snapshot["volume_id"])
            return int(snapshot["size"]), self._parent_type(parent), _bootable_of(parent)
        if source == "source_volid":
            parent = self._volume(scope, ref)
            if parent["status"] not in ("available", "in-use"):
                raise BadRequest(f"Invalid volume: source volume {ref} status must be available.")
            extra = _bootable_of(parent)
            if parent.get("volume_image_metadata"):
                extra["volume_image_metadata"] = dict(parent["volume_image_metadata"])
            return int(parent["size"]), self._parent_type(parent), extra
        backup = self._owned("backup", ref, scope, "Backup")
        if backup["status"] != "available":
            raise BadRequest(f"Invalid backup: backup {ref} status must be available.")
        return int(backup["size"]), None, {}

    def _parent_type(self, parent: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if parent is None:
            return None
        return self.store.get("volume_type", str(parent.get("volume_type_id")))

    def _start_restore(
        self, backup_id: str, volume_id: str, *, fresh: bool, fault: Any = None
    ) -> None:
        """Overridden by the backup part: restore ``backup_id`` into ``volume_id``."""
        raise NotImplementedError

    # -- read ------------------------------------------------------------------------------------
    def get_volume(self, scope: CloudScope, volume_id: str) -> dict[str, Any]:
        self._enter(scope, "get_volume", volume_id)
        with self.store.lock:
            return self._volume(scope, volume_id)

    def list_volumes(
        self, scope: CloudScope, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Volumes of the caller's project (every project for admins with all_tenants)."""
        self._enter(scope, "list_volumes")
        wanted = dict(filters or {})
        all_tenants = as_bool(wanted.pop("all_tenants", "false") or "false", "all_tenants")
        if all_tenants and not scope.is_admin:
            all_tenants = False  # Cinder ignores it for non-admins
        project = wanted.pop("project_id", None)
        limit = wanted.pop("limit", None)
        marker = wanted.pop("marker", None)
        for ignored in ("sort", "sort_key", "sort_dir", "offset", "with_count"):
            wanted.pop(ignored, None)
        metadata = _parse_metadata_filter(wanted.pop("metadata", None))
        with self.store.lock:
            volumes = [
                d
                for d in self.store.list("volume")
                if (all_tenants or project_of(d) == (project or scope.project_id))
                and (project is None or project_of(d) == project)
                and all(d.get("metadata", {}).get(k) == v for k, v in metadata.items())
                and all(_text(d.get(k)) == v for k, v in wanted.items())
            ]
            return _page(volumes, marker, limit)

    # -- update / delete ---------------------------------------------------------------------------
    def update_volume(
        self, scope: CloudScope, volume_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``PUT /volumes/{id}``: name, description, metadata."""
        self._enter(scope, "update_volume", volume_id)
        if not isinstance(body, Mapping) or not body:
            raise BadRequest("Invalid input received: nothing to update.")
        with self.store.lock:
            volume = self._volume(scope, volume_id)
            changes: dict[str, Any] = {}
            for key, value in body.items():
                if key in ("name", "description", "display_name", "display_description"):
                    if value is not None and not isinstance(value, str):
                        raise BadRequest(f"Invalid input received: {key} must be a string.")
                    changes[key.removeprefix("display_")] = value
                elif key == "metadata":
                    changes["metadata"] = check_metadata(value)
                else:
                    raise BadRequest(f"Invalid input received: {key} cannot be updated.")
            volume.update(changes, updated_at=self.now())
            return self.store.put("volume", volume)

    def delete_volume(self, scope: CloudScope, volume_id: str, cascade: bool = False) -> None:
        """``DELETE /volumes/{id}``: ``deleting`` then gone; 400 while busy."""
        self._enter(scope, "delete_volume", volume_id)
        with self.store.lock:
            volume = self._volume(scope, volume_id)
            if volume["status"] not in DELETABLE or volume.get("attachments"):
                raise BadRequest(
                    "Invalid volume: Volume status must be available or error or "
                    "error_restoring or error_extending or error_managing and must not be "
                    f"migrating, attached, belong to a group or have snapshots (status "
                    f"{volume['status']}).",
                    kind="InvalidVolume",
                )
            snapshots = self.store.find("snapshot", volume_id=volume_id)
            if snapshots and not cascade:
                raise BadRequest(
                    f"Invalid volume: Volume still has {len(snapshots)} dependent snapshots.",
                    kind="InvalidVolume",
                )
            for snapshot in snapshots:
                self.store.delete("snapshot", snapshot["id"])
            self._begin_delete(scope, volume)

    def _begin_delete(self, scope: CloudScope | None, volume: dict[str, Any]) -> None:
        volume.update(status="deleting", updated_at=self.now())
        self.store.put("volume", volume)
        fault = self.cloud.sim.outcome(scope, SERVICE, "delete_volume")
        delay = self.cloud.sim.delay(SERVICE, "volume", "delete")
        if fault is not None:
            status = final_state(fault.final_state, "error_deleting")
            status = "error_deleting" if status == "error" else status
            self.store.schedule("volume", volume["id"], delay, {"status": status})
        else:
            self.store.schedule("volume", volume["id"], delay, {}, VOLUME_DELETED_HOOK)

    # -- metadata ------------------------------------------------------------------------
    def get_metadata(self, scope: CloudScope, volume_id: str) -> dict[str, str]:
        self._enter(scope, "get_volume_metadata", volume_id)
        with self.store.lock:
            return dict(self._volume(scope, volume_id)["metadata"])

    def set_metadata(
        self, scope: CloudScope, volume_id: str, metadata: Any, *, replace: bool
    ) -> dict[str, str]:
        """Merge (POST) or replace (PUT) the metadata; returns the whole new metadata."""
        self._enter(scope, "set_volume_metadata", volume_id)
        values = check_metadata(metadata)
        with self.store.lock:
            volume = self._volume(scope, volume_id)
            volume["metadata"] = values if replace else {**volume["metadata"], **values}
            volume["updated_at"] = self.now()
            self.store.put("volume", volume)
            return dict(volume["metadata"])

    def set_metadata_item(
        self, scope: CloudScope, volume_id: str, key: str, meta: Any
    ) -> dict[str, str]:
        """``PUT /metadata/{key}`` with ``{"meta": {key: value}}``."""
        values = check_metadata(meta)
        if list(values) != [key]:
            raise BadRequest("Invalid input received: Request body and URI mismatch")
        return {key: self.set_metadata(scope, volume_id, values, replace=False)[key]}

    def delete_metadata_item(self, scope: CloudScope, volume_id: str, key: str) -> None:
        self._enter(scope, "delete_volume_metadata", volume_id)
        with self.store.lock:
            volume = self._volume(scope, volume_id)
            if key not in volume["metadata"]:
                raise NotFound(f"Metadata item was not found: {key}", kind="MetadataNotFound")
            del volume["metadata"][key]
            volume["updated_at"] = self.now()
            self.store.put("volume", volume)


def _image_meta(image: Mapping[str, Any]) -> dict[str, str]:
    """Cinder's ``volume_image_metadata``: the image's id, name, formats and properties."""
    from_image = {k: image.get(k) for k in _IMAGE_KEYS}
    meta = {"image_id": image["id"], "image_name": image.get("name"), **from_image}
    for key, value in image.items():
        if isinstance(value, str) and key.startswith(("os_", "hw_", "architecture")):
            meta.setdefault(key, value)
    return {k: str(v) for k, v in meta.items() if v is not None}


def _bootable_of(parent: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"bootable": (parent or {}).get("bootable", "false")}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _parse_metadata_filter(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    try:
        value = json.loads(text.replace("'", '"'))
    except ValueError:
        raise BadRequest(f"Invalid input received: metadata filter {text!r}.") from None
    if not isinstance(value, dict):
        raise BadRequest(f"Invalid input received: metadata filter {text!r}.")
    return {str(k): str(v) for k, v in value.items()}


def _page(
    items: list[dict[str, Any]], marker: str | None, limit: str | None
) -> list[dict[str, Any]]:
    if marker is not None:
        ids = [d["id"] for d in items]
        if marker not in ids:
            raise NotFound(f"Marker {marker} could not be found.")
        items = items[ids.index(marker) + 1 :]
    if limit is not None:
        try:
            count = int(limit)
        except ValueError:
            raise BadRequest("Invalid input received: limit must be an integer.") from None
        if count < 0:
            raise BadRequest("Invalid input received: limit must be >= 0.")
        items = items[:count]
    return items


__all__ = ["DELETABLE", "VolumeOperations", "project_of"]
