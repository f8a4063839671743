"""Schema helpers of the OS::Neutron::* plugin tests: a schema as reference-table rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.schema.properties import PropertySchema

NO_DEFAULT = "<none>"

# (type, required, default, update_allowed, constraints) as the reference tables give them
Row = tuple[str, bool, Any, bool, list[dict[str, Any]]]


def custom(name: str) -> list[dict[str, Any]]:
    return [{"custom_constraint": name}]


def allowed(*values: Any) -> list[dict[str, Any]]:
    return [{"allowed_values": list(values)}]


def in_range(low: int | None, high: int | None) -> list[dict[str, Any]]:
    return [{"range": {k: v for k, v in (("min", low), ("max", high)) if v is not None}}]


def rows(schemas: Mapping[str, PropertySchema]) -> dict[str, Row]:
    """Rows keyed like the reference: ``a``, ``a.b`` (map keys), ``a[].b`` (list items)."""
    found: dict[str, Row] = {}
    pending = list(schemas.items())
    while pending:
        path, schema = pending.pop(0)
        shown = schema.to_dict()
        found[path] = (
            shown["type"],
            shown["required"],
            shown.get("default", NO_DEFAULT),
            shown["update_allowed"],
            shown.get("constraints", []),
        )
        item = schema.item_schema
        if item is not None and item.key_schemas is not None:
            pending += [(f"{path}[].{k}", s) for k, s in item.key_schemas.items()]
        elif schema.key_schemas is not None:
            pending += [(f"{path}.{k}", s) for k, s in schema.key_schemas.items()]
    return found
