"""The /stacks routes (heat-api.md 2.0 S1-S4, S8-S20).

Create (or adopt), preview, list and detail; and on the canonical
``/stacks/{stack_name}/{stack_id}`` URL: show, update (PUT, PATCH), delete,
update previews, abandon, export, the stored template, environment and
files, and the outputs. Bodies become messages in ``stack_requests``, replies
become Heat's JSON in ``stack_views``.

Abandon, export and adopt follow ``ApiSettings.enable_stack_abandon`` and
``enable_stack_adopt``. Heat defaults both to False: abandon leaves cloud
resources that nothing manages any more, and adopt takes over resources
described by data the client supplies. Kiln defaults both to True because its
local sandbox users rely on them (export a stack, start again, adopt it); the
settings stay, so a shared deployment can switch them off.
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.api.native import stack_views as views
from kiln.api.native.lookup import StackLookup, redirect_if_sub
from kiln.api.native.stack_requests import (
    call,
    create_message,
    for_visible_stack,
    is_no_change,
    list_message,
    parse_bool,
    parse_tags,
    parse_timeout,
    preview_message,
    preview_update_message,
    update_message,
)
from kiln.api.native.support import (
    ApiDeps,
    Endpoint,
    Route,
    accepted,
    authorize,
    body,
    query_bool,
    stack_url,
)
from kiln.core.errors import NotSupported
from kiln.rpc import messages as m

STACKS = "/{tenant_id}/stacks"
STACK = STACKS + "/{stack_name}/{stack_id}"


class StackCollection(Endpoint):
    """S3 (GET) and S1 (POST)."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:index")
        message = list_message(req, ctx.rpc(), self.deps)
        if message.global_tenant:
            authorize(self.deps, req, "stacks:global_index")
        found = self.deps.call(message)
        resp.media = views.stack_list(req, found, limit=message.limit, with_project=ctx.is_admin)

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:create")
        created = call(self.deps, create_message(self.deps, ctx.rpc(), body(req)))
        location = stack_url(req, ctx.project_id, created.name, created.stack_id)
        resp.status = falcon.HTTP_201
        resp.location = location
        resp.media = {
            "stack": {"id": created.stack_id, "links": [{"href": location, "rel": "self"}]}
        }


