"""Simulated Cinder volume actions, and the attach/detach calls the compute model makes.

``POST /volumes/{id}/action`` bodies (``os-extend``, ``os-retype``,
``os-update_readonly_flag``, ``os-set_bootable``, ``os-reset_status``) with the
preconditions and transitions of reference simulated-cloud-api.md 5.1; Nova attaches
volumes through :meth:`ActionOperations.attach_volume` and
:meth:`ActionOperations.detach_volume` (``attaching -> in-use``,
``detaching -> available``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.base import (
    MAX_VERSION,
    SERVICE,
    BlockStorageBase,
    as_bool,
    as_size,
    final_state,
)

#: the supported actions and the operation names the simulator logs them as
ACTIONS = {
    "os-extend": "extend_volume",
    "os-retype": "retype_volume",
    "os-update_readonly_flag": "set_volume_readonly",
    "os-set_bootable": "set_volume_bootable",
    "os-reset_status": "reset_volume_status",
}
#: statuses a volume rests in (os-set_bootable is allowed in any of them)
STABLE = frozenset({"available", "in-use", "error", "error_extending", "error_restoring"})


class ActionOperations(BlockStorageBase):
    """Volume actions and attachments."""

    def volume_action(
        self,
        scope: CloudScope,
        volume_id: str,
        body: Mapping[str, Any],
        version: tuple[int, int] = MAX_VERSION,
    ) -> None:
        """One ``POST /volumes/{id}/action`` body; BadRequest for unknown actions."""
        if not isinstance(body, Mapping) or len(body) != 1:
            raise BadRequest("Invalid input received: exactly one action is required.")
        ((name, args),) = body.items()
        if name not in ACTIONS:
            raise BadRequest(f"Invalid input received: action {name} is not supported.")
        self._enter(scope, ACTIONS[name], volume_id)
        if not isinstance(args, Mapping):
            raise BadRequest(f"Invalid input received: {name} requires an object.")
        with self.store.lock:
            volume = self._volume(scope, volume_id)
            if name == "os-extend":
                self._extend(scope, volume, args, version)
            elif name == "os-retype":
                self._retype(scope, volume, args)
            elif name == "os-update_readonly_flag":
                if volume["status"] != "available":
                    raise BadRequest(
                        f"Invalid volume: Volume status must be available to update the "
                        f"readonly flag, but the current status is {volume['status']}.",
                        kind="InvalidVolume",
                    )
                flag = as_bool(args.get("readonly"), "readonly")
                volume["metadata"]["readonly"] = "True" if flag else "False"
            elif name == "os-set_bootable":
                if volume["status"] not in STABLE:
                    raise BadRequest(f"Invalid volume: Volume {volume_id} is busy.")
                flag = as_bool(args.get("bootable"), "bootable")
                volume["bootable"] = "true" if flag else "false"
            else:
                self._reset_status(scope, volume, args)
            volume["updated_at"] = self.now()
            self.store.put("volume", volume)

    def _extend(
        self,
        scope: CloudScope,
        volume: dict[str, Any],
        args: Mapping[str, Any],
        version: tuple[int, int],
    ) -> None:
        new_size = as_size(args.get("new_size"), "new_size")
        allowed = ("available", "in-use") if version >= (3, 42) else ("available",)
        if volume["status"] not in allowed:
            raise BadRequest(
                f"Invalid volume: Volume status must be {' or '.join(allowed)} to extend, "
                f"but the current status is {volume['status']}.",
                kind="InvalidVolume",
            )
        if new_size <= int(volume["size"]):
            raise BadRequest(
                f"Invalid input received: New size for extend must be greater than current "
                f"size. (current: {volume['size']}, extended: {new_size})."
            )
        self._check_volume_quota(scope.project_id, 0, new_size - int(volume["size"]))
        previous = volume["status"]
        volume["status"] = "extending"
        fault = self.cloud.sim.outcome(scope, SERVICE, "extend_volume")
        done: dict[str, Any] = {"status": previous, "size": new_size}
        if fault is not None:
            state = final_state(fault.final_state, "error_extending")
            done = {"status": "error_extending" if state == "error" else state}
        delay = self.cloud.sim.delay(SERVICE, "volume", "extend")
        self.store.schedule("volume", volume["id"], delay, done)

    def _retype(self, scope: CloudScope, volume: dict[str, Any], args: Mapping[str, Any]) -> None:
        new_type = args.get("new_type")
        if not isinstance(new_type, str) or not new_type:
            raise BadRequest("Invalid input received: new_type is required.")
        policy = args.get("migration_policy") or "never"
        if policy not in ("never", "on-demand"):
            raise BadRequest(f"Invalid input received: migration_policy {policy!r}.")
        target = self._type(new_type, scope)
        if volume["status"] not in ("available", "in-use"):
            raise BadRequest(
                f"Invalid volume: Volume status must be available or in-use to retype, but "
                f"the current status is {volume['status']}.",
                kind="InvalidVolume",
            )
        if target["id"] == volume.get("volume_type_id"):
            raise BadRequest("Invalid input received: Retype requires a different volume type.")
        previous = volume["status"]
        volume["status"] = "retyping"
        done = {
            "status": previous,
            "volume_type": target["name"],
            "volume_type_id": target["id"],
            "encrypted": self._encryption_of(target["id"]) is not None,
        }
        delay = self.cloud.sim.delay(SERVICE, "volume", "retype")
        self.store.schedule("volume", volume["id"], delay, done)

    def _reset_status(
        self, scope: CloudScope, volume: dict[str, Any], args: Mapping[str, Any]
    ) -> None:
        self._require_admin(scope)
        status = args.get("status")
        if not isinstance(status, str) or not status:
            raise BadRequest("Invalid input received: status is required.")
        self.store.cancel("volume", volume["id"])
        volume["status"] = status
        if args.get("attach_status") == "detached":
            volume["attachments"] = []

    # -- for the compute model (no sim.enter; the caller may hold the store lock) ------------
    def attach_volume(self, volume_id: str, server_id: str, device: str) -> dict[str, Any]:
        """Attach to ``server_id``: ``attaching -> in-use`` with an attachments entry."""
        with self.store.lock:
            volume = self._internal(volume_id)
            attached = [a["server_id"] for a in volume["attachments"]]
            if server_id in attached:
                raise BadRequest(
                    f"Invalid volume: volume {volume_id} is already attached to {server_id}."
                )
            if not (
                volume["status"] == "available"
                or (volume["status"] == "in-use" and volume.get("multiattach"))
            ):
                raise BadRequest(
                    f"Invalid volume: volume {volume_id} status must be available (or in-use "
                    f"with multiattach), but it is {volume['status']}.",
                    kind="InvalidVolume",
                )
            attachment = {
                "id": volume_id,
                "attachment_id": self.cloud.new_id(),
                "volume_id": volume_id,
                "server_id": server_id,
                "host_name": None,
                "device": device,
                "attached_at": self.now(),
            }
            volume.update(status="attaching", updated_at=self.now())
            self.store.put("volume", volume)
            done = {"status": "in-use", "attachments": [*volume["attachments"], attachment]}
            delay = self.cloud.sim.delay(SERVICE, "volume", "attach")
            self.store.schedule("volume", volume_id, delay, done)
            return volume

    def detach_volume(self, volume_id: str, server_id: str) -> dict[str, Any]:
        """Detach from ``server_id``: ``detaching -> available`` (or in-use if shared)."""
        with self.store.lock:
            volume = self._internal(volume_id)
            remaining = [a for a in volume["attachments"] if a["server_id"] != server_id]
            if len(remaining) == len(volume["attachments"]):
                raise BadRequest(
                    f"Invalid volume: volume {volume_id} is not attached to {server_id}."
                )
            volume.update(status="detaching", updated_at=self.now())
            self.store.put("volume", volume)
            done = {"status": "in-use" if remaining else "available", "attachments": remaining}
            delay = self.cloud.sim.delay(SERVICE, "volume", "detach")
            self.store.schedule("volume", volume_id, delay, done)
            return volume

    def _internal(self, volume_id: str) -> dict[str, Any]:
        volume = self.store.get("volume", volume_id)
        if volume is None:
            raise NotFound(f"Volume {volume_id} could not be found.", kind="VolumeNotFound")
        return volume
