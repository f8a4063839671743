"""Helpers of the OS::Heat plugin tests: a plugin's schema as reference-table rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.plugin import Resource
from kiln.schema.properties import PropertySchema

NO_DEFAULT = "<none>"

# (type, required, default, update_allowed, constraints) as the reference tables give them
Row = tuple[str, bool, Any, bool, list[dict[str, Any]]]


def allowed(*values: Any) -> dict[str, Any]:
    return {"allowed_values": list(values)}


def in_range(low: int | None, high: int | None) -> dict[str, Any]:
    return {"range": {k: v for k, v in (("min", low), ("max", high)) if v is not None}}


def custom(name: str) -> dict[str, Any]:
    return {"custom_constraint": name}


# The inputs and outputs of OS::Heat::SoftwareConfig and OS::Heat::StructuredConfig.
_IO_TYPES = allowed("String", "Number", "CommaDelimitedList", "Json", "Boolean")
IO_ROWS = {
    "inputs": ("list", False, NO_DEFAULT, False, []),
    "inputs[].name": ("string", True, NO_DEFAULT, False, []),
    "inputs[].description": ("string", False, NO_DEFAULT, False, []),
    "inputs[].type": ("string", False, "String", False, [_IO_TYPES]),
    "inputs[].default": ("any", False, NO_DEFAULT, False, []),
    "inputs[].replace_on_change": ("boolean", False, False, False, []),
    "outputs": ("list", False, NO_DEFAULT, False, []),
    "outputs[].name": ("string", True, NO_DEFAULT, False, []),
    "outputs[].description": ("string", False, NO_DEFAULT, False, []),
    "outputs[].type": ("string", False, "String", False, [_IO_TYPES]),
    "outputs[].error_output": ("boolean", False, False, False, []),
}


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
    elif schema.key_schemas is not None:
        for key, sub in schema.key_schemas.items():
            _add(rows, f"{path}.{key}", sub)


def undocumented(plugin: type[Resource]) -> list[str]:
    """Properties (nested ones too) and attributes without a description."""
    missing = [f"attribute {n}" for n, a in plugin.attributes_schema.items() if not a.description]
    pending = [(n, s) for n, s in plugin.properties_schema.items()]
    while pending:
        name, schema = pending.pop()
        if not schema.description:
            missing.append(f"property {name}")
        nested = schema.item_schema.key_schemas if schema.item_schema else schema.key_schemas
        pending.extend((f"{name}.{k}", s) for k, s in (nested or {}).items())
    return missing
