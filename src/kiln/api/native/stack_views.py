"""Engine replies as Heat's JSON (heat-api.md 3.1, 3.2, 3.4, 3.5, 3.8, 3.9).

Pure functions of the request (for absolute URLs) and the reply; every key
Heat returns is here, in Heat's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import falcon

from kiln.api.native.support import heat_time, stack_links
from kiln.rpc import messages as m

NO_DESCRIPTION = "No description given"


def stack_item(req: falcon.Request, view: m.StackView, *, with_project: bool) -> dict[str, Any]:
    """A list item (3.1); ``project`` only for admins."""
    item: dict[str, Any] = {
        "id": view.id,
        "links": stack_links(req, view.project_id, view.name, view.id),
    }
    if with_project:
        item["project"] = view.project_id
    item.update(
        stack_name=view.name,
        description="",
        stack_status=f"{view.action}_{view.status}",
        stack_status_reason=view.status_reason,
        creation_time=heat_time(view.created_at),
        updated_time=heat_time(view.updated_at),
        deletion_time=heat_time(view.deleted_at),
        stack_owner=view.stack_owner,
        parent=view.parent_id,
        stack_user_project_id=view.stack_user_project_id,
        tags=list(view.tags) or None,
    )
    return item


def stack_list(
    req: falcon.Request,
    found: m.StackList,
    *,
    limit: int | None,
    with_project: bool,
) -> dict[str, Any]:
    """S3's body: the items, a ``next`` link when the page is full, the count if asked."""
    body: dict[str, Any] = {
        "stacks": [stack_item(req, s, with_project=with_project) for s in found.stacks]
    }
    if limit and len(found.stacks) == limit:
        pairs = [
            (k, v)
            for k, values in req.params.items()
            if k != "marker"
            for v in (values if isinstance(values, list) else [values])
        ]
        pairs.append(("marker", found.stacks[-1].id))
        body["links"] = [{"rel": "next", "href": f"{req.prefix}{req.path}?{urlencode(pairs)}"}]
    if found.count is not None:
        body["count"] = found.count
    return body


def stack_show(req: falcon.Request, view: m.StackView) -> dict[str, Any]:
    """S8's ``stack`` (3.2); ``outputs`` only when they were resolved."""
    body: dict[str, Any] = {
        "id": view.id,
        "links": stack_links(req, view.project_id, view.name, view.id),
        "stack_name": view.name,
        "description": view.description,
        "template_description": view.description,
        "stack_status": f"{view.action}_{view.status}",
        "stack_status_reason": view.status_reason,
        "creation_time": heat_time(view.created_at),
        "updated_time": heat_time(view.updated_at),
        "deletion_time": heat_time(view.deleted_at),
        "notification_topics": [],
        "capabilities": [],
        "parameters": dict(view.parameters),
    }
    if view.outputs is not None:
        body["outputs"] = [output(o) for o in view.outputs]
    body.update(
        disable_rollback=view.disable_rollback,
        timeout_mins=view.timeout_mins,
        stack_owner=view.stack_owner,
        parent=view.parent_id,
        stack_user_project_id=view.stack_user_project_id,
        tags=list(view.tags),
    )
    return body


def stack_preview(
    req: falcon.Request,
    ctx: m.Context,
    name: str,
    found: m.CreatePreview,
    *,
    timeout_mins: int | None,
    disable_rollback: bool,
    tags: Sequence[str],
) -> dict[str, Any]:
    """S2's ``stack`` (3.4): the show shape without a status, plus ``resources``."""
    now = datetime.now(UTC)
    return {
        "id": "None",
        "links": stack_links(req, ctx.project_id, name, "None"),
        "stack_name": name,
        "description": found.description,
        "template_description": found.description,
        "creation_time": heat_time(now),
        "updated_time": None,
        "deletion_time": None,
        "notification_topics": [],
        "capabilities": [],
        "parameters": dict(found.parameters),
        "outputs": [output(o) for o in found.outputs],
        "disable_rollback": disable_rollback,
        "timeout_mins": timeout_mins,
        "stack_owner": ctx.user_id or None,
        "parent": None,
        "stack_user_project_id": None,
        "tags": list(tags),
        "resources": [_planned(r, ctx.project_id) for r in found.resources],
    }


def _planned(res: m.PreviewResource, tenant: str) -> Any:
    """A previewed resource; one that owns a nested stack is the list of its resources."""
    if res.nested is not None:
        return [_planned(r, tenant) for r in res.nested]
    return engine_resource(res, tenant)


def resource_changes(found: m.UpdatePreview) -> dict[str, Any]:
    """S11/S12's body."""
    return {
        "resource_changes": {
            kind: [engine_resource(r, found.project_id) for r in getattr(found, kind)]
            for kind in ("added", "deleted", "replaced", "updated", "unchanged")
        }
    }


def engine_resource(res: m.PreviewResource, tenant: str) -> dict[str, Any]:
    """Heat's engine-format resource (3.5): bare status, identities, no links."""
    stack_id = res.stack_id if res.stack_id is not None else "None"
    stack_identity = {"tenant": tenant, "stack_name": res.stack_name, "stack_id": stack_id}
    body: dict[str, Any] = {
        "resource_name": res.name,
        "resource_type": res.type,
        "resource_action": res.action,
        "resource_status": res.status,
        "resource_status_reason": res.status_reason,
        "physical_resource_id": res.physical_id,
        "creation_time": heat_time(res.created_at),
        "updated_time": heat_time(res.updated_at),
        "required_by": list(res.required_by),
        "description": res.description,
        "metadata": dict(res.metadata),
        "attributes": dict(res.attributes),
        "resource_identity": {**stack_identity, "path": f"/resources/{res.name}"},
        "stack_identity": {**stack_identity, "path": ""},
        "stack_name": res.stack_name,
    }
    if res.properties is not None:
        body["properties"] = dict(res.properties)
    if res.parent_resource is not None:
        body["parent_resource"] = res.parent_resource
    return body


def output(found: m.Output) -> dict[str, Any]:
    """An output (3.8), resolved; ``output_error`` only when resolving failed."""
    body: dict[str, Any] = {
        "output_key": found.key,
        "description": found.description or NO_DESCRIPTION,
        "output_value": found.value,
    }
    if found.error is not None:
        body["output_error"] = found.error
    return body


def output_item(found: m.Output) -> dict[str, Any]:
    """An output in S19's list: no value."""
    return {"output_key": found.key, "description": found.description or NO_DESCRIPTION}


def snapshot(found: m.SnapshotView) -> dict[str, Any]:
    """A snapshot (3.9)."""
    return {
        "id": found.id,
        "name": found.name,
        "action": found.action,
        "status": found.status,
        "status_reason": found.status_reason,
        "data": found.data,
        "creation_time": heat_time(found.created_at),
    }
