"""Software deployments and a server's deployment metadata (heat-api.md 2.8, 3.13).

Create and update answer 200 with the whole deployment; ``updated_time`` is
left out until the first update. An update applies only the fields given with
a non-empty value. ``GET /software_deployments/metadata/{server_id}`` is what
in-instance agents poll: the configs deployed to the server, by config name.
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.api.native.software_configs import config_body
from kiln.api.native.support import ApiDeps, Endpoint, Route, authorize, body, heat_time
from kiln.rpc import software_messages as sm

CREATE_FIELDS = (
    "config_id",
    "server_id",
    "input_values",
    "action",
    "status",
    "status_reason",
    "stack_user_project_id",
)
UPDATE_FIELDS = ("config_id", "input_values", "output_values", "action", "status", "status_reason")


def deployment_body(deployment: sm.SoftwareDeploymentView) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": deployment.id,
        "config_id": deployment.config_id,
        "server_id": deployment.server_id,
        "action": deployment.action,
        "status": deployment.status,
        "status_reason": deployment.status_reason,
        "input_values": deployment.input_values,
        "output_values": deployment.output_values,
        "creation_time": heat_time(deployment.created_at),
    }
    if deployment.updated_at is not None:
        out["updated_time"] = heat_time(deployment.updated_at)
    return out


class SoftwareDeployments(Endpoint):
    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "software_deployments:index")
        reply = self.deps.call(sm.ListSoftwareDeployments(ctx.rpc(), req.get_param("server_id")))
        resp.media = {"software_deployments": [deployment_body(d) for d in reply.deployments]}

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "software_deployments:create")
        given = body(req)
        fields = {key: given.get(key) for key in CREATE_FIELDS}
        reply = self.deps.call(sm.CreateSoftwareDeployment(ctx.rpc(), **fields))
        resp.media = {"software_deployment": deployment_body(reply)}


class SoftwareDeployment(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, deployment_id: str
    ) -> None:
        ctx = authorize(self.deps, req, "software_deployments:show")
        reply = self.deps.call(sm.ShowSoftwareDeployment(ctx.rpc(), deployment_id))
        resp.media = {"software_deployment": deployment_body(reply)}

    def on_put(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, deployment_id: str
    ) -> None:
        ctx = authorize(self.deps, req, "software_deployments:update")
        given = body(req)
        fields = {key: given.get(key) for key in UPDATE_FIELDS}
        reply = self.deps.call(sm.UpdateSoftwareDeployment(ctx.rpc(), deployment_id, **fields))
        resp.media = {"software_deployment": deployment_body(reply)}

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, deployment_id: str
    ) -> None:
        ctx = authorize(self.deps, req, "software_deployments:delete")
        self.deps.call(sm.DeleteSoftwareDeployment(ctx.rpc(), deployment_id))
        resp.status = falcon.HTTP_204


class ServerMetadata(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, server_id: str
    ) -> None:
        ctx = authorize(self.deps, req, "software_deployments:metadata")
        reply = self.deps.call(sm.ServerDeploymentMetadata(ctx.rpc(), server_id))
        resp.media = {"metadata": [config_body(c) for c in reply.configs]}


def routes(deps: ApiDeps) -> list[Route]:
    return [
        ("/{tenant_id}/software_deployments", SoftwareDeployments(deps)),
        ("/{tenant_id}/software_deployments/metadata/{server_id}", ServerMetadata(deps)),
        ("/{tenant_id}/software_deployments/{deployment_id}", SoftwareDeployment(deps)),
    ]
