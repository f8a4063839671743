"""Template validation, template versions and their functions (heat-api.md 2.6, 3.7).

``POST /validate`` takes the template as an object or as JSON/YAML text (the
engine parses text, so errors carry ``file:line:col``), or fetches
``template_url``. A template that fails validation is a 400 ``HTTPBadRequest``
whose message is the engine's explanation, as in Heat (an exceeded limit stays
``RequestLimitExceeded``); Kiln adds every error, each with its own type, path
and location, under ``error.details``. A valid one is also checked against the
``resource_types:<Type>`` policy of every type it uses (403).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from kiln.api.context import RequestContext
from kiln.api.faults import Forbidden, HTTPError, bad_request
from kiln.api.native.stack_requests import PARSE_ERRORS, stack_input
from kiln.api.native.support import ApiDeps, Endpoint, Route, authorize, body, query_bool
from kiln.core.errors import KilnError
from kiln.rpc import catalog_messages as cm

#: The error codes ``ignore_errors`` may name (99001: a resource type's service is absent).
IGNORABLE_ERRORS = ("99001",)


class TemplateInvalid(HTTPError):
    """A validation failure as Heat's validate answers it: 400 ``HTTPBadRequest``.

    Keeps the engine's errors (each with its Heat type, path and location) for
    the body's ``details``.
    """

    def __init__(self, cause: KilnError) -> None:
        errors = list(getattr(cause, "errors", None) or [cause])
        message = "\n".join(_message(e) for e in errors)
        super().__init__(400, "HTTPBadRequest", message)
        self.location = cause.location
        self.errors = errors

    def to_dict(self) -> dict[str, object]:
        return {
            "location": str(self.location) if self.location else None,
            "errors": [e.to_dict() for e in self.errors],
        }


def _message(error: KilnError) -> str:
    """As the stack routes word it: a document that does not parse names its place."""
    prefix = PARSE_ERRORS.get(error.kind)
    if prefix is None:
        return error.full_message
    where = f"{error.location}: " if error.location is not None else ""
    return f"{prefix}: {where}{error.full_message}"


def _ignored_errors(req: falcon.Request) -> list[str]:
    raw = req.get_param("ignore_errors")
    if not raw:
        return []
    codes = raw.split(",")
    invalid = [code for code in codes if code not in IGNORABLE_ERRORS]
    if invalid:
        raise bad_request(f"Invalid codes in ignore_errors : {invalid}")
    return codes


def _validate_message(
    req: falcon.Request, deps: ApiDeps, ctx: RequestContext, given: dict[str, Any]
) -> cm.ValidateTemplate:
    """The same checks of the template, environment and files as a stack create."""
    url = given.get("template_url") if given.get("template") is None else None
    return cm.ValidateTemplate(
        context=ctx.rpc(),
        input=stack_input(deps, given),
        template_name=url if isinstance(url, str) else "<template>",
        show_nested=query_bool(req, "show_nested"),
    )


class Validate(Endpoint):
    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:validate_template")
        _ignored_errors(req)  # Kiln raises none of the ignorable errors
        message = _validate_message(req, self.deps, ctx, body(req))
        try:
            reply = self.deps.call(message)
        except KilnError as exc:
            # Limits keep their own type (clients look for RequestLimitExceeded).
            if exc.http_status == 400 and exc.kind != "RequestLimitExceeded":
                raise TemplateInvalid(exc) from None
            raise
        for type_name in reply.resource_types:
            if not self.deps.policy.resource_type_allowed(type_name, ctx):
                raise Forbidden(type_name)
        resp.media = dict(reply.document)


class TemplateVersions(Endpoint):
    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "stacks:list_template_versions")
        reply = self.deps.call(cm.ListTemplateVersions(ctx.rpc()))
        resp.media = {
            "template_versions": [
                {"version": v.version, "type": v.type, "aliases": list(v.aliases)}
                for v in reply.versions
            ]
        }


class TemplateFunctions(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, template_version: str
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:list_template_functions")
        with_conditions = query_bool(req, "with_condition_func")
        reply = self.deps.call(
            cm.ListTemplateFunctions(ctx.rpc(), template_version, with_conditions)
        )
        resp.media = {
            "template_functions": [
                {"functions": f.name, "description": f.description} for f in reply.functions
            ]
        }


def routes(deps: ApiDeps) -> list[Route]:
    factories: list[tuple[str, Callable[[ApiDeps], Any]]] = [
        ("/{tenant_id}/validate", Validate),
        ("/{tenant_id}/template_versions", TemplateVersions),
        ("/{tenant_id}/template_versions/{template_version}/functions", TemplateFunctions),
    ]
    return [(template, factory(deps)) for template, factory in factories]
