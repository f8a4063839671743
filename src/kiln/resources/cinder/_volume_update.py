"""The pollable steps of an OS::Cinder::Volume update in place.

Renaming and metadata are single calls made at once; everything else waits on the
volume's status, and some of it needs the volume detached from its servers first
(reference resource-types.md section 3): a new ``read_only`` flag always, a backup
restore always, a larger ``size`` only when the API is older than microversion 3.42.
:func:`plan_steps` lists the steps in Heat's order (retype, detach, restore, extend,
read-only flag, re-attach); :func:`advance` runs one poll of one step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.block_storage import MICROVERSION, BlockStorageApi, Volume
from kiln.cloud.api.compute import version_tuple
from kiln.plugin import ResourceContext, ResourceFailure
from kiln.resources.cinder._attachments import (
    Step,
    advance_attach,
    advance_detach,
    attach_step,
    detach_step,
)

#: from this Cinder microversion an attached (``in-use``) volume can be extended
EXTEND_ATTACHED_SINCE = (3, 42)
#: statuses a volume passes through on its own; an action waits them out
TRANSITIONAL = frozenset(
    {
        "creating",
        "attaching",
        "detaching",
        "reserved",
        "extending",
        "retyping",
        "restoring-backup",
        "downloading",
        "backing-up",
    }
)


def extends_attached() -> bool:
    """Whether the client's microversion lets an ``in-use`` volume be extended."""
    return version_tuple(MICROVERSION) >= EXTEND_ATTACHED_SINCE


def plan_steps(volume: Volume, changed: Mapping[str, Any]) -> list[Step]:
    """The steps of the changes that wait on the volume (``changed``: new values)."""
    steps: list[Step] = []
    if changed.get("volume_type") is not None:
        steps.append({"kind": "retype"})
    main: list[Step] = []
    if changed.get("backup_id") is not None:
        main.append({"kind": "restore", "backup": changed["backup_id"], "stage": "request"})
    if changed.get("size") is not None and changed["size"] != volume.size:
        if changed["size"] < volume.size:
            raise ResourceFailure("Shrinking volume is not supported.")
        main.append({"kind": "extend", "size": changed["size"], "stage": "ready"})
    if changed.get("read_only") is not None:
        main.append({"kind": "readonly", "value": changed["read_only"]})
    needs_detach = any(s["kind"] in ("restore", "readonly") for s in main) or (
        any(s["kind"] == "extend" for s in main) and not extends_attached()
    )
    attachments = volume.attachments if needs_detach else []
    steps += [{"kind": "detach", **detach_step(a["server_id"], volume.id)} for a in attachments]
    steps += main
    steps += [
        {"kind": "attach", **attach_step(a["server_id"], volume.id, a.get("device"))}
        for a in attachments
    ]
    for step in steps:
        step["volume"] = volume.id
    return steps


def advance(ctx: ResourceContext, step: Step) -> bool:
    """One poll of ``step``; True when it is done."""
    return _ADVANCE[step["kind"]](ctx, step)


def _volumes(ctx: ResourceContext) -> BlockStorageApi:
    return ctx.client("block_storage")  # type: ignore[no-any-return]


def _settled(volume: Volume, allowed: frozenset[str], action: str) -> bool:
    """True when the volume is in an ``allowed`` status; False while transitional."""
    if volume.status in allowed:
        return True
    if volume.status in TRANSITIONAL:
        return False
    raise ResourceFailure(f"Volume {action} failed - volume is {volume.status}")


def _retype(ctx: ResourceContext, step: Step) -> bool:
    volume = _volumes(ctx).get_volume(step["volume"])
    return _settled(volume, frozenset({"available", "in-use"}), "retype")


def _restore(ctx: ResourceContext, step: Step) -> bool:
    volumes = _volumes(ctx)
    if step["stage"] == "request":
        if not _settled(volumes.get_volume(step["volume"]), frozenset({"available"}), "restore"):
            return False
        volumes.restore_backup(step["backup"], volume_id=step["volume"])
        step["stage"] = "wait"
    volume = volumes.get_volume(step["volume"])
    if volume.status == "restoring-backup":
        return False
    if volume.status != "available":
        raise ResourceFailure(f"Volume restore from backup failed - volume is {volume.status}")
    return True


def _extend(ctx: ResourceContext, step: Step) -> bool:
    volumes = _volumes(ctx)
    if step["stage"] == "ready":
        ready = {"available", "in-use"} if extends_attached() else {"available"}
        if not _settled(volumes.get_volume(step["volume"]), frozenset(ready), "resize"):
            return False
        volumes.extend_volume(step["volume"], step["size"])
        step["stage"] = "wait"
    volume = volumes.get_volume(step["volume"])
    if volume.status == "extending":
        return False
    if volume.status not in ("available", "in-use"):
        raise ResourceFailure(f"Volume resize failed - volume is {volume.status}")
    return True


def _readonly(ctx: ResourceContext, step: Step) -> bool:
    volumes = _volumes(ctx)
    if not _settled(volumes.get_volume(step["volume"]), frozenset({"available"}), "update"):
        return False
    volumes.set_volume_readonly(step["volume"], step["value"])
    return True


def _attach(ctx: ResourceContext, step: Step) -> bool:
    return advance_attach(ctx.client("compute"), _volumes(ctx), step)


def _detach(ctx: ResourceContext, step: Step) -> bool:
    return advance_detach(ctx.client("compute"), _volumes(ctx), step)


_ADVANCE: Mapping[str, Callable[[ResourceContext, Step], bool]] = {
    "retype": _retype,
    "restore": _restore,
    "extend": _extend,
    "readonly": _readonly,
    "attach": _attach,
    "detach": _detach,
}
