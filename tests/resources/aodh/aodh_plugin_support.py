"""Shared setup of the OS::Aodh::Alarm tests: a sandbox cloud with Aodh, and schema rows.

:func:`alarm_world` builds the in-process sandbox's alarming model and an adapter for one
project; :func:`alarm_resource` gives an Alarm plugin on a FakeContext using it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.alarming.adapter import AlarmingAdapter
from kiln.cloud.sandbox.alarming.model import AlarmingModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.plugin import Resource
from kiln.resources.aodh.alarm import Alarm
from kiln.testing.plugin_context import FakeContext

PROJECT = "aodh-tests"


def alarm_world() -> tuple[SandboxCloud, AlarmingAdapter]:
    """A sandbox with the alarming service, and its client for :data:`PROJECT`."""
    cloud = SandboxCloud()
    cloud.add("alarming", AlarmingModel(cloud))
    cloud.alarming.seed()
    return cloud, AlarmingAdapter(cloud.alarming, CloudScope(project_id=PROJECT))


def alarm_resource(
    client: AlarmingAdapter, properties: Mapping[str, Any], name: str = "alarm"
) -> tuple[Alarm, FakeContext]:
    ctx = FakeContext.for_plugin(
        Alarm, properties, name=name, project_id=PROJECT, clients={"alarming": client}
    )
    return Alarm(ctx), ctx


# -- schema rows as the reference tables give them -------------------------------------------
NO_DEFAULT = "<none>"
Row = tuple[str, bool, Any, bool, list[dict[str, Any]]]


def allowed(*values: Any) -> dict[str, Any]:
    return {"allowed_values": list(values)}


def in_range(low: int | None, high: int | None) -> dict[str, Any]:
    return {"range": {k: v for k, v in (("min", low), ("max", high)) if v is not None}}


def custom(name: str) -> dict[str, Any]:
    return {"custom_constraint": name}


def schema_rows(schemas: Mapping[str, Any]) -> dict[str, Row]:
    """(type, required, default, update_allowed, constraints) by reference path.

    ``a.b`` is key ``b`` of map ``a``, ``a[].b`` key ``b`` of each item of list ``a``,
    ``a[]`` the items of a list of scalars.
    """
    rows: dict[str, Row] = {}
    pending = list(schemas.items())
    while pending:
        path, schema = pending.pop(0)
        described = schema.to_dict()
        rows[path] = (
            described["type"],
            described["required"],
            described.get("default", NO_DEFAULT),
            described["update_allowed"],
            described.get("constraints", []),
        )
        item = schema.item_schema
        if item is not None and item.key_schemas is not None:
            pending += [(f"{path}[].{k}", s) for k, s in item.key_schemas.items()]
        elif item is not None:
            pending.append((f"{path}[]", item))
        elif schema.key_schemas is not None:
            pending += [(f"{path}.{k}", s) for k, s in schema.key_schemas.items()]
    return rows


def undocumented(plugin: type[Resource]) -> list[str]:
    """Properties (nested too) and attributes without a description."""
    missing = [f"attribute {n}" for n, a in plugin.attributes_schema.items() if not a.description]
    pending = list(plugin.properties_schema.items())
    while pending:
        name, schema = pending.pop()
        if not schema.description:
            missing.append(f"property {name}")
        item = schema.item_schema
        if item is not None and item.key_schemas is None:  # a list of scalars
            pending.append((f"{name}[]", item))
        nested = item.key_schemas if item is not None else schema.key_schemas
        pending.extend((f"{name}.{k}", s) for k, s in (nested or {}).items())
    return missing
