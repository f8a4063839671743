"""The simulated Cinder v3: one model over volumes, snapshots, backups and volume types.

:class:`BlockStorageModel` assembles the parts (:mod:`.volumes`, :mod:`.actions`,
:mod:`.backups`, :mod:`.types`) and adds the calls the compute model makes without
going through the API (boot-from-volume creation, lookups, deletion on termination).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.actions import ActionOperations
from kiln.cloud.sandbox.block_storage.backups import BackupOperations
from kiln.cloud.sandbox.block_storage.types import TypeOperations
from kiln.cloud.sandbox.cloud import SandboxCloud


class BlockStorageModel(BackupOperations, ActionOperations, TypeOperations):
    """Cinder v3 over the shared document store."""

    def __init__(self, cloud: SandboxCloud) -> None:
        super().__init__(cloud)
        self._register_volume_hooks()
        self._register_backup_hooks()

    def seed(self) -> None:
        """The default volume types (kept if already there)."""
        with self.store.lock:
            self._seed_types()

    # -- for other services (no sim.enter; the caller may hold the store lock) -----------------
    def create_volume_internal(self, project_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Create a volume for ``project_id`` with the REST create's rules (Nova BDMs)."""
        with self.store.lock:
            return self._create_volume(CloudScope(project_id=project_id), body)

    def get_volume_internal(self, volume_id: str) -> dict[str, Any]:
        """The live volume document, whatever its project; NotFound when absent."""
        with self.store.lock:
            return self._internal(volume_id)

    def delete_volume_internal(self, volume_id: str) -> None:
        """Delete once pending transitions (a detach) are done: ``deleting`` then gone."""
        with self.store.lock:
            self._internal(volume_id)
            if self.store.pending("volume", volume_id):
                self.store.schedule("volume", volume_id, 0.0, {"status": "deleting"})
                delay = self.cloud.sim.delay("block_storage", "volume", "delete")
                self.store.schedule("volume", volume_id, delay, {}, "block_storage.volume_deleted")
            else:
                self._begin_delete(None, self._internal(volume_id))
