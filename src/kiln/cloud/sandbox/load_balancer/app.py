"""The Octavia v2 REST API over the load-balancer model (mounted at ``/load-balancer``).

Every path is served under both ``/v2.0`` and ``/v2`` (openstacksdk appends ``/v2.0``;
the version document points at ``/v2``). Bodies use Octavia's envelopes
(``{"loadbalancer": {...}}``, ``{"loadbalancers": [...]}``); POST answers 201, PUT 200,
DELETE 204; errors are Octavia's ``{"faultcode", "faultstring", "debuginfo"}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.load_balancer.model import LoadBalancerModel
from kiln.cloud.sandbox.rest import (
    App,
    TokenValidator,
    create_service_app,
    json_body,
    query,
    scope_of,
)

Handler = Callable[..., Any]
_VERSION_PATHS = frozenset({"/", "", "/v2", "/v2.0"})


class _Versions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        href = f"{req.prefix}/v2"
        resp.media = {
            "versions": [
                {
                    "id": "v2.0",
                    "status": "SUPPORTED",
                    "updated": "2016-12-11T00:00:00Z",
                    "links": [{"rel": "self", "href": href}],
                },
                {
                    "id": "v2.27",
                    "status": "CURRENT",
                    "updated": "2023-05-05T00:00:00Z",
                    "links": [{"rel": "self", "href": href}],
                },
            ]
        }


class _Collection:
    """``GET`` (list) and ``POST`` (create) of one kind; ``parent`` ids come from the URL."""

    def __init__(
        self, key: str, plural: str, list_: Handler, create: Handler | None = None
    ) -> None:
        self.key, self.plural, self.list_, self.create = key, plural, list_, create

    def on_get(self, req: falcon.Request, resp: falcon.Response, **parent: str) -> None:
        filters = {k: v for k, v in query(req).items() if k != "fields"}
        found = self.list_(scope_of(req), *parent.values(), **filters)
        resp.media = {self.plural: found}

    def on_post(self, req: falcon.Request, resp: falcon.Response, **parent: str) -> None:
        if self.create is None:
            raise falcon.HTTPMethodNotAllowed(["GET"])
        body = json_body(req, self.key)
        resp.status = falcon.HTTP_201
        resp.media = {self.key: self.create(scope_of(req), *parent.values(), body)}


class _Item:
    """``GET``, ``PUT`` and ``DELETE`` of one object."""

    def __init__(
        self,
        key: str,
        get: Handler,
        update: Handler | None = None,
        delete: Handler | None = None,
    ) -> None:
        self.key, self.get, self.update, self.delete = key, get, update, delete

    def on_get(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        resp.media = {self.key: self.get(scope_of(req), *ids.values())}

    def on_put(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        if self.update is None:
            raise falcon.HTTPMethodNotAllowed(["GET", "DELETE"])
        body = json_body(req, self.key)
        resp.media = {self.key: self.update(scope_of(req), *ids.values(), body)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, **ids: str) -> None:
        if self.delete is None:
            raise falcon.HTTPMethodNotAllowed(["GET", "PUT"])
        self.delete(scope_of(req), *ids.values(), **self._options(req))
        resp.status = falcon.HTTP_204

    def _options(self, req: falcon.Request) -> dict[str, Any]:
        if self.key == "loadbalancer":
            return {"cascade": query(req).get("cascade", "").lower() in ("true", "1")}
        return {}


def _catalog_routes(model: LoadBalancerModel) -> list[tuple[str, object]]:
    """Flavors, availability zones and their profiles (one table, one pattern)."""
    table = (
        ("flavors", "flavor", "flavors", "lb_flavor"),
        ("flavorprofiles", "flavorprofile", "flavorprofiles", "lb_flavorprofile"),
        ("availabilityzones", "availability_zone", "availability_zones", "lb_availability_zone"),
        (
            "availabilityzoneprofiles",
            "availability_zone_profile",
            "availability_zone_profiles",
            "lb_availability_zone_profile",
        ),
    )
    routes: list[tuple[str, object]] = []
    for path, key, plural, kind in table:

        def list_(scope: CloudScope, _kind: str = kind, **filters: Any) -> Any:
            return model.list_catalog(scope, _kind, **filters)

        def create(scope: CloudScope, body: Any, _kind: str = kind) -> Any:
            return model.create_catalog_entry(scope, _kind, body)

        def get(scope: CloudScope, key_: str, _kind: str = kind) -> Any:
            return model.get_catalog_entry(scope, _kind, key_)

        def delete(scope: CloudScope, key_: str, _kind: str = kind) -> None:
            model.delete_catalog_entry(scope, _kind, key_)

        routes.append((f"/lbaas/{path}", _Collection(key, plural, list_, create)))
        routes.append((f"/lbaas/{path}/{{key}}", _Item(key, get, None, delete)))
    return routes


class _Quotas:
    def __init__(self, model: LoadBalancerModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"quotas": self.model.list_quotas(scope_of(req))}


def _routes(model: LoadBalancerModel) -> list[tuple[str, object]]:
    m = model
    return [
        (
            "/lbaas/loadbalancers",
            _Collection(
                "loadbalancer", "loadbalancers", m.list_load_balancers, m.create_load_balancer
            ),
        ),
        (
            "/lbaas/loadbalancers/{lb_id}",
            _Item(
                "loadbalancer", m.get_load_balancer, m.update_load_balancer, m.delete_load_balancer
            ),
        ),
        (
            "/lbaas/listeners",
            _Collection("listener", "listeners", m.list_listeners, m.create_listener),
        ),
        (
            "/lbaas/listeners/{listener_id}",
            _Item("listener", m.get_listener, m.update_listener, m.delete_listener),
        ),
        ("/lbaas/pools", _Collection("pool", "pools", m.list_pools, m.create_pool)),
        ("/lbaas/pools/{pool_id}", _Item("pool", m.get_pool, m.update_pool, m.delete_pool)),
        (
            "/lbaas/pools/{pool_id}/members",
            _Collection("member", "members", m.list_members, m.create_member),
        ),
        (
            "/lbaas/pools/{pool_id}/members/{member_id}",
            _Item("member", m.get_member, m.update_member, m.delete_member),
        ),
        (
            "/lbaas/healthmonitors",
            _Collection(
                "healthmonitor", "healthmonitors", m.list_health_monitors, m.create_health_monitor
            ),
        ),
        (
            "/lbaas/healthmonitors/{hm_id}",
            _Item(
                "healthmonitor",
                m.get_health_monitor,
                m.update_health_monitor,
                m.delete_health_monitor,
            ),
        ),
        (
            "/lbaas/providers",
            _Collection("provider", "providers", lambda scope, **_: m.list_providers(scope)),
        ),
        ("/lbaas/quotas", _Quotas(m)),
        (
            "/lbaas/quotas/{project_id}",
            _Item("quota", m.get_quota, m.update_quota, lambda s, p: m.reset_quota(s, p)),
        ),
        *_catalog_routes(m),
    ]


def create_load_balancer_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The Octavia app: every route under ``/v2.0`` and ``/v2``, versions at the root."""
    model: LoadBalancerModel = cloud.load_balancer
    routes: list[tuple[str, object]] = [("/", _Versions())]
    for version in ("/v2.0", "/v2"):
        routes.append((version, _Versions()))
        routes += [(version + path, resource) for path, resource in _routes(model)]
    return create_service_app(
        style="octavia",
        tokens=tokens,
        routes=routes,
        public=lambda path: path in _VERSION_PATHS,
    )
