"""The Aodh v2 REST API over the alarming model (mounted at ``/alarming``).

The root serves the version document openstacksdk discovers (its ``conn.alarm`` base
becomes ``<root>/v2``); errors are Aodh's ``{"error_message": {"faultstring", ...}}``.
List filters are Aodh's query triples ``q.field``/``q.op``/``q.value`` (repeatable).
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.sandbox.alarming.model import AlarmingModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.rest import App, TokenValidator, create_service_app, json_body, scope_of

_VERSION_PATHS = frozenset({"/", "", "/v2"})


class _Versions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        version = {
            "id": "v2",
            "status": "stable",
            "updated": "2013-02-13T00:00:00Z",
            "links": [
                {"rel": "self", "href": f"{req.prefix}/v2"},
                {"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"},
            ],
            "media-types": [
                {"base": "application/json", "type": "application/vnd.openstack.telemetry-v2+json"}
            ],
        }
        if req.path.rstrip("/") == "/v2":
            resp.media = {"version": version}
        else:
            resp.media = {"versions": {"values": [version]}}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def query_triples(req: falcon.Request) -> list[dict[str, str]]:
    """The ``q.field``/``q.op``/``q.value`` triples of a request, in order."""
    fields = _as_list(req.params.get("q.field"))
    values = _as_list(req.params.get("q.value"))
    ops = _as_list(req.params.get("q.op"))
    if len(fields) != len(values):
        raise BadRequest("Each q.field needs a q.value.")
    ops += ["eq"] * (len(fields) - len(ops))
    return [{"field": f, "op": o or "eq", "value": v} for f, o, v in zip(fields, ops, values)]


class _Alarms:
    def __init__(self, model: AlarmingModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.model.list_alarms(scope_of(req), query_triples(req))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = falcon.HTTP_201
        resp.media = self.model.create_alarm(scope_of(req), json_body(req))


class _Alarm:
    def __init__(self, model: AlarmingModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        resp.media = self.model.get_alarm(scope_of(req), alarm_id)

    def on_put(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        resp.media = self.model.update_alarm(scope_of(req), alarm_id, json_body(req))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        self.model.delete_alarm(scope_of(req), alarm_id)
        resp.status = falcon.HTTP_204


class _State:
    def __init__(self, model: AlarmingModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        resp.media = self.model.get_state(scope_of(req), alarm_id)

    def on_put(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        resp.media = self.model.set_state(scope_of(req), alarm_id, json_body(req))


class _History:
    def __init__(self, model: AlarmingModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response, alarm_id: str) -> None:
        resp.media = self.model.history(scope_of(req), alarm_id)


def create_alarming_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The Aodh app: versions at the root and ``/v2``, alarms under ``/v2/alarms``."""
    model: AlarmingModel = cloud.alarming
    return create_service_app(
        style="aodh",
        tokens=tokens,
        routes=[
            ("/", _Versions()),
            ("/v2", _Versions()),
            ("/v2/alarms", _Alarms(model)),
            ("/v2/alarms/{alarm_id}", _Alarm(model)),
            ("/v2/alarms/{alarm_id}/state", _State(model)),
            ("/v2/alarms/{alarm_id}/history", _History(model)),
        ],
        public=lambda path: path in _VERSION_PATHS,
    )
