"""Reading an OS::Nova::Server's status while an action waits on it.

A poll that hits a transient error (over limit, 5xx) counts as "not yet", as
Heat's ``fetch_server`` does; ERROR fails with Nova's fault; statuses that may
pass (BUILD, REBOOT, ...) keep the wait going; anything else is unknown and
fails. Imports: kiln.plugin, kiln.cloud.api.
"""

from __future__ import annotations

from kiln.cloud.api.compute import ComputeApi, Server
from kiln.cloud.api.errors import OverLimit, Unavailable
from kiln.plugin import ResourceFailure

# Statuses a server passes through on its way to ACTIVE (keep polling).
DEFERRED = frozenset(
    {
        "BUILD",
        "HARD_REBOOT",
        "PASSWORD",
        "REBOOT",
        "RESCUE",
        "RESIZE",
        "REVERT_RESIZE",
        "SHUTOFF",
        "SUSPENDED",
        "VERIFY_RESIZE",
        "REBUILD",
        "MIGRATING",
    }
)
SNAPSHOT_TASKS = frozenset(
    {"image_uploading", "image_snapshot_pending", "image_snapshot", "image_pending_upload"}
)


def fetch(api: ComputeApi, server_id: str) -> Server | None:
    """The server, or None when the cloud is briefly unable to say (poll again)."""
    try:
        return api.get_server(server_id)
    except (OverLimit, Unavailable):
        return None


def failure(server: Server, action: str = "") -> ResourceFailure:
    fault = server.fault
    message = fault.get("message", "Unknown")
    code = fault.get("code", "Unknown")
    what = f"{action} failed: " if action else ""
    return ResourceFailure(
        f'{what}Went to status {server.status} due to "Message: {message}, Code: {code}"'
    )


def is_active(server: Server | None, action: str = "") -> bool:
    """True when ACTIVE; False while on its way; a failure otherwise."""
    if server is None:
        return False
    status = server.status or ""
    if status == "ACTIVE":
        return True
    if status == "ERROR":
        raise failure(server, action)
    if status in DEFERRED:
        return False
    raise ResourceFailure(f"Unknown status {status} of server {server.id}")
