"""Property-schema rows as the reference tables show them, for plugin schema tests.

``schema_rows`` flattens a plugin's property schemas into the reference's paths
(``a``, ``a.b`` for map keys, ``a[].b`` for keys of list items, ``a[]`` for scalar
items) with (type, required, default, update_allowed, constraints); ``allowed``,
``in_range`` and ``custom`` spell constraints the way ``PropertySchema.to_dict`` does.
Imports: anything (test support).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.plugin import Resource

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
