"""Helpers of the OS::Nova plugin tests: a plugin's schema as reference-table rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.schema.properties import PropertySchema

NO_DEFAULT = "<none>"

# (type, required, default, update_allowed, constraints) as the reference tables give them
Row = tuple[str, bool, Any, bool, list[dict[str, Any]]]


def allowed(*values: Any) -> dict[str, Any]:
    return {"allowed_values": list(values)}


def custom(name: str) -> dict[str, Any]:
    return {"custom_constraint": name}


def table(schemas: Mapping[str, PropertySchema]) -> dict[str, Row]:
    """Rows keyed like the reference: ``a``, ``a.b`` (map keys), ``a[].b`` (list of maps)."""
    rows: dict[str, Row] = {}
    for name, schema in schemas.items():
        _add(rows, name, schema)
    return rows


def _add(rows: dict[str, Row], path: str, schema: PropertySchema) -> None:
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
        for key, sub in item.key_schemas.items():
            _add(rows, f"{path}[].{key}", sub)
    elif item is not None and item.constraints:
        rows[f"{path}[]"] = (
            item.to_dict()["type"],
            False,
            NO_DEFAULT,
            False,
            [c.to_dict() for c in item.constraints],
        )
    elif schema.key_schemas is not None:
        for key, sub in schema.key_schemas.items():
            _add(rows, f"{path}.{key}", sub)
