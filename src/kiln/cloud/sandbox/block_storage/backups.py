"""Simulated Cinder snapshots and backups, and restoring a backup into a volume.

Backups run ``creating -> available`` while their volume is ``backing-up``
(``block_storage.backup.create`` delay; an outcome fault on
``block_storage.create_backup`` ends the backup in ``error`` with ``fail_reason``),
``deleting -> gone``, and restore runs backup ``restoring -> available`` with the volume
``restoring-backup -> available``. Snapshots (only what ``snapshot_id`` sources and the
``cinder.snapshot`` constraint need) run ``creating -> available``. Reference
simulated-cloud-api.md 5.2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, OverLimit
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.base import (
    AVAILABILITY_ZONE,
    SERVICE,
    BlockStorageBase,
    as_bool,
    final_state,
    project_of,
)
from kiln.cloud.sandbox.block_storage.volumes import VolumeOperations

BACKUP_DELETED_HOOK = "block_storage.backup_deleted"
SNAPSHOT_DELETED_HOOK = "block_storage.snapshot_deleted"


class BackupOperations(VolumeOperations, BlockStorageBase):
    """Snapshots, backups and restores."""

    def _register_backup_hooks(self) -> None:
        for hook, kind in ((BACKUP_DELETED_HOOK, "backup"), (SNAPSHOT_DELETED_HOOK, "snapshot")):
            self.store.on(hook, self._forget(kind))

    def _source_volume(
        self, scope: CloudScope, body: Mapping[str, Any], what: str
    ) -> dict[str, Any]:
        volume_id = body.get("volume_id")
        if not isinstance(volume_id, str) or not volume_id:
            raise BadRequest("Invalid input received: volume_id is required.")
        volume = self._volume(scope, volume_id)
        force = as_bool(body.get("force", False), "force")
        allowed = ("available", "in-use") if force else ("available",)
        if volume["status"] not in allowed:
            raise BadRequest(
                f"Invalid volume: Volume to be {what} must be available or in-use (with "
                f'force), but the current status is "{volume["status"]}".',
                kind="InvalidVolume",
            )
        return volume

    # -- snapshots ---------------------------------------------------------------------------
    def create_snapshot(self, scope: CloudScope, body: Mapping[str, Any]) -> dict[str, Any]:
        self._enter(scope, "create_snapshot", body.get("name"))
        with self.store.lock:
            volume = self._source_volume(scope, body, "snapshotted")
            quota = self.cloud.sim.quota(scope.project_id, "snapshots")
            used = [s for s in self.store.list("snapshot") if project_of(s) == scope.project_id]
            if len(used) + 1 > quota:
                raise _over(f"SnapshotLimitExceeded: Maximum number of snapshots ({quota}).")
            snapshot = {
                "id": self.cloud.new_id(),
                "name": body.get("name"),
                "description": body.get("description"),
                "status": "creating",
                "volume_id": volume["id"],
                "size": volume["size"],
                "metadata": dict(body.get("metadata") or {}),
                "created_at": self.now(),
                "updated_at": None,
                "os-extended-snapshot-attributes:project_id": scope.project_id,
                "os-extended-snapshot-attributes:progress": "100%",
            }
            self.store.put("snapshot", snapshot)
            delay = self.cloud.sim.delay(SERVICE, "snapshot", "create")
            self.store.schedule("snapshot", snapshot["id"], delay, {"status": "available"})
            return snapshot

    def get_snapshot(self, scope: CloudScope, snapshot_id: str) -> dict[str, Any]:
        self._enter(scope, "get_snapshot", snapshot_id)
        with self.store.lock:
            return self._owned("snapshot", snapshot_id, scope, "Snapshot")

    def list_snapshots(
        self, scope: CloudScope, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        self._enter(scope, "list_snapshots")
        return self._list_owned(scope, "snapshot", filters)

    def delete_snapshot(self, scope: CloudScope, snapshot_id: str) -> None:
        self._enter(scope, "delete_snapshot", snapshot_id)
        with self.store.lock:
            snapshot = self._owned("snapshot", snapshot_id, scope, "Snapshot")
            if snapshot["status"] not in ("available", "error"):
                raise BadRequest("Invalid snapshot: Snapshot status must be available or error.")
            snapshot["status"] = "deleting"
            self.store.put("snapshot", snapshot)
            delay = self.cloud.sim.delay(SERVICE, "snapshot", "delete")
            self.store.schedule("snapshot", snapshot_id, delay, {}, SNAPSHOT_DELETED_HOOK)

    # -- backups -------------------------------------------------------------------------------
    def create_backup(self, scope: CloudScope, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /backups``: a ``creating`` backup of an available (or forced) volume."""
        self._enter(scope, "create_backup", body.get("name"))
        with self.store.lock:
            volume = self._source_volume(scope, body, "backed up")
            quota = self.cloud.sim.quota(scope.project_id, "backups")
            used = [b for b in self.store.list("backup") if project_of(b) == scope.project_id]
            if len(used) + 1 > quota:
                raise _over(f"BackupLimitExceeded: Maximum number of backups ({quota}).")
            incremental = as_bool(body.get("incremental", False), "incremental")
            parents = [
                b for b in used if b["volume_id"] == volume["id"] and b["status"] == "available"
            ]
            if incremental and not parents:
                raise BadRequest("Invalid backup: No backups available to do an incremental.")
            now = self.now()
            backup = {
                "id": self.cloud.new_id(),
                "name": body.get("name"),
                "description": body.get("description"),
                "status": "creating",
                "volume_id": volume["id"],
                "snapshot_id": body.get("snapshot_id"),
                "size": volume["size"],
                "availability_zone": AVAILABILITY_ZONE,
                "container": body.get("container") or "volumebackups",
                "object_count": 0,
                "fail_reason": None,
                "is_incremental": incremental,
                "has_dependent_backups": False,
                "data_timestamp": now,
                "created_at": now,
                "updated_at": now,
                "os-backup-project-attr:project_id": scope.project_id,
                "project_id": scope.project_id,
                "user_id": scope.user_id or None,
                "metadata": dict(body.get("metadata") or {}),
                "encryption_key_id": None,
                "links": [],
            }
            if incremental:
                parents[-1]["has_dependent_backups"] = True
                backup["parent_id"] = parents[-1]["id"]
            self.store.put("backup", backup)
            previous = volume["status"]
            volume["status"] = "backing-up"
            self.store.put("volume", volume)
            fault = self.cloud.sim.outcome(scope, SERVICE, "create_backup")
            done: dict[str, Any] = {"status": "available", "object_count": volume["size"] * 2}
            if fault is not None:
                done = {"status": final_state(fault.final_state, "error")}
                done["fail_reason"] = fault.message
            delay = self.cloud.sim.delay(SERVICE, "backup", "create")
            self.store.schedule("backup", backup["id"], delay, done)
            self.store.schedule("volume", volume["id"], delay, {"status": previous})
            return backup

    def get_backup(self, scope: CloudScope, backup_id: str) -> dict[str, Any]:
        self._enter(scope, "get_backup", backup_id)
        with self.store.lock:
            return self._owned("backup", backup_id, scope, "Backup")

    def list_backups(
        self, scope: CloudScope, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        self._enter(scope, "list_backups")
        return self._list_owned(scope, "backup", filters)

    def delete_backup(self, scope: CloudScope, backup_id: str) -> None:
        """``DELETE /backups/{id}``: ``deleting`` then gone."""
        self._enter(scope, "delete_backup", backup_id)
        with self.store.lock:
            backup = self._owned("backup", backup_id, scope, "Backup")
            if backup["status"] not in ("available", "error"):
                raise BadRequest(
                    "Invalid backup: Backup status must be available or error, but it is "
                    f"{backup['status']}.",
                    kind="InvalidBackup",
                )
            children = [
                b
                for b in self.store.find("backup", parent_id=backup_id)
                if b["status"] != "deleting"
            ]
            if children:
                raise BadRequest("Invalid backup: Incremental backups exist for this backup.")
            backup.update(status="deleting", updated_at=self.now())
            self.store.put("backup", backup)
            delay = self.cloud.sim.delay(SERVICE, "backup", "delete")
            self.store.schedule("backup", backup_id, delay, {}, BACKUP_DELETED_HOOK)

    def restore_backup(
        self, scope: CloudScope, backup_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``POST /backups/{id}/restore`` into ``volume_id`` or a new volume."""
        self._enter(scope, "restore_backup", backup_id)
        with self.store.lock:
            backup = self._owned("backup", backup_id, scope, "Backup")
            if backup["status"] != "available":
                raise BadRequest(
                    "Invalid backup: Backup status must be available, but it is "
                    f"{backup['status']}.",
                    kind="InvalidBackup",
                )
            volume_id = body.get("volume_id")
            if volume_id:
                volume = self._volume(scope, str(volume_id))
                if volume["status"] != "available":
                    raise BadRequest(
                        f"Invalid volume: Volume to be restored to must be available, but "
                        f"the current status is {volume['status']}.",
                        kind="InvalidVolume",
                    )
                if int(volume["size"]) < int(backup["size"]):
                    raise BadRequest(
                        f"Invalid volume: volume size {volume['size']} is smaller than the "
                        f"backup size {backup['size']}.",
                        kind="InvalidVolume",
                    )
                fault = self.cloud.sim.outcome(scope, SERVICE, "restore_backup")
                self._start_restore(backup_id, volume["id"], fresh=False, fault=fault)
            else:
                name = body.get("name") or f"restore_backup_{backup_id}"
                volume = self._create_volume(scope, {"size": backup["size"], "name": name})
                self.store.cancel("volume", volume["id"])
                fault = self.cloud.sim.outcome(scope, SERVICE, "restore_backup")
                self._start_restore(backup_id, volume["id"], fresh=True, fault=fault)
            return {
                "backup_id": backup_id,
                "volume_id": volume["id"],
                "volume_name": volume["name"],
            }

    def _start_restore(
        self, backup_id: str, volume_id: str, *, fresh: bool, fault: Any = None
    ) -> None:
        backup = self.store.get("backup", backup_id)
        volume = self.store.get("volume", volume_id)
        assert backup is not None and volume is not None
        backup["status"] = "restoring"
        self.store.put("backup", backup)
        if not fresh:
            volume["status"] = "restoring-backup"
            self.store.put("volume", volume)
        else:
            self.store.schedule("volume", volume_id, 0.0, {"status": "restoring-backup"})
        delay = self.cloud.sim.delay(SERVICE, "volume", "restore")
        if fault is not None:
            state = final_state(fault.final_state, "error_restoring")
            done = {"status": "error_restoring" if state == "error" else state}
        else:
            done = {"status": "available"}
        self.store.schedule("volume", volume_id, delay, done)
        self.store.schedule("backup", backup_id, delay, {"status": "available"})

    def _list_owned(
        self, scope: CloudScope, kind: str, filters: Mapping[str, str] | None
    ) -> list[dict[str, Any]]:
        wanted = dict(filters or {})
        all_tenants = scope.is_admin and as_bool(wanted.pop("all_tenants", "0"), "all_tenants")
        for ignored in ("sort", "sort_key", "sort_dir", "limit", "marker", "offset"):
            wanted.pop(ignored, None)
        with self.store.lock:
            return [
                d
                for d in self.store.list(kind)
                if (all_tenants or project_of(d) == scope.project_id)
                and all(str(d.get(k)) == v for k, v in wanted.items())
            ]


def _over(message: str) -> OverLimit:
    return OverLimit(message, kind="overLimit")
