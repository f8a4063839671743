"""The :class:`~kiln.cloud.api.block_storage.BlockStorageApi` of a real Cinder over REST.

Paths are relative to openstacksdk's block-storage proxy, whose base is the catalog URL
``…/volume/v3/{project_id}``; every call asks for microversion 3.70 (3.42 is what lets
an attached volume be extended, 3.47 a volume created from a backup).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kiln.cloud.api.block_storage import (
    MICROVERSION,
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
from kiln.cloud.openstack.rest import RestClient


def _q(segment: str) -> str:
    return quote(segment, safe="")


class OpenStackBlockStorage(VolumeActions):
    """Cinder v3 through a :class:`RestClient` over ``conn.block_storage``."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.rest.get(path, params=params, microversion=MICROVERSION)

    def _post(self, path: str, body: Any) -> Any:
        return self.rest.post(path, body, microversion=MICROVERSION)

    def _put(self, path: str, body: Any) -> Any:
        return self.rest.put(path, body, microversion=MICROVERSION)

    def _delete(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.rest.delete(path, params=params, microversion=MICROVERSION)

    def _find(self, kind: str, label: str, name_or_id: str) -> dict[str, Any]:
        """openstacksdk's find: GET by id, on 404 list ``?name=`` (exactly one)."""
        try:
            body = self._get(f"/{kind}/{_q(name_or_id)}")
            return dict(body[label])
        except NotFound:
            pass
        matches = self._get(f"/{kind}/detail", {"name": name_or_id})[f"{label}s"]
        if len(matches) > 1:
            raise MultipleMatches(f"More than one {label} exists with the name '{name_or_id}'.")
        if not matches:
            raise NotFound(f"No {label} found for {name_or_id}", service="block_storage")
        return dict(matches[0])

    # -- volumes -----------------------------------------------------------------------------
    def create_volume(
        self, body: Mapping[str, Any], scheduler_hints: Mapping[str, Any] | None = None
    ) -> Volume:
        request: dict[str, Any] = {"volume": dict(body)}
        if scheduler_hints:
            request["OS-SCH-HNT:scheduler_hints"] = dict(scheduler_hints)
        return Volume(self._post("/volumes", request)["volume"])

    def get_volume(self, volume_id: str) -> Volume:
        return Volume(self._get(f"/volumes/{_q(volume_id)}")["volume"])

    def find_volume(self, name_or_id: str) -> Volume:
        return Volume(self._find("volumes", "volume", name_or_id))

    def list_volumes(self, **filters: Any) -> list[Volume]:
        volumes = self._get("/volumes/detail", _params(filters))["volumes"]
        return [Volume(v) for v in volumes]

    def update_volume(self, volume_id: str, body: Mapping[str, Any]) -> Volume:
        return Volume(self._put(f"/volumes/{_q(volume_id)}", {"volume": dict(body)})["volume"])

    def delete_volume(self, volume_id: str, *, cascade: bool = False) -> None:
        params = {"cascade": "true"} if cascade else None
        self._delete(f"/volumes/{_q(volume_id)}", params)

    # -- metadata -----------------------------------------------------------------------------
    def get_volume_metadata(self, volume_id: str) -> dict[str, str]:
        return dict(self._get(f"/volumes/{_q(volume_id)}/metadata")["metadata"])

    def set_volume_metadata(self, volume_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        body = {"metadata": dict(metadata)}
        return dict(self._post(f"/volumes/{_q(volume_id)}/metadata", body)["metadata"])

    def replace_volume_metadata(
        self, volume_id: str, metadata: Mapping[str, str]
    ) -> dict[str, str]:
        body = {"metadata": dict(metadata)}
        return dict(self._put(f"/volumes/{_q(volume_id)}/metadata", body)["metadata"])

    def delete_volume_metadata(self, volume_id: str, key: str) -> None:
        self._delete(f"/volumes/{_q(volume_id)}/metadata/{_q(key)}")

    # -- actions ------------------------------------------------------------------------------
    def _action(self, volume_id: str, name: str, args: Mapping[str, Any]) -> None:
        self._post(f"/volumes/{_q(volume_id)}/action", {name: dict(args)})

    # -- snapshots ------------------------------------------------------------------------------
    def create_snapshot(self, body: Mapping[str, Any]) -> Snapshot:
        return Snapshot(self._post("/snapshots", {"snapshot": dict(body)})["snapshot"])

    def get_snapshot(self, snapshot_id: str) -> Snapshot:
        return Snapshot(self._get(f"/snapshots/{_q(snapshot_id)}")["snapshot"])

    def find_snapshot(self, name_or_id: str) -> Snapshot:
        return Snapshot(self._find("snapshots", "snapshot", name_or_id))

    def delete_snapshot(self, snapshot_id: str) -> None:
        self._delete(f"/snapshots/{_q(snapshot_id)}")

    # -- backups --------------------------------------------------------------------------------
    def create_backup(self, body: Mapping[str, Any]) -> Backup:
        created = self._post("/backups", {"backup": dict(body)})["backup"]
        return self.get_backup(created["id"])

    def get_backup(self, backup_id: str) -> Backup:
        return Backup(self._get(f"/backups/{_q(backup_id)}")["backup"])

    def find_backup(self, name_or_id: str) -> Backup:
        return Backup(self._find("backups", "backup", name_or_id))

    def list_backups(self, **filters: Any) -> list[Backup]:
        return [Backup(b) for b in self._get("/backups/detail", _params(filters))["backups"]]

    def delete_backup(self, backup_id: str) -> None:
        self._delete(f"/backups/{_q(backup_id)}")

    def restore_backup(
        self, backup_id: str, volume_id: str | None = None, name: str | None = None
    ) -> BackupRestore:
        body = {"restore": {"volume_id": volume_id, "name": name}}
        return BackupRestore(self._post(f"/backups/{_q(backup_id)}/restore", body)["restore"])

    # -- types ----------------------------------------------------------------------------------
    def list_volume_types(self) -> list[VolumeType]:
        return [VolumeType(t) for t in self._get("/types")["volume_types"]]

    def get_volume_type(self, type_id: str) -> VolumeType:
        return VolumeType(self._get(f"/types/{_q(type_id)}")["volume_type"])

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
        return VolumeType(self._post("/types", {"volume_type": dict(body)})["volume_type"])

    def delete_volume_type(self, type_id: str) -> None:
        self._delete(f"/types/{_q(type_id)}")

    def get_type_encryption(self, type_id: str) -> Encryption | None:
        body = self._get(f"/types/{_q(type_id)}/encryption")
        return Encryption(body) if body else None

    def create_type_encryption(self, type_id: str, body: Mapping[str, Any]) -> Encryption:
        created = self._post(f"/types/{_q(type_id)}/encryption", {"encryption": dict(body)})
        return Encryption(created["encryption"])

    def update_type_encryption(self, type_id: str, body: Mapping[str, Any]) -> Encryption:
        # The last segment is not checked by Cinder; cinderclient sends "provider".
        self._put(f"/types/{_q(type_id)}/encryption/provider", {"encryption": dict(body)})
        encryption = self.get_type_encryption(type_id)
        if encryption is None:
            raise NotFound(f"Volume type {type_id} has no encryption", service="block_storage")
        return encryption

    def delete_type_encryption(self, type_id: str) -> None:
        self._delete(f"/types/{_q(type_id)}/encryption/provider")

    def list_extensions(self) -> list[Extension]:
        return [Extension(e) for e in self._get("/extensions")["extensions"]]


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
