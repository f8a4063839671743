"""What the compute REST resources share: the request context and list paging."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute.base import Version
from kiln.cloud.sandbox.compute.model import ComputeModel
from kiln.cloud.sandbox.rest import query, scope_of


@dataclass(frozen=True)
class Call:
    """One request as the resources need it."""

    scope: CloudScope
    version: Version
    base: str  # <scheme>://<host><mount>/v2.1, for links
    params: dict[str, str]

    def since(self, wanted: str) -> bool:
        major, _, minor = wanted.partition(".")
        return self.version >= (int(major), int(minor))


def call(req: falcon.Request) -> Call:
    return Call(scope_of(req), req.context.version, f"{req.prefix}/v2.1", query(req))


class Resource:
    """A REST resource over the compute model."""

    def __init__(self, model: ComputeModel) -> None:
        self.model = model


def page(items: list[dict[str, Any]], params: Mapping[str, str]) -> list[dict[str, Any]]:
    """``limit``/``marker`` paging over ``items`` (in creation order)."""
    marker = params.get("marker")
    if marker:
        ids = [item["id"] for item in items]
        if marker not in ids:
            raise BadRequest(f"marker [{marker}] not found")
        items = items[ids.index(marker) + 1 :]
    if params.get("limit"):
        try:
            limit = int(params["limit"])
        except ValueError:
            raise BadRequest("limit param must be an integer") from None
        if limit < 0:
            raise BadRequest("limit param must be positive")
        items = items[:limit]
    return items


def not_before(c: Call, wanted: str) -> None:
    """404, as Nova answers an endpoint the negotiated microversion does not have."""
    if not c.since(wanted):
        raise falcon.HTTPNotFound()


def accepted(resp: falcon.Response, status: int = 202) -> None:
    resp.status = falcon.code_to_http_status(status)
