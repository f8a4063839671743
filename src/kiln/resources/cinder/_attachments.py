"""Attaching a volume to a server through Nova, and detaching it, as pollable steps.

OS::Cinder::VolumeAttachment and the in-place updates of OS::Cinder::Volume (a read-only
flag or a backup restore needs the volume detached, then attached again) share these.
The attachment is made through Nova; Cinder's volume status is what tells when it is
done (reference resource-types.md section 3). Each step is a JSON-able dict that the
``advance_*`` functions move forward in place, one poll at a time, and that the engine
keeps between polls as part of the action's cookie.
"""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.block_storage import BlockStorageApi
from kiln.cloud.api.compute import ComputeApi
from kiln.cloud.api.errors import BadRequest, Conflict, NotFound
from kiln.plugin import ResourceFailure

#: Cinder statuses while Nova is still attaching
ATTACHING = frozenset({"available", "attaching", "reserved"})
#: Cinder statuses while the volume is still attached or being detached
STILL_ATTACHED = frozenset({"in-use", "detaching", "reserved"})
#: Cinder statuses meaning the volume is free of the server
DETACHED = frozenset({"available", "deleting"})

Step = dict[str, Any]


def attach_step(server_id: str, volume_id: str, device: str | None) -> Step:
    """A step attaching ``volume_id`` to ``server_id`` (``device`` None: Nova picks)."""
    return {"server": server_id, "volume": volume_id, "device": device, "stage": "request"}


def detach_step(server_id: str, volume_id: str) -> Step:
    """A step detaching ``volume_id`` from ``server_id``."""
    return {"server": server_id, "volume": volume_id, "stage": "request"}


def request_attach(compute: ComputeApi, step: Step) -> None:
    """Ask Nova to attach, unless already asked; Nova's id goes in ``step["attachment"]``.

    A 409 (server busy) leaves the step at its request stage, to be asked again next
    poll. A volume already attached to the server (an attach repeated after a crash)
    counts as asked.
    """
    if step["stage"] != "request":
        return
    try:
        made = compute.create_volume_attachment(step["server"], step["volume"], step["device"])
    except (Conflict, BadRequest) as exc:
        existing = _existing_attachment(compute, step["server"], step["volume"])
        if existing is None:
            if isinstance(exc, Conflict):
                return
            raise
        step["attachment"] = existing
    else:
        step["attachment"] = made.id
    step["stage"] = "wait"


def advance_attach(compute: ComputeApi, volumes: BlockStorageApi, step: Step) -> bool:
    """One poll of an attach step; True once Cinder shows the volume ``in-use``."""
    request_attach(compute, step)
    if step["stage"] == "request":
        return False
    volume = volumes.get_volume(step["volume"])
    if volume.status == "in-use":
        return True
    if volume.status in ATTACHING:
        return False
    raise ResourceFailure(f"Volume attachment failed - Unknown status {volume.status}")


def request_detach(compute: ComputeApi, step: Step) -> None:
    """Ask Nova to detach, unless already asked; a 404 or 400 means already detached.

    A 409 leaves the step at its request stage, to be asked again next poll.
    """
    if step["stage"] != "request":
        return
    try:
        compute.delete_volume_attachment(step["server"], step["volume"])
    except Conflict:
        return
    except (NotFound, BadRequest):
        pass
    step["stage"] = "volume"


def advance_detach(compute: ComputeApi, volumes: BlockStorageApi, step: Step) -> bool:
    """One poll of a detach step; True once neither Cinder nor Nova shows the attachment."""
    server, volume_id = step["server"], step["volume"]
    request_detach(compute, step)
    if step["stage"] == "request":
        return False
    if step["stage"] == "volume":
        try:
            volume = volumes.get_volume(volume_id)
        except NotFound:
            volume = None
        if volume is not None and server in volume.attached_servers:
            if volume.status in DETACHED:
                pass
            elif volume.status in STILL_ATTACHED:
                return False
            else:
                raise ResourceFailure(f"Volume detachment failed - Unknown status {volume.status}")
        step["stage"] = "nova"
    try:
        compute.get_volume_attachment(server, volume_id)
    except NotFound:
        return True
    return False


def _existing_attachment(compute: ComputeApi, server_id: str, volume_id: str) -> str | None:
    try:
        return compute.get_volume_attachment(server_id, volume_id).id
    except NotFound:
        return None
