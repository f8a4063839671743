"""Engine service records (admin only) and build information (heat-api.md 2.9, 3.14).

Service times keep microseconds and carry no ``Z`` (Heat passes them through
raw). As in Heat, ``/services`` answers other methods with 404, not 405.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import falcon

from kiln.api.native.support import ApiDeps, Endpoint, Route, authorize
from kiln.rpc import catalog_messages as cm


def service_time(when: datetime | None) -> str | None:
    if when is None:
        return None
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f")


def service_body(service: cm.ServiceView) -> dict[str, Any]:
    return {
        "id": service.id,
        "binary": service.binary,
        "engine_id": service.engine_id,
        "host": service.host,
        "hostname": service.hostname,
        "topic": service.topic,
        "report_interval": service.report_interval,
        "created_at": service_time(service.created_at),
        "updated_at": service_time(service.updated_at),
        "deleted_at": service_time(service.deleted_at),
        "status": service.status,
    }


class Services(Endpoint):
    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "service:index")
        reply = self.deps.call(cm.ListServices(ctx.rpc()))
        resp.media = {"services": [service_body(s) for s in reply.services]}

    def on_other(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        raise falcon.HTTPNotFound()

    on_post = on_put = on_patch = on_delete = on_head = on_options = on_other


class BuildInfo(Endpoint):
    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "build_info:build_info")
        reply = self.deps.call(cm.GetBuildInfo(ctx.rpc()))
        resp.media = {
            "api": {"revision": self.deps.settings.revision},
            "engine": {"revision": reply.engine_revision},
        }


def routes(deps: ApiDeps) -> list[Route]:
    return [
        ("/{tenant_id}/services", Services(deps)),
        ("/{tenant_id}/build_info", BuildInfo(deps)),
    ]
