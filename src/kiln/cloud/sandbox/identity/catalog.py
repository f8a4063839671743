"""The service catalog: fixed entries, rendered per token and per request.

An entry's URL template may contain ``%(project_id)s`` (or ``$(project_id)s``, and the
``tenant_id`` spellings), filled from the token's project, and ``%(host)s``, filled with
the host name the client used to reach the identity service, so one catalog works from
wherever the sandbox is reached. An endpoint whose template needs a project is left out
of a token without one, as Keystone does.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

REGION = "RegionOne"
INTERFACES = ("public", "internal", "admin")

_PLACEHOLDER = re.compile(r"[%$]\((\w+)\)s")
_ID_NAMESPACE = uuid.UUID("4f0c7a3e-2b7d-4d0e-9a51-6c8f3d2b1e90")


@dataclass(frozen=True)
class CatalogEntry:
    """One service: its type (``orchestration``), name (``heat``) and URL template."""

    type: str
    name: str
    url_template: str


def service_id(entry: CatalogEntry) -> str:
    return uuid.uuid5(_ID_NAMESPACE, f"service:{entry.type}:{entry.name}").hex


def endpoint_id(entry: CatalogEntry, interface: str) -> str:
    return uuid.uuid5(_ID_NAMESPACE, f"endpoint:{entry.type}:{entry.name}:{interface}").hex


def fill_template(template: str, values: Mapping[str, str | None]) -> str | None:
    """Substitute the placeholders; None when one of them has no value."""
    missing = False

    def replace(match: re.Match[str]) -> str:
        nonlocal missing
        value = values.get(match.group(1))
        if value is None:
            missing = True
            return match.group(0)
        return value

    filled = _PLACEHOLDER.sub(replace, template)
    return None if missing else filled


def with_identity(entries: Iterable[CatalogEntry], identity_url: str) -> list[CatalogEntry]:
    """The entries, plus the identity service itself unless one was given."""
    result = list(entries)
    if not any(e.type == "identity" for e in result):
        result.insert(0, CatalogEntry("identity", "keystone", identity_url))
    return result


def render_catalog(
    entries: Iterable[CatalogEntry], *, host: str, project_id: str | None
) -> list[dict[str, Any]]:
    """The token's ``catalog`` list."""
    values = {"project_id": project_id, "tenant_id": project_id, "host": host}
    catalog = []
    for entry in entries:
        url = fill_template(entry.url_template, values)
        if url is None:
            continue
        endpoints = [
            {
                "id": endpoint_id(entry, interface),
                "interface": interface,
                "region": REGION,
                "region_id": REGION,
                "url": url,
            }
            for interface in INTERFACES
        ]
        catalog.append(
            {
                "id": service_id(entry),
                "type": entry.type,
                "name": entry.name,
                "endpoints": endpoints,
            }
        )
    return catalog


def render_services(entries: Iterable[CatalogEntry]) -> list[dict[str, Any]]:
    """``GET /v3/services``."""
    return [
        {"id": service_id(e), "type": e.type, "name": e.name, "enabled": True, "description": ""}
        for e in entries
    ]


def render_endpoints(entries: Iterable[CatalogEntry], *, host: str) -> list[dict[str, Any]]:
    """``GET /v3/endpoints``: the templates with the host filled and the project left as is."""
    result = []
    for entry in entries:
        url = _PLACEHOLDER.sub(
            lambda m: host if m.group(1) == "host" else m.group(0), entry.url_template
        )
        for interface in INTERFACES:
            result.append(
                {
                    "id": endpoint_id(entry, interface),
                    "service_id": service_id(entry),
                    "interface": interface,
                    "region": REGION,
                    "region_id": REGION,
                    "url": url,
                    "enabled": True,
                }
            )
    return result
