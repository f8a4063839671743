"""Events of a stack and of one resource, and one event (heat-api.md 2.4, 3.6).

The stack's own state changes are events too (resource name = stack name,
physical id = stack id): ``openstack stack create --wait`` polls them with
``sort_dir=asc&marker=<last id>``. List items use the summary shape, the show
adds ``resource_type`` and ``resource_properties``. With ``nested_depth`` the
events of nested stacks come too, each with a ``root_stack`` link (clients
take it as the sign that the server does the recursion). No paging links.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import falcon

from kiln.api.faults import bad_request, not_found
from kiln.api.native.resources import resource_url
from kiln.api.native.support import (
    ApiDeps,
    Endpoint,
    Route,
    authorize,
    heat_time,
    query_int,
    query_list,
    stack_url,
)
from kiln.rpc import messages as m
from kiln.rpc import resource_messages as rm

STACK_EVENTS = "/{tenant_id}/stacks/{stack_name}/{stack_id}/events"
RESOURCE_EVENTS = "/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/events"

#: E1's repeatable filters (bare values: ``resource_status=COMPLETE``)
FILTERS = ("resource_action", "resource_status", "resource_name", "resource_type")


def event_body(req: falcon.Request, event: rm.EventInfo, *, detail: bool) -> dict[str, Any]:
    stack = event.stack
    resource = resource_url(req, stack, event.resource_name)
    links = [
        {"href": f"{resource}/events/{quote(event.id, safe='')}", "rel": "self"},
        {"href": resource, "rel": "resource"},
        {"href": stack_url(req, stack.project_id, stack.name, stack.id), "rel": "stack"},
    ]
    if event.root_stack is not None:
        root = event.root_stack
        links.append(
            {"href": stack_url(req, root.project_id, root.name, root.id), "rel": "root_stack"}
        )
    out: dict[str, Any] = {
        "id": event.id,
        "event_time": heat_time(event.created_at),
        "resource_name": event.resource_name,
        "logical_resource_id": event.resource_name,
        "physical_resource_id": event.physical_resource_id,
        "resource_status": f"{event.action}_{event.status}",
        "resource_status_reason": event.status_reason,
        "links": links,
    }
    if detail:
        out["resource_type"] = event.resource_type
        out["resource_properties"] = event.resource_properties
    return out


def list_request(
    deps: ApiDeps,
    req: falcon.Request,
    ctx: m.Context,
    stack_name: str,
    stack_id: str,
    resource_name: str | None,
) -> rm.ListStackEvents:
    """E1/E2's query as a request; bad values are 400s (other keys are ignored)."""
    limit = query_int(req, "limit")
    depth = min(query_int(req, "nested_depth") or 0, deps.settings.max_nested_stack_depth)
    sort_dir = req.get_param("sort_dir")
    if sort_dir is not None and sort_dir not in ("asc", "desc"):
        raise bad_request("Unknown sort direction, must be one of: asc, desc")
    filters = {key: query_list(req, key) for key in FILTERS if key in req.params}
    return rm.ListStackEvents(
        ctx,
        stack_name,
        stack_id,
        resource_name=resource_name,
        filters=filters,
        limit=limit,
        marker=req.get_param("marker") or None,
        sort_keys=tuple(query_list(req, "sort_keys")),
        sort_dir=sort_dir,
        nested_depth=depth,
    )


class StackEvents(Endpoint):
    """E1."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "events:index")
        found = self.deps.call(list_request(self.deps, req, ctx.rpc(), stack_name, stack_id, None))
        resp.media = {"events": [event_body(req, e, detail=False) for e in found.events]}


class ResourceEvents(Endpoint):
    """E2: 404 when the resource has no (matching) events."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        resource_name: str,
    ) -> None:
        ctx = authorize(self.deps, req, "events:index")
        found = self.deps.call(
            list_request(self.deps, req, ctx.rpc(), stack_name, stack_id, resource_name)
        )
        if not found.events:
            raise not_found(f"No events found for resource {resource_name}")
        resp.media = {"events": [event_body(req, e, detail=False) for e in found.events]}


class EventItem(Endpoint):
    """E3."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        resource_name: str,
        event_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "events:show")
        found = self.deps.call(
            rm.ShowEvent(ctx.rpc(), stack_name, stack_id, resource_name, event_id)
        )
        if not found.events:
            raise not_found(f"No event {event_id} found")
        resp.media = {"event": event_body(req, found.events[0], detail=True)}


def routes(deps: ApiDeps) -> list[Route]:
    return [
        (STACK_EVENTS, StackEvents(deps)),
        (RESOURCE_EVENTS, ResourceEvents(deps)),
        (RESOURCE_EVENTS + "/{event_id}", EventItem(deps)),
    ]
