"""The ``/_sim`` control endpoint: change the simulation while it runs (admin tokens only).

    GET    /_sim/faults              the rules          POST /_sim/faults    add one (201)
    DELETE /_sim/faults              remove all         DELETE /_sim/faults/{id}
    GET|PUT /_sim/latency            {"compute.create_server": 0.2, "*": 0}
    GET|PUT /_sim/delays             {"compute.server.create": 2, "network.*": 0}
    GET|PUT /_sim/quotas/{project}   per-project quota overrides
    GET    /_sim/requests            the call log (?service=&operation= patterns)
    POST   /_sim/alarms/{id}/fire    {"state": "alarm"}: an alarm changes state and notifies

Not an OpenStack API: it exists so tests, benchmarks and users can make the cloud slow,
flaky or strict on purpose (reference simulated-cloud-api.md section 11).
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.cloud.api.errors import BadRequest, Forbidden, NotFound
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.rest import (
    App,
    TokenValidator,
    create_service_app,
    json_body,
    query,
    scope_of,
)
from kiln.cloud.sandbox.simulator import FaultRule


def _admin(req: falcon.Request) -> None:
    if not scope_of(req).is_admin:
        raise Forbidden("The sandbox controls need an admin token.")


def _numbers(body: Any) -> dict[str, float]:
    if not isinstance(body, dict):
        raise BadRequest("Expected an object of pattern: seconds.")
    try:
        return {str(k): float(v) for k, v in body.items()}
    except (TypeError, ValueError) as exc:
        raise BadRequest(f"Invalid number: {exc}") from exc


class _Faults:
    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _admin(req)
        resp.media = {"faults": [rule.as_json() for rule in self.cloud.sim.faults]}

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        _admin(req)
        body = json_body(req)
        fields = set(FaultRule.__dataclass_fields__) - {"id"}
        if not isinstance(body, dict) or set(body) - fields:
            raise BadRequest(f"A fault takes the fields {', '.join(sorted(fields))}.")
        try:
            rule = FaultRule(**body)
        except TypeError as exc:
            raise BadRequest(str(exc)) from exc
        self.cloud.sim.add_fault(rule)
        resp.status = falcon.HTTP_201
        resp.media = {"fault": rule.as_json()}

    def on_delete(self, req: falcon.Request, resp: falcon.Response) -> None:
        _admin(req)
        self.cloud.sim.clear_faults()
        resp.status = falcon.HTTP_204


class _Fault:
    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud

    def on_delete(self, req: falcon.Request, resp: falcon.Response, fault_id: str) -> None:
        _admin(req)
        sim = self.cloud.sim
        rule = next((r for r in sim.faults if r.id == fault_id), None)
        if rule is None:
            raise NotFound(f"No fault {fault_id}.")
        sim.faults.remove(rule)
        resp.status = falcon.HTTP_204


class _Table:
    """``latency`` or ``delays``: a pattern -> seconds table, replaced as a whole by PUT."""

    def __init__(self, cloud: SandboxCloud, name: str) -> None:
        self.cloud = cloud
        self.name = name

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _admin(req)
        resp.media = {self.name: getattr(self.cloud.sim, self.name)}

    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        _admin(req)
        table = getattr(self.cloud.sim, self.name)
        table.clear()
        table.update(_numbers(json_body(req)))
        resp.media = {self.name: table}


class _Quotas:
    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud

    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        _admin(req)
        sim = self.cloud.sim
        resp.media = {"quotas": {k: sim.quota(project_id, k) for k in sim.quotas}}

    def on_put(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        _admin(req)
        body = json_body(req)
        if not isinstance(body, dict):
            raise BadRequest("Expected an object of quota name: limit.")
        try:
            limits = {str(k): int(v) for k, v in body.items()}
        except (TypeError, ValueError) as exc:
            raise BadRequest(f"Invalid limit: {exc}") from exc
        self.cloud.sim.project_quotas.setdefault(project_id, {}).update(limits)
        self.on_get(req, resp, project_id)


class _Requests:
    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _admin(req)
        params = query(req)
        calls = self.cloud.sim.call_log(params.get("service"), params.get("operation"))
        resp.media = {"requests": [c.as_json() for c in calls]}


class _FireAlarm:
    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud

    def on_post(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        _admin(req)
        body = json_body(req)
        state = body.get("state", "alarm") if isinstance(body, dict) else None
        if state not in ("alarm", "ok", "insufficient data"):
            raise BadRequest("state must be one of: alarm, ok, insufficient data.")
        if "alarming" not in self.cloud.services:
            raise NotFound("The sandbox does not simulate alarming.")
        alarm = self.cloud.services["alarming"].fire(alarm_id, state)
        resp.media = {"alarm": alarm}


def create_control_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The ``/_sim`` app (mounted at ``/_sim``: paths here start after it)."""
    return create_service_app(
        style="keystone",
        tokens=tokens,
        routes=[
            ("/faults", _Faults(cloud)),
            ("/faults/{fault_id}", _Fault(cloud)),
            ("/latency", _Table(cloud, "latency")),
            ("/delays", _Table(cloud, "delays")),
            ("/quotas/{project_id}", _Quotas(cloud)),
            ("/requests", _Requests(cloud)),
            ("/alarms/{alarm_id}/fire", _FireAlarm(cloud)),
        ],
    )
