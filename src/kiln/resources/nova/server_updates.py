"""In-place updates of an OS::Nova::Server: a chain of steps, each "call, then poll".

:func:`plan` turns the changed properties into steps (or raises UpdateReplace
when a policy says the change replaces the server); :class:`UpdateRunner` runs
them one after another across polls. Steps are plain dicts kept in the update
cookie and advanced in place, so a resumed update goes on where it was. The
order: metadata, tags, name, resize (flavor), rebuild (image or user data),
password, networks. A password never goes into the cookie: it waits in the
resource data (redacted) until its step uses it.
Imports: kiln.plugin, kiln.cloud.api and the sibling modules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.compute import ComputeApi
from kiln.cloud.api.errors import NotFound
from kiln.plugin import ResourceFailure, UpdateReplace
from kiln.plugin.context import ResourceContext
from kiln.resources.nova._compute import NO_PERSONALITY, compute, supports
from kiln.resources.nova.server_network_updates import network_steps, run_network_step
from kiln.resources.nova.server_status import fetch, is_active
from kiln.resources.nova.server_tags import server_tags

PENDING_PASSWORD = "pending_admin_pass"
Step = dict[str, Any]


def server_metadata(metadata: Mapping[str, Any] | None) -> dict[str, str]:
    """Nova metadata values are strings: anything else is sent as JSON."""
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in (metadata or {}).items()}


def _replace_reasons(new: Mapping[str, Any], changed: Mapping[str, Any]) -> list[str]:
    reasons = []
    if "flavor" in changed and new["flavor_update_policy"] == "REPLACE":
        reasons.append("flavor (flavor_update_policy REPLACE)")
    if "image" in changed and new["image_update_policy"] == "REPLACE":
        reasons.append("image (image_update_policy REPLACE)")
    if "user_data" in changed and new["user_data_update_policy"] == "REPLACE":
        reasons.append("user_data (user_data_update_policy REPLACE)")
    return reasons


def plan(
    ctx: ResourceContext,
    new: Mapping[str, Any],
    changed: Mapping[str, Any],
    resolve_flavor: Callable[[str], str],
    resolve_image: Callable[[str], str],
    user_data: Callable[[], str],
) -> list[Step]:
    """The steps of an update of server ``ctx.physical_id`` to ``new``."""
    reasons = _replace_reasons(new, changed)
    if reasons:
        raise UpdateReplace(f"{ctx.name}: changing {', '.join(reasons)} replaces the server")
    old = ctx.properties
    steps: list[Step] = []
    if "metadata" in changed:
        before, after = server_metadata(old.get("metadata")), server_metadata(new["metadata"])
        removed = sorted(k for k in before if k not in after)
        steps.append({"kind": "metadata", "remove": removed, "set": after})
    if "tags" in changed:
        steps.append({"kind": "tags", "tags": list(new.get("tags") or [])})
    if "name" in changed:
        steps.append({"kind": "name", "name": new.get("name") or ctx.physical_resource_name()})
    if "flavor" in changed:
        steps.append({"kind": "resize", "flavor": resolve_flavor(new["flavor"]), "stage": "call"})
    rebuild_user_data = "user_data" in changed and new["user_data_update_policy"] == "REBUILD"
    if ("image" in changed or rebuild_user_data) and new.get("image"):
        body: dict[str, Any] = {
            "imageRef": resolve_image(new["image"]),
            "preserve_ephemeral": new["image_update_policy"] == "REBUILD_PRESERVE_EPHEMERAL",
            "metadata": server_metadata(new["metadata"]),
        }
        if rebuild_user_data:
            body["user_data"] = user_data()
        steps.append({"kind": "rebuild", "body": body, "stage": "call"})
        if new.get("admin_pass"):
            ctx.data_set(PENDING_PASSWORD, new["admin_pass"], redact=True)
    elif "admin_pass" in changed and new.get("admin_pass"):
        ctx.data_set(PENDING_PASSWORD, new["admin_pass"], redact=True)
        steps.append({"kind": "password"})
    if "networks" in changed:
        steps.extend(network_steps(ctx, old, new))
    return steps


class UpdateRunner:
    """Runs the steps of one update, a little more on each poll."""

    def __init__(self, ctx: ResourceContext) -> None:
        self.ctx = ctx
        self.api: ComputeApi = compute(ctx)
        self.server_id = str(ctx.physical_id)

    def advance(self, cookie: dict[str, Any]) -> bool:
        """Run steps until one must wait; True when every step is done."""
        steps: list[Step] = cookie["steps"]
        while cookie["index"] < len(steps):
            if not self._run(steps[cookie["index"]]):
                return False
            cookie["index"] += 1
        return True

    def _run(self, step: Step) -> bool:
        kind = step["kind"]
        if kind == "networks":
            return run_network_step(self.ctx, self.api, self.server_id, step)
        runner = getattr(self, f"_{kind}")
        return bool(runner(step))

    def _metadata(self, step: Step) -> bool:
        for key in step["remove"]:
            try:
                self.api.delete_server_metadata_item(self.server_id, key)
            except NotFound:
                pass
        if step["set"]:
            self.api.set_server_metadata(self.server_id, step["set"])
        return True

    def _tags(self, step: Step) -> bool:
        self.api.set_server_tags(self.server_id, server_tags(self.ctx, step["tags"]))
        return True

    def _name(self, step: Step) -> bool:
        self.api.update_server(self.server_id, {"name": step["name"]})
        return True

    def _resize(self, step: Step) -> bool:
        if step["stage"] == "call":
            self.api.resize_server(self.server_id, step["flavor"])
            step["stage"] = "verify"
            return False
        server = fetch(self.api, self.server_id)
        if server is None:
            return False
        if step["stage"] == "verify":
            if server.status == "VERIFY_RESIZE":
                self.api.confirm_server_resize(self.server_id)
                step["stage"] = "confirm"
                return False
            if server.status in ("RESIZE", "ACTIVE"):
                return False
            raise ResourceFailure(
                f"Resizing to '{step['flavor']}' failed, status '{server.status}'"
            )
        return is_active(server, "Resize")

    def _rebuild(self, step: Step) -> bool:
        if step["stage"] == "call":
            body = dict(step["body"])
            if not supports(self.api, NO_PERSONALITY):
                body.pop("user_data", None)
            password = self.ctx.data_get(PENDING_PASSWORD)
            if password:
                body["adminPass"] = password
            self.api.rebuild_server(self.server_id, body)
            self.ctx.data_delete(PENDING_PASSWORD)
            step["stage"] = "wait"
            return False
        server = fetch(self.api, self.server_id)
        if server is None or server.status == "REBUILD" or server.task_state:
            return False
        if server.status == "ERROR":
            return is_active(server, "Rebuilding server")
        return True

    def _password(self, step: Step) -> bool:
        password = self.ctx.data_get(PENDING_PASSWORD)
        if password:
            self.api.change_server_password(self.server_id, password)
            self.ctx.data_delete(PENDING_PASSWORD)
        return True
