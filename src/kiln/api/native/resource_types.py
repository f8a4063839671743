"""Resource types: the list, one type's schema, a generated provider template
(heat-api.md 2.7, 3.12).

The engine knows the types (its plugins); the API hides from the list, and
refuses to show, the types the caller's ``resource_types:<Type>`` policy denies
(admin-only types such as flavors and quotas).
"""

from __future__ import annotations

import falcon

from kiln.api.faults import Forbidden, bad_request
from kiln.api.native.support import ApiDeps, Endpoint, Route, authorize, query_bool
from kiln.rpc import catalog_messages as cm

TEMPLATE_TYPES = ("cfn", "hot")


class ResourceTypes(Endpoint):
    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:list_resource_types")
        with_description = query_bool(req, "with_description")
        reply = self.deps.call(
            cm.ListResourceTypes(
                ctx.rpc(),
                name=req.get_param("name"),
                support_status=req.get_param("support_status"),
                version=req.get_param("version"),
                with_description=with_description,
            )
        )
        allowed = [t for t in reply.types if self.deps.policy.resource_type_allowed(t.name, ctx)]
        if with_description:
            resp.media = {
                "resource_types": [
                    {"resource_type": t.name, "description": t.description} for t in allowed
                ]
            }
        else:
            resp.media = {"resource_types": [t.name for t in allowed]}


class ResourceTypeSchema(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, type_name: str
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:resource_schema")
        if not self.deps.policy.resource_type_allowed(type_name, ctx):
            raise Forbidden(type_name)
        # Heat ignores with_description here; honouring it is harmless (heat-api.md 2.7).
        with_description = query_bool(req, "with_description")
        reply = self.deps.call(cm.ShowResourceType(ctx.rpc(), type_name, with_description))
        resp.media = dict(reply.document)


class ResourceTypeTemplate(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, type_name: str
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:generate_template")
        raw = req.get_param("template_type")
        template_type = "cfn" if raw is None else raw.lower()
        if template_type not in TEMPLATE_TYPES:
            raise bad_request(
                f'Template type is not supported: Invalid template type "{raw}", '
                "valid types are: cfn, hot."
            )
        if not self.deps.policy.resource_type_allowed(type_name, ctx):
            raise Forbidden(type_name)
        reply = self.deps.call(cm.GenerateTemplate(ctx.rpc(), type_name, template_type))
        resp.media = dict(reply.template)


def routes(deps: ApiDeps) -> list[Route]:
    return [
        ("/{tenant_id}/resource_types", ResourceTypes(deps)),
        ("/{tenant_id}/resource_types/{type_name}", ResourceTypeSchema(deps)),
        ("/{tenant_id}/resource_types/{type_name}/template", ResourceTypeTemplate(deps)),
    ]
