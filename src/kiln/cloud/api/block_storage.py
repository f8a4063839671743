"""The block storage (Cinder v3) client interface and its value types.

What the Cinder resource plugins (``OS::Cinder::Volume``, ``VolumeAttachment``,
``EncryptedVolumeType``, the ``cinder.*`` constraints, stack snapshots through backups)
ask of the cloud. Bodies use Cinder's REST field names (the inside of ``{"volume": ...}``);
records wrap Cinder's JSON representation. Reference: simulated-cloud-api.md section 5,
resource-types.md section 3. Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kiln.cloud.api.records import Record

#: the microversion clients ask for (3.42 lets an attached volume be extended)
MICROVERSION = "3.70"


class Volume(Record):
    """A Cinder volume (``GET /volumes/{id}``)."""

    @property
    def size(self) -> int:
        return int(self.raw.get("size") or 0)

    @property
    def volume_type(self) -> str | None:
        return self.raw.get("volume_type")

    @property
    def bootable(self) -> bool:
        """Cinder writes ``"true"``/``"false"`` strings."""
        return str(self.raw.get("bootable", "false")).lower() == "true"

    @property
    def encrypted(self) -> bool:
        return bool(self.raw.get("encrypted"))

    @property
    def multiattach(self) -> bool:
        return bool(self.raw.get("multiattach"))

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self.raw.get("metadata") or {})

    @property
    def attachments(self) -> list[dict[str, Any]]:
        return [dict(a) for a in self.raw.get("attachments") or []]

    @property
    def attached_servers(self) -> list[str]:
        return [str(a.get("server_id")) for a in self.raw.get("attachments") or []]


class Snapshot(Record):
    """A Cinder volume snapshot (``GET /snapshots/{id}``)."""

    @property
    def volume_id(self) -> str | None:
        return self.raw.get("volume_id")

    @property
    def size(self) -> int:
        return int(self.raw.get("size") or 0)


class Backup(Record):
    """A Cinder backup (``GET /backups/{id}``)."""

    @property
    def volume_id(self) -> str | None:
        return self.raw.get("volume_id")

    @property
    def size(self) -> int:
        return int(self.raw.get("size") or 0)

    @property
    def fail_reason(self) -> str | None:
        return self.raw.get("fail_reason")


class BackupRestore(Record):
    """The answer of a backup restore: ``{"backup_id", "volume_id", "volume_name"}``."""

    @property
    def id(self) -> str:
        return str(self.raw["volume_id"])

    @property
    def name(self) -> str | None:
        return self.raw.get("volume_name")

    @property
    def backup_id(self) -> str:
        return str(self.raw["backup_id"])

    @property
    def volume_id(self) -> str:
        return str(self.raw["volume_id"])


class VolumeType(Record):
    """A volume type (``GET /types/{id}``)."""

    @property
    def is_public(self) -> bool:
        return bool(self.raw.get("is_public", True))

    @property
    def extra_specs(self) -> dict[str, str]:
        return dict(self.raw.get("extra_specs") or {})


class Encryption(Record):
    """The encryption spec of a volume type (``GET /types/{id}/encryption``)."""

    @property
    def id(self) -> str:
        return str(self.raw.get("encryption_id") or self.raw["volume_type_id"])

    @property
    def volume_type_id(self) -> str:
        return str(self.raw["volume_type_id"])

    @property
    def provider(self) -> str | None:
        return self.raw.get("provider")

    @property
    def cipher(self) -> str | None:
        return self.raw.get("cipher")

    @property
    def key_size(self) -> int | None:
        value = self.raw.get("key_size")
        return None if value is None else int(value)

    @property
    def control_location(self) -> str | None:
        return self.raw.get("control_location")


class Extension(Record):
    """One API extension (``GET /extensions``); its id is the alias."""

    @property
    def id(self) -> str:
        return str(self.raw["alias"])

    @property
    def alias(self) -> str:
        return str(self.raw["alias"])


class VolumeActions:
    """The volume action calls, as ``POST /volumes/{id}/action`` bodies; an adapter gives
    ``_action`` (how one body reaches the cloud) and inherits the rest."""

    def _action(self, volume_id: str, name: str, args: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def extend_volume(self, volume_id: str, new_size: int) -> None:
        self._action(volume_id, "os-extend", {"new_size": new_size})

    def retype_volume(self, volume_id: str, new_type: str, migration_policy: str = "never") -> None:
        args = {"new_type": new_type, "migration_policy": migration_policy}
        self._action(volume_id, "os-retype", args)

    def set_volume_readonly(self, volume_id: str, readonly: bool) -> None:
        self._action(volume_id, "os-update_readonly_flag", {"readonly": readonly})

    def set_volume_bootable(self, volume_id: str, bootable: bool) -> None:
        self._action(volume_id, "os-set_bootable", {"bootable": bootable})

    def reset_volume_status(
        self, volume_id: str, status: str, attach_status: str | None = None
    ) -> None:
        args: dict[str, Any] = {"status": status}
        if attach_status is not None:
            args["attach_status"] = attach_status
        self._action(volume_id, "os-reset_status", args)


class BlockStorageApi(Protocol):
    """Cinder v3 as the plugins use it."""

    # -- volumes -------------------------------------------------------------------------
    def create_volume(
        self, body: Mapping[str, Any], scheduler_hints: Mapping[str, Any] | None = None
    ) -> Volume:
        """``POST /volumes`` (size, name, imageRef, snapshot_id, source_volid, ...)."""
        ...

    def get_volume(self, volume_id: str) -> Volume:
        """``GET /volumes/{id}``; NotFound once deleted."""
        ...

    def find_volume(self, name_or_id: str) -> Volume:
        """By id, then by name; NotFound or MultipleMatches."""
        ...

    def list_volumes(self, **filters: Any) -> list[Volume]:
        """``GET /volumes/detail`` with equality filters (name, status, ...)."""
        ...

    def update_volume(self, volume_id: str, body: Mapping[str, Any]) -> Volume:
        """``PUT /volumes/{id}`` (name, description, metadata)."""
        ...

    def delete_volume(self, volume_id: str, *, cascade: bool = False) -> None:
        """``DELETE /volumes/{id}``; BadRequest while attached or busy."""
        ...

    # -- volume metadata -------------------------------------------------------------------
    def get_volume_metadata(self, volume_id: str) -> dict[str, str]:
        """``GET /volumes/{id}/metadata``."""
        ...

    def set_volume_metadata(self, volume_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        """``POST /volumes/{id}/metadata``: merge keys in; returns the whole metadata."""
        ...

    def replace_volume_metadata(
        self, volume_id: str, metadata: Mapping[str, str]
    ) -> dict[str, str]:
        """``PUT /volumes/{id}/metadata``: replace all keys; returns the new metadata."""
        ...

    def delete_volume_metadata(self, volume_id: str, key: str) -> None:
        """``DELETE /volumes/{id}/metadata/{key}``; NotFound when the key is absent."""
        ...

    # -- volume actions --------------------------------------------------------------------
    def extend_volume(self, volume_id: str, new_size: int) -> None:
        """``os-extend``: grow the volume (``available``, or ``in-use`` from 3.42)."""
        ...

    def retype_volume(self, volume_id: str, new_type: str, migration_policy: str = "never") -> None:
        """``os-retype``: change the volume type (name or id)."""
        ...

    def set_volume_readonly(self, volume_id: str, readonly: bool) -> None:
        """``os-update_readonly_flag`` (volume must be ``available``)."""
        ...

    def set_volume_bootable(self, volume_id: str, bootable: bool) -> None:
        """``os-set_bootable``."""
        ...

    def reset_volume_status(
        self, volume_id: str, status: str, attach_status: str | None = None
    ) -> None:
        """``os-reset_status`` (admin)."""
        ...

    # -- snapshots ---------------------------------------------------------------------------
    def create_snapshot(self, body: Mapping[str, Any]) -> Snapshot:
        """``POST /snapshots`` (volume_id, name, description, force)."""
        ...

    def get_snapshot(self, snapshot_id: str) -> Snapshot:
        """``GET /snapshots/{id}``."""
        ...

    def find_snapshot(self, name_or_id: str) -> Snapshot:
        """By id, then by name; NotFound or MultipleMatches."""
        ...

    def delete_snapshot(self, snapshot_id: str) -> None:
        """``DELETE /snapshots/{id}``."""
        ...

    # -- backups -----------------------------------------------------------------------------
    def create_backup(self, body: Mapping[str, Any]) -> Backup:
        """``POST /backups`` (volume_id, name, description, force, incremental)."""
        ...

    def get_backup(self, backup_id: str) -> Backup:
        """``GET /backups/{id}``."""
        ...

    def find_backup(self, name_or_id: str) -> Backup:
        """By id, then by name; NotFound or MultipleMatches."""
        ...

    def list_backups(self, **filters: Any) -> list[Backup]:
        """``GET /backups/detail`` with equality filters."""
        ...

    def delete_backup(self, backup_id: str) -> None:
        """``DELETE /backups/{id}``."""
        ...

    def restore_backup(
        self, backup_id: str, volume_id: str | None = None, name: str | None = None
    ) -> BackupRestore:
        """``POST /backups/{id}/restore``: into ``volume_id``, or a new volume."""
        ...

    # -- volume types and encryption ----------------------------------------------------------
    def list_volume_types(self) -> list[VolumeType]:
        """``GET /types``."""
        ...

    def get_volume_type(self, type_id: str) -> VolumeType:
        """``GET /types/{id}``."""
        ...

    def find_volume_type(self, name_or_id: str) -> VolumeType:
        """A type by id or name (``cinder.vtype``); NotFound or MultipleMatches."""
        ...

    def get_default_volume_type(self) -> VolumeType:
        """``GET /types/default``."""
        ...

    def create_volume_type(self, body: Mapping[str, Any]) -> VolumeType:
        """``POST /types`` (admin): name, description, extra_specs, is_public."""
        ...

    def delete_volume_type(self, type_id: str) -> None:
        """``DELETE /types/{id}`` (admin); BadRequest while volumes use it."""
        ...

    def get_type_encryption(self, type_id: str) -> Encryption | None:
        """``GET /types/{id}/encryption``; None when the type is not encrypted."""
        ...

    def create_type_encryption(self, type_id: str, body: Mapping[str, Any]) -> Encryption:
        """``POST /types/{id}/encryption`` (admin): provider, cipher, key_size, ..."""
        ...

    def update_type_encryption(self, type_id: str, body: Mapping[str, Any]) -> Encryption:
        """``PUT /types/{id}/encryption/{encryption_id}`` (admin): the changed keys."""
        ...

    def delete_type_encryption(self, type_id: str) -> None:
        """``DELETE /types/{id}/encryption/{encryption_id}`` (admin)."""
        ...

    # -- service ---------------------------------------------------------------------------------
    def list_extensions(self) -> list[Extension]:
        """``GET /extensions`` (EncryptedVolumeType needs alias ``encryption``)."""
        ...


__all__ = [
    "MICROVERSION",
    "Backup",
    "BackupRestore",
    "BlockStorageApi",
    "Encryption",
    "Extension",
    "Snapshot",
    "Volume",
    "VolumeType",
]

# CONTRACT READY
