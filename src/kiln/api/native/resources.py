"""Resources of a stack: list, show, metadata, signal, mark unhealthy (heat-api.md 2.3).

Bodies follow 3.3: the list item and the show share every key except
``description`` and ``attributes`` (show, or list with ``with_detail``);
``parent_resource`` appears for resources of nested stacks. Signal and
mark-unhealthy first ask the engine which resource the URL names (and whether
it can take a signal), then send the action; both answer 200 with ``null``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import falcon

from kiln.api.faults import bad_request
from kiln.api.native.support import (
    ApiDeps,
    Endpoint,
    Route,
    authorize,
    body,
    heat_time,
    query_bool,
    query_int,
    query_list,
    stack_url,
)
from kiln.rpc import messages as m
from kiln.rpc import resource_messages as rm

BASE = "/{tenant_id}/stacks/{stack_name}/{stack_id}/resources"
ONE = BASE + "/{resource_name}"

#: R1's repeatable filters; with ``nested_depth`` and ``with_detail`` the only keys allowed
FILTERS = ("type", "status", "name", "action", "id", "physical_resource_id")
LIST_KEYS = frozenset((*FILTERS, "nested_depth", "with_detail"))

MARK_KEYS = ("mark_unhealthy", "resource_status_reason")
#: Heat's reason when mark-unhealthy gives none
DEFAULT_MARK_REASON = "state changed by resource_mark_unhealthy api"


def resource_url(req: falcon.Request, stack: m.StackRef, resource_name: str) -> str:
    base = stack_url(req, stack.project_id, stack.name, stack.id)
    return f"{base}/resources/{quote(resource_name, safe='')}"


def resource_body(req: falcon.Request, res: rm.ResourceInfo) -> dict[str, Any]:
    """A resource as Heat shows it (3.3): list item, or show when it has details."""
    stack = res.stack
    links = [
        {"href": resource_url(req, stack, res.name), "rel": "self"},
        {"href": stack_url(req, stack.project_id, stack.name, stack.id), "rel": "stack"},
    ]
    if res.nested is not None:
        nested = res.nested
        links.append(
            {"href": stack_url(req, nested.project_id, nested.name, nested.id), "rel": "nested"}
        )
    out: dict[str, Any] = {
        "resource_name": res.name,
        "logical_resource_id": res.name,
        "physical_resource_id": res.physical_id or "",
        "resource_type": res.type,
        "resource_status": f"{res.action}_{res.status}",
        "resource_status_reason": res.status_reason,
        "creation_time": heat_time(res.created_at),
        "updated_time": heat_time(res.updated_at or res.created_at),
        "required_by": list(res.required_by),
        "links": links,
    }
    if res.parent_resource is not None:
        out["parent_resource"] = res.parent_resource
    if res.description is not None:
        out["description"] = res.description
    if res.attributes is not None:
        out["attributes"] = dict(res.attributes)
    return out


def null_body(resp: falcon.Response) -> None:
    """200 with the JSON body ``null`` (signal, mark-unhealthy: heat-api.md 9)."""
    resp.status = falcon.HTTP_200
    resp.content_type = falcon.MEDIA_JSON
    resp.text = "null"


def extract_bool(name: str, value: Any) -> bool:
    """A body boolean as Heat reads one: true/false, or their strings in any case."""
    text = str(value).lower()
    if text not in ("true", "false"):
        raise bad_request(
            f'Unrecognized value "{value}" for "{name}", acceptable values are: true, false.'
        )
    return text == "true"


class ResourceList(Endpoint):
    """R1."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "resource:index")
        invalid = sorted(set(req.params) - LIST_KEYS)
        if invalid:
            raise bad_request(f"Invalid filter parameters {invalid}")
        depth = min(query_int(req, "nested_depth") or 0, self.deps.settings.max_nested_stack_depth)
        with_detail = query_bool(req, "with_detail")
        filters = {key: query_list(req, key) for key in FILTERS if key in req.params}
        found = self.deps.call(
            rm.ListStackResources(ctx.rpc(), stack_name, stack_id, filters, depth, with_detail)
        )
        resp.media = {"resources": [resource_body(req, r) for r in found.resources]}


class ResourceItem(Endpoint):
    """R2 (GET) and R5 (PATCH)."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        resource_name: str,
    ) -> None:
        ctx = authorize(self.deps, req, "resource:show")
        with_attr = tuple(query_list(req, "with_attr"))
        found = self.deps.call(
            rm.ShowResource(ctx.rpc(), stack_name, stack_id, resource_name, with_attr)
        )
        resp.media = {"resource": resource_body(req, found)}

    def on_patch(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        resource_name: str,
    ) -> None:
        ctx = authorize(self.deps, req, "resource:mark_unhealthy")
        data = body(req)
        invalid = sorted(set(data) - set(MARK_KEYS))
        if invalid:
            shown = "{" + ", ".join(repr(k) for k in invalid) + "}"  # Heat prints a set
            raise bad_request(f"Invalid keys in resource mark unhealthy {shown}")
        if "mark_unhealthy" not in data:
            raise bad_request("Missing mandatory (mark_unhealthy) key from mark unhealthy request")
        mark = extract_bool("mark_unhealthy", data["mark_unhealthy"])
        reason = data.get("resource_status_reason")
        reason = "" if reason is None else str(reason)
        found = self.deps.call(
            rm.FindResource(ctx.rpc(), stack_name, stack_id, resource_name, rm.MARK_UNHEALTHY)
        )
        self.deps.call(
            m.MarkUnhealthy(ctx.rpc(), stack_id, found.name, mark, reason or DEFAULT_MARK_REASON)
        )
        null_body(resp)


class ResourceMetadata(Endpoint):
    """R3."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        resource_name: str,
    ) -> None:
        ctx = authorize(self.deps, req, "resource:metadata")
        found = self.deps.call(
            rm.GetResourceMetadata(ctx.rpc(), stack_name, stack_id, resource_name)
        )
        resp.media = {"metadata": dict(found.metadata)}


class ResourceSignal(Endpoint):
    """R4: any JSON object, or no body at all."""

    def on_post(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        resource_name: str,
    ) -> None:
        ctx = authorize(self.deps, req, "resource:signal")
        details = body(req, required=False) or None
        found = self.deps.call(
            rm.FindResource(
                ctx.rpc(), stack_name, stack_id, resource_name, rm.SIGNAL, details=details
            )
        )
        self.deps.call(m.SignalResource(ctx.rpc(), stack_id, found.name, details))
        null_body(resp)


def routes(deps: ApiDeps) -> list[Route]:
    return [
        (BASE, ResourceList(deps)),
        (ONE, ResourceItem(deps)),
        (ONE + "/metadata", ResourceMetadata(deps)),
        (ONE + "/signal", ResourceSignal(deps)),
    ]
