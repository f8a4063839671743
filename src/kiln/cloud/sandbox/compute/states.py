"""Nova's server states: how ``vm_state`` + ``task_state`` show as ``status``, and guards.

The model stores ``OS-EXT-STS:vm_state`` and ``OS-EXT-STS:task_state``; ``status`` is
always derived from them with the same table Nova uses, so a scheduled transition can
never leave the three out of step.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from kiln.cloud.api.errors import Conflict

VM_STATE = "OS-EXT-STS:vm_state"
TASK_STATE = "OS-EXT-STS:task_state"
POWER_STATE = "OS-EXT-STS:power_state"

# Nova power states
NOSTATE, RUNNING, PAUSED, SHUTDOWN, SUSPENDED = 0, 1, 3, 4, 7

_DEFAULT_STATUS = {
    "building": "BUILD",
    "active": "ACTIVE",
    "stopped": "SHUTOFF",
    "suspended": "SUSPENDED",
    "paused": "PAUSED",
    "resized": "VERIFY_RESIZE",
    "error": "ERROR",
    "soft-delete": "SOFT_DELETED",
    "deleted": "DELETED",
    "rescued": "RESCUE",
}

# task states that override the vm_state's status (the rest keep it)
_TASK_STATUS = {
    "rebooting": "REBOOT",
    "reboot_pending": "REBOOT",
    "reboot_started": "REBOOT",
    "rebooting_hard": "HARD_REBOOT",
    "reboot_pending_hard": "HARD_REBOOT",
    "reboot_started_hard": "HARD_REBOOT",
    "rebuilding": "REBUILD",
    "rebuild_block_device_mapping": "REBUILD",
    "rebuild_spawning": "REBUILD",
    "resize_prep": "RESIZE",
    "resize_migrating": "RESIZE",
    "resize_migrated": "RESIZE",
    "resize_finish": "RESIZE",
    "resize_reverting": "REVERT_RESIZE",
    "updating_password": "PASSWORD",
}


def status_of(vm_state: str, task_state: str | None) -> str:
    """The API ``status`` of a server in ``vm_state`` doing ``task_state``."""
    if vm_state in ("active", "stopped", "resized", "error") and task_state in _TASK_STATUS:
        if vm_state == "resized" and task_state != "resize_reverting":
            return "VERIFY_RESIZE"
        return _TASK_STATUS[task_state]
    return _DEFAULT_STATUS.get(vm_state, "UNKNOWN")


def state(vm_state: str, task_state: str | None = None, power: int | None = None) -> dict[str, Any]:
    """The fields of a server in ``vm_state``/``task_state`` (changes for the store)."""
    changes: dict[str, Any] = {
        VM_STATE: vm_state,
        TASK_STATE: task_state,
        "status": status_of(vm_state, task_state),
    }
    if power is not None:
        changes[POWER_STATE] = power
    return changes


def require(
    server: dict[str, Any],
    action: str,
    vm_states: Collection[str],
    *,
    task_states: Collection[str | None] = (None,),
) -> None:
    """409 unless the server is in one of ``vm_states`` and ``task_states``."""
    vm_state, task_state = server[VM_STATE], server[TASK_STATE]
    if task_state not in task_states:
        raise Conflict(
            f"Cannot '{action}' instance {server['id']} while it is in task_state {task_state}",
            kind="conflictingRequest",
        )
    if vm_state not in vm_states:
        raise Conflict(
            f"Cannot '{action}' instance {server['id']} while it is in vm_state {vm_state}",
            kind="conflictingRequest",
        )