class StackDetail(Endpoint):
    """S4 (GET); any other method looks up a stack named ``detail``, as in Heat."""

    def __init__(self, deps: ApiDeps) -> None:
        super().__init__(deps)
        self.lookup = StackLookup(deps)

    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:detail")
        # No query is honoured; hidden stacks stay hidden, as in Heat.
        hidden = tuple(self.deps.settings.hidden_stack_tags)
        found = self.deps.call(m.ListStacks(ctx.rpc(), hidden_tags=hidden))
        resp.media = {
            "stacks": [views.stack_item(req, s, with_project=ctx.is_admin) for s in found.stacks]
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        self.lookup.on_get(req, resp, tenant_id, "detail")

    on_put = on_patch = on_delete = on_post


class StackPreview(Endpoint):
    """S2 (POST); any other method looks up a stack named ``preview``."""

    def __init__(self, deps: ApiDeps) -> None:
        super().__init__(deps)
        self.lookup = StackLookup(deps)

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:preview")
        data = body(req)
        message = preview_message(self.deps, ctx.rpc(), data)
        found = call(self.deps, message)
        rollback = data.get("disable_rollback")
        resp.media = {
            "stack": views.stack_preview(
                req,
                ctx.rpc(),
                message.name,
                found,
                timeout_mins=parse_timeout(data.get("timeout_mins")),
                disable_rollback=True
                if rollback is None
                else parse_bool("disable_rollback", rollback),
                tags=parse_tags(data.get("tags")) or (),
            )
        }

    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        self.lookup.on_get(req, resp, tenant_id, "preview")

    on_put = on_patch = on_delete = on_get


class Stack(Endpoint):
    """S8 show, S9 PUT, S10 PATCH, S13 delete; and the sub-path lookups (S6, S7)."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        if redirect_if_sub(self.deps, req, resp, tenant_id, stack_name, stack_id):
            return
        ctx = authorize(self.deps, req, "stacks:show")
        resolve = query_bool(req, "resolve_outputs", default=True)
        found = self.deps.call(m.ShowStack(ctx.rpc(), stack_id, resolve, stack_name=stack_name))
        resp.media = {"stack": views.stack_show(req, found)}

    def on_post(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        if redirect_if_sub(self.deps, req, resp, tenant_id, stack_name, stack_id):
            return
        raise falcon.HTTPMethodNotAllowed(["GET", "PUT", "PATCH", "DELETE"])

    def on_put(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:update")
        self._update(req, resp, ctx.rpc(), stack_name, stack_id, body(req), patch=False)

    def on_patch(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        data = body(req)
        rule = "stacks:update_no_change" if is_no_change(data) else "stacks:update_patch"
        ctx = authorize(self.deps, req, rule)
        self._update(req, resp, ctx.rpc(), stack_name, stack_id, data, patch=True)

    def _update(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        ctx: m.Context,
        stack_name: str,
        stack_id: str,
        data: dict[str, Any],
        *,
        patch: bool,
    ) -> None:
        message = for_visible_stack(
            self.deps,
            ctx,
            stack_name,
            stack_id,
            lambda: update_message(self.deps, ctx, stack_name, stack_id, data, patch=patch),
        )
        call(self.deps, message)
        accepted(resp, req)

    def on_delete(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:delete")
        self.deps.call(m.DeleteStack(ctx.rpc(), stack_id, stack_name=stack_name))
        resp.status = falcon.HTTP_204


class StackUpdatePreview(Endpoint):
    """S11 (PUT) and S12 (PATCH)."""

    def _preview(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        stack_name: str,
        stack_id: str,
        patch: bool,
    ) -> None:
        rule = "stacks:preview_update_patch" if patch else "stacks:preview_update"
        ctx = authorize(self.deps, req, rule).rpc()
        data = body(req)
        show_nested = query_bool(req, "show_nested")
        message = for_visible_stack(
            self.deps,
            ctx,
            stack_name,
            stack_id,
            lambda: preview_update_message(
                self.deps, ctx, stack_name, stack_id, data, patch=patch, show_nested=show_nested
            ),
        )
        found = call(self.deps, message)
        resp.media = views.resource_changes(found)

    def on_put(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        self._preview(req, resp, stack_name, stack_id, patch=False)

    def on_patch(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        self._preview(req, resp, stack_name, stack_id, patch=True)


class _AbandonData:
    """Answers with the stack's abandon data (3.10), when abandon is enabled."""

    keep = False
    rule = "stacks:abandon"

    def __init__(self, deps: ApiDeps) -> None:
        self.deps = deps

    def _answer(
        self, req: falcon.Request, resp: falcon.Response, stack_name: str, stack_id: str
    ) -> None:
        ctx = authorize(self.deps, req, self.rule)
        if not self.deps.settings.enable_stack_abandon:
            raise NotSupported("Stack Abandon is not supported.")
        found = self.deps.call(
            m.AbandonStack(ctx.rpc(), stack_id, keep=self.keep, stack_name=stack_name)
        )
        resp.media = dict(found.data)


class StackAbandon(_AbandonData):
    """S14 (DELETE .../abandon): forget the stack, leave its cloud resources."""

    def on_delete(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        self._answer(req, resp, stack_name, stack_id)


class StackExport(_AbandonData):
    """S15 (GET .../export): the same data, nothing forgotten (gated as abandon is)."""

    keep = True
    rule = "stacks:export"

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        self._answer(req, resp, stack_name, stack_id)


class StackDocument:
    """S16-S18: the stored template, environment or files, as stored (hidden values masked)."""

    def __init__(self, deps: ApiDeps, which: str) -> None:
        self.deps = deps
        self.which = which

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, f"stacks:{self.which}")
        found = self.deps.call(
            m.GetStackDocument(ctx.rpc(), stack_id, self.which, stack_name=stack_name)
        )
        resp.media = dict(found.data)


class StackOutputs(Endpoint):
    """S19: keys and descriptions, not resolved."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:list_outputs")
        found = self.deps.call(m.ListOutputs(ctx.rpc(), stack_id, stack_name=stack_name))
        resp.media = {"outputs": [views.output_item(o) for o in found.outputs]}


class StackOutput(Endpoint):
    """S20: one output, resolved now."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        output_key: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:show_output")
        found = self.deps.call(m.ShowOutput(ctx.rpc(), stack_id, output_key, stack_name=stack_name))
        resp.media = {"output": views.output(found)}


def routes(deps: ApiDeps) -> list[Route]:
    return [
        (STACKS, StackCollection(deps)),
        (STACKS + "/detail", StackDetail(deps)),
        (STACKS + "/preview", StackPreview(deps)),
        (STACK, Stack(deps)),
        (STACK + "/preview", StackUpdatePreview(deps)),
        (STACK + "/abandon", StackAbandon(deps)),
        (STACK + "/export", StackExport(deps)),
        (STACK + "/template", StackDocument(deps, "template")),
        (STACK + "/environment", StackDocument(deps, "environment")),
        (STACK + "/files", StackDocument(deps, "files")),
        (STACK + "/outputs", StackOutputs(deps)),
        (STACK + "/outputs/{output_key}", StackOutput(deps)),
    ]
