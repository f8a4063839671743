"""The in-process :class:`~kiln.cloud.api.block_storage.BlockStorageApi` over the model.

Same rules and state as the REST app, without HTTP; answers are deep copies wrapped in
the contract's records. Finds follow openstacksdk: by id, then by name.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kiln.cloud.api.block_storage import (
    Backup,
    BackupRestore,
    Encryption,
    Extension,
    Snapshot,
    Volume,
    VolumeActions,
    VolumeType,
)
from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.records import Record
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel

R = TypeVar("R", bound=Record)


def find_by_name_or_id(
    get: Callable[[str], R], listing: Callable[..., list[R]], name_or_id: str, label: str
) -> R:
    """openstacksdk's find: GET by id, on NotFound list by name (exactly one)."""
    try:
        return get(name_or_id)
    except NotFound:
        pass
    matches = listing(name=name_or_id)
    if len(matches) > 1:
        raise MultipleMatches(f"More than one {label} exists with the name '{name_or_id}'.")
    if not matches:
        raise NotFound(f"No {label} found for {name_or_id}", service="block_storage")
    return matches[0]


class BlockStorageAdapter(VolumeActions):
    """BlockStorageApi for one scope, in process."""

    def __init__(self, model: BlockStorageModel, scope: CloudScope) -> None:
        self.model = model
        self.scope = scope

    # -- volumes -----------------------------------------------------------------------------
    def create_volume(
        self, body: Mapping[str, Any], scheduler_hints: Mapping[str, Any] | None = None
    ) -> Volume:
        volume = self.model.create_volume(self.scope, dict(body), scheduler_hints)
        return Volume(copy.deepcopy(volume))

    def get_volume(self, volume_id: str) -> Volume:
        return Volume(copy.deepcopy(self.model.get_volume(self.scope, volume_id)))

    def find_volume(self, name_or_id: str) -> Volume:
        return find_by_name_or_id(self.get_volume, self.list_volumes, name_or_id, "volume")

    def list_volumes(self, **filters: Any) -> list[Volume]:
        volumes = self.model.list_volumes(self.scope, _params(filters))
        return [Volume(copy.deepcopy(v)) for v in volumes]

    def update_volume(self, volume_id: str, body: Mapping[str, Any]) -> Volume:
        volume = self.model.update_volume(self.scope, volume_id, dict(body))
        return Volume(copy.deepcopy(volume))

    def delete_volume(self, volume_id: str, *, cascade: bool = False) -> None:
        self.model.delete_volume(self.scope, volume_id, cascade)

    # -- metadata -----------------------------------------------------------------------------
    def get_volume_metadata(self, volume_id: str) -> dict[str, str]:
        return self.model.get_metadata(self.scope, volume_id)

    def set_volume_metadata(self, volume_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        return self.model.set_metadata(self.scope, volume_id, dict(metadata), replace=False)

    def replace_volume_metadata(
        self, volume_id: str, metadata: Mapping[str, str]
    ) -> dict[str, str]:
        return self.model.set_metadata(self.scope, volume_id, dict(metadata), replace=True)

    def delete_volume_metadata(self, volume_id: str, key: str) -> None:
        self.model.delete_metadata_item(self.scope, volume_id, key)

    # -- actions ------------------------------------------------------------------------------
    def _action(self, volume_id: str, name: str, args: Mapping[str, Any]) -> None:
        self.model.volume_action(self.scope, volume_id, {name: dict(args)})

    # -- snapshots ------------------------------------------------------------------------------
    def create_snapshot(self, body: Mapping[str, Any]) -> Snapshot:
        return Snapshot(copy.deepcopy(self.model.create_snapshot(self.scope, dict(body))))

    def get_snapshot(self, snapshot_id: str) -> Snapshot:
        return Snapshot(copy.deepcopy(self.model.get_snapshot(self.scope, snapshot_id)))

    def find_snapshot(self, name_or_id: str) -> Snapshot:
        return find_by_name_or_id(self.get_snapshot, self._snapshots, name_or_id, "snapshot")

    def _snapshots(self, **filters: Any) -> list[Snapshot]:
        snapshots = self.model.list_snapshots(self.scope, _params(filters))
        return [Snapshot(copy.deepcopy(s)) for s in snapshots]

    def delete_snapshot(self, snapshot_id: str) -> None:
        self.model.delete_snapshot(self.scope, snapshot_id)

    # -- backups --------------------------------------------------------------------------------
    def create_backup(self, body: Mapping[str, Any]) -> Backup:
        return Backup(copy.deepcopy(self.model.create_backup(self.scope, dict(body))))

    def get_backup(self, backup_id: str) -> Backup:
        return Backup(copy.deepcopy(self.model.get_backup(self.scope, backup_id)))

    def find_backup(self, name_or_id: str) -> Backup:
        return find_by_name_or_id(self.get_backup, self.list_backups, name_or_id, "backup")

    def list_backups(self, **filters: Any) -> list[Backup]:
        backups = self.model.list_backups(self.scope, _params(filters))
        return [Backup(copy.deepcopy(b)) for b in backups]

    def delete_backup(self, backup_id: str) -> None:
        self.model.delete_backup(self.scope, backup_id)

    def restore_backup(
        self, backup_id: str, volume_id: str | None = None, name: str | None = None
    ) -> BackupRestore:
        body = {"volume_id": volume_id, "name": name}
        return BackupRestore(self.model.restore_backup(self.scope, backup_id, body))

    # -- types ----------------------------------------------------------------------------------
    def list_volume_types(self) -> list[VolumeType]:
        return [VolumeType(copy.deepcopy(t)) for t in self.model.list_types(self.scope)]

    def get_volume_type(self, type_id: str) -> VolumeType:
        return VolumeType(copy.deepcopy(self.model.get_type(self.scope, type_id)))

    def find_volume_type(self, name_or_id: str) -> VolumeType:
        types = self.list_volume_types()
        by_id = [t for t in types if t.id == name_or_id]
        if by_id:
            return by_id[0]
        named = [t for t in types if t.name == name_or_id]
        if len(named) > 1:
            raise MultipleMatches(f"More than one volume type is named '{name_or_id}'.")
        if not named:
            raise NotFound(f"No volume type found for {name_or_id}", service="block_storage")
        return named[0]

    def get_default_volume_type(self) -> VolumeType:
        return self.get_volume_type("default")

    def create_volume_type(self, body: Mapping[str, Any]) -> VolumeType:
        return VolumeType(copy.deepcopy(self.model.create_type(self.scope, dict(body))))

    def delete_volume_type(self, type_id: str) -> None:
        self.model.delete_type(self.scope, type_id)

    def get_type_encryption(self, type_id: str) -> Encryption | None:
        encryption = self.model.get_encryption(self.scope, type_id)
        return Encryption(copy.deepcopy(encryption)) if encryption else None

    def create_type_encryption(self, type_id: str, body: Mapping[str, Any]) -> Encryption:
        return Encryption(self.model.create_encryption(self.scope, type_id, dict(body)))

    def update_type_encryption(self, type_id: str, body: Mapping[str, Any]) -> Encryption:
        self.model.update_encryption(self.scope, type_id, dict(body))
        encryption = self.get_type_encryption(type_id)
        assert encryption is not None
        return encryption

    def delete_type_encryption(self, type_id: str) -> None:
        self.model.delete_encryption(self.scope, type_id)

    def list_extensions(self) -> list[Extension]:
        return [Extension(e) for e in self.model.list_extensions(self.scope)]


def _params(filters: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in filters.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, Mapping):
            out[key] = json.dumps(dict(value))
        else:
            out[key] = str(value)
    return out
