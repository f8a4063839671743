"""Software configs: list, create, show, delete (heat-api.md 2.8, 3.13).

Create answers 200 (not 201) with the whole config. List items carry only
``id``, ``name``, ``group`` and ``creation_time``, plus ``project`` for admins;
``global_tenant=true`` needs ``software_configs:global_index`` (nobody, by
default).
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.api.faults import bad_request
from kiln.api.native.support import (
    MISSING_BODY,
    ApiDeps,
    Endpoint,
    Route,
    authorize,
    body,
    heat_time,
    query_bool,
    query_int,
)
from kiln.rpc import software_messages as sm


def config_summary(config: sm.SoftwareConfigView) -> dict[str, Any]:
    return {
        "id": config.id,
        "name": config.name,
        "group": config.group,
        "creation_time": heat_time(config.created_at),
    }


def config_body(config: sm.SoftwareConfigView) -> dict[str, Any]:
    """The full config of heat-api.md 3.13 (create, show, server metadata)."""
    return {
        **config_summary(config),
        "config": config.config,
        "inputs": [dict(i) for i in config.inputs],
        "outputs": [dict(o) for o in config.outputs],
        "options": dict(config.options),
    }


class SoftwareConfigs(Endpoint):
    def on_get(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "software_configs:index")
        all_projects = query_bool(req, "global_tenant")
        if all_projects:
            authorize(self.deps, req, "software_configs:global_index")
        reply = self.deps.call(
            sm.ListSoftwareConfigs(
                ctx.rpc(),
                limit=query_int(req, "limit"),
                marker=req.get_param("marker"),
                all_projects=all_projects,
            )
        )
        items = []
        for config in reply.configs:
            item = config_summary(config)
            if ctx.is_admin:
                item["project"] = config.project_id
            items.append(item)
        resp.media = {"software_configs": items}

    def on_post(self, req: falcon.Request, resp: falcon.Response, tenant_id: str) -> None:
        ctx = authorize(self.deps, req, "software_configs:create")
        given = body(req)
        for key in ("inputs", "outputs"):
            if given.get(key) is not None and not isinstance(given[key], list):
                raise bad_request(MISSING_BODY)  # Heat: a TypeError, reported generically
        reply = self.deps.call(
            sm.CreateSoftwareConfig(
                ctx.rpc(),
                name=given.get("name"),
                group=given.get("group"),
                config=given.get("config"),
                inputs=given.get("inputs"),
                outputs=given.get("outputs"),
                options=given.get("options"),
            )
        )
        resp.media = {"software_config": config_body(reply)}


class SoftwareConfig(Endpoint):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, config_id: str
    ) -> None:
        ctx = authorize(self.deps, req, "software_configs:show")
        reply = self.deps.call(sm.ShowSoftwareConfig(ctx.rpc(), config_id))
        resp.media = {"software_config": config_body(reply)}

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, tenant_id: str, config_id: str
    ) -> None:
        ctx = authorize(self.deps, req, "software_configs:delete")
        self.deps.call(sm.DeleteSoftwareConfig(ctx.rpc(), config_id))
        resp.status = falcon.HTTP_204


def routes(deps: ApiDeps) -> list[Route]:
    return [
        ("/{tenant_id}/software_configs", SoftwareConfigs(deps)),
        ("/{tenant_id}/software_configs/{config_id}", SoftwareConfig(deps)),
    ]
