"""Property and attribute schemas, and coercion of property values against them.

A resource type declares its properties as :class:`PropertySchema` values (type,
description, required, default, constraints, update behaviour, nested schemas)
and its attributes as :class:`AttributeSchema`. :func:`coerce_properties` turns
the resolved ``properties`` map of a resource into typed values, applying
defaults and collecting every error with its path relative to the map, so the
caller can prefix ``("resources", NAME, "properties")``. Types are lenient the
way Heat is: ``"5"`` is an Integer, ``"true"`` a Boolean. Imports: kiln.core, kiln.schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kiln.core.errors import InvalidSchemaError, KilnError, StackValidationFailed
from kiln.core.paths import Path
from kiln.schema.constraints import Constraint, CustomConstraint, first_failure
from kiln.schema.custom import CustomConstraints
from kiln.schema.types import FALSE_STRINGS, NO_DEFAULT, TRUE_STRINGS, is_number

PROPERTY_ERROR = "Property error"


class PropertyType(StrEnum):
    """Heat's property types."""

    STRING = "String"
    INTEGER = "Integer"
    NUMBER = "Number"
    BOOLEAN = "Boolean"
    LIST = "List"
    MAP = "Map"
    ANY = "Any"


SUPPORT_STATUSES = ("UNKNOWN", "SUPPORTED", "DEPRECATED", "UNSUPPORTED", "HIDDEN")


@dataclass(frozen=True)
class SupportStatus:
    """Whether a type, property or attribute is supported, and since which version."""

    status: str = "SUPPORTED"
    version: str | None = None
    message: str | None = None
    previous_status: SupportStatus | None = None

    def __post_init__(self) -> None:
        if self.status not in SUPPORT_STATUSES:
            raise InvalidSchemaError(f"Unknown support status {self.status}")

    def to_dict(self) -> dict[str, Any]:
        previous = self.previous_status.to_dict() if self.previous_status else None
        return {
            "status": self.status,
            "version": self.version,
            "message": self.message,
            "previous_status": previous,
        }


SchemaMap = Mapping[str, "PropertySchema"]


@dataclass(frozen=True)
class PropertySchema:
    """How one property (or one nested key or list item) is declared.

    ``schema`` is the item schema of a List (a mapping there is shorthand for a
    list of maps with those keys) or the key schemas of a Map. ``default`` None
    means no default. ``allow_conversion`` makes a List accept a comma-delimited
    string and a Map accept a string or a list (passed on as JSON text), as the
    properties of template resources do. ``type`` may be given as a string
    (``"String"``); it is stored as a :class:`PropertyType`.
    """

    type: PropertyType | str
    description: str = ""
    required: bool = False
    default: Any = NO_DEFAULT
    constraints: tuple[Constraint, ...] = ()
    update_allowed: bool = False
    immutable: bool = False
    schema: PropertySchema | SchemaMap | None = None
    support_status: SupportStatus = field(default_factory=SupportStatus)
    allow_conversion: bool = False

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "type", PropertyType(self.type))
        except ValueError:
            raise InvalidSchemaError(f"Unknown property type {self.type}") from None
        object.__setattr__(self, "constraints", tuple(self.constraints))
        if self.default is None:
            object.__setattr__(self, "default", NO_DEFAULT)
        if self.schema is not None:
            self._check_nested_schema()
        for constraint in self.constraints:
            message = constraint.applicability_error(self.type)
            if message:
                raise InvalidSchemaError(message)
        if self.has_default:
            _, errors = coerce_value(self, self.default, None)
            if errors:
                raise InvalidSchemaError(f"Invalid default {self.default} ({errors[0].message})")

    def _check_nested_schema(self) -> None:
        if self.type is PropertyType.LIST:
            if isinstance(self.schema, Mapping):
                object.__setattr__(
                    self, "schema", PropertySchema(PropertyType.MAP, schema=self.schema)
                )
        elif self.type is PropertyType.MAP:
            if not isinstance(self.schema, Mapping):
                raise InvalidSchemaError("A Map schema must map keys to property schemas")
        else:
            raise InvalidSchemaError(f"Schema valid only for List or Map, not {self.type}")

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def item_schema(self) -> PropertySchema | None:
        """The schema of each item of a List."""
        return self.schema if isinstance(self.schema, PropertySchema) else None

    @property
    def key_schemas(self) -> SchemaMap | None:
        """The schemas of the keys of a Map."""
        return self.schema if isinstance(self.schema, Mapping) else None

    def to_dict(self) -> dict[str, Any]:
        """Heat's resource-type schema form (heat-api.md section 3.12)."""
        out: dict[str, Any] = {"type": self.type.lower()}
        if self.description:
            out["description"] = self.description
        if self.has_default:
            out["default"] = self.default
        if self.item_schema is not None:
            out["schema"] = {"*": self.item_schema.to_dict()}
        elif self.key_schemas is not None:
            out["schema"] = {k: v.to_dict() for k, v in self.key_schemas.items()}
        out["required"] = self.required
        if self.constraints:
            out["constraints"] = [c.to_dict() for c in self.constraints]
        out["update_allowed"] = self.update_allowed
        out["immutable"] = self.immutable
        return out


@dataclass(frozen=True)
class AttributeSchema:
    """One attribute a resource type exposes to ``get_attr``."""

    description: str = ""
    type: PropertyType | str | None = None
    support_status: SupportStatus = field(default_factory=SupportStatus)

    def __post_init__(self) -> None:
        if self.type is not None:
            try:
                object.__setattr__(self, "type", PropertyType(self.type))
            except ValueError:
                raise InvalidSchemaError(f"Unknown attribute type {self.type}") from None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"description": self.description}
        if self.type is not None:
            out["type"] = self.type.lower()
        return out


# -- coercion ---------------------------------------------------------------------
class _Invalid(Exception):
    """A value that does not convert to the property's type."""


def _to_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(value)
    raise _Invalid(f"Value must be a string; got {value!r}")


def _to_integer(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    raise _Invalid(f"Value '{value}' is not an integer")


def _to_number(value: Any) -> int | float:
    if is_number(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                pass
    raise _Invalid(f"Value '{value}' is not a number")


def _to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str | int) and str(value).strip().lower() in TRUE_STRINGS:
        return True
    if isinstance(value, str | int) and str(value).strip().lower() in FALSE_STRINGS:
        return False
    raise _Invalid(f'"{value}" is not a valid boolean')


def _to_list(schema: PropertySchema, value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    if schema.allow_conversion and isinstance(value, str):
        return value.split(",") if value else []
    raise _Invalid(f'"{value}" is not a list')


def _to_map(schema: PropertySchema, value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if schema.allow_conversion:
        # Template resources pass these on to a json parameter as they are.
        if isinstance(value, str):
            return value
        if isinstance(value, list | tuple):
            return json.dumps(list(value))
    raise _Invalid(f'"{value}" is not a map')


def _convert(schema: PropertySchema, value: Any) -> Any:
    kind = schema.type
    if kind is PropertyType.STRING:
        return _to_string(value)
    if kind is PropertyType.INTEGER:
        return _to_integer(value)
    if kind is PropertyType.NUMBER:
        return _to_number(value)
    if kind is PropertyType.BOOLEAN:
        return _to_boolean(value)
    if kind is PropertyType.LIST:
        return _to_list(schema, value)
    if kind is PropertyType.MAP:
        return _to_map(schema, value)
    return value


class _Coercer:
    """One coercion pass: collects errors instead of stopping at the first."""

    def __init__(self, custom: CustomConstraints | None, category: str | None) -> None:
        self.custom = custom
        self.category = category
        self.errors: list[KilnError] = []

    def fail(self, message: str, path: Path) -> None:
        self.errors.append(StackValidationFailed(message, path=path, category=self.category))

    def value(self, schema: PropertySchema, raw: Any, path: Path) -> Any:
        try:
            typed = _convert(schema, raw)
        except _Invalid as exc:
            self.fail(str(exc), path)
            return None
        item_schema, key_schemas = schema.item_schema, schema.key_schemas
        if item_schema is not None and isinstance(typed, list):
            typed = [self.item(item_schema, v, (*path, i)) for i, v in enumerate(typed)]
        elif key_schemas is not None and isinstance(typed, dict):
            typed = self.mapping(key_schemas, typed, path)
        if schema.type is PropertyType.MAP and not isinstance(typed, dict):
            # JSON text on its way to a nested stack, whose parameter checks it.
            return typed
        message = first_failure(schema.constraints, typed, self.custom, value_type=schema.type)
        if message is not None:
            self.fail(message, path)
        return typed

    def item(self, schema: PropertySchema, raw: Any, path: Path) -> Any:
        if raw is None:
            return self.value(schema, schema.default, path) if schema.has_default else None
        return self.value(schema, raw, path)

    def mapping(self, schemas: SchemaMap, values: Mapping[Any, Any], path: Path) -> dict[str, Any]:
        for key in values:
            if key not in schemas:
                self.fail(f"Unknown Property {key}", path)
        out: dict[str, Any] = {}
        for key, schema in schemas.items():
            raw = values.get(key)
            if raw is None and schema.has_default:
                raw = schema.default
            if raw is None:
                if schema.required:
                    self.fail(f"Property {key} not assigned", path)
                out[key] = None
            else:
                out[key] = self.value(schema, raw, (*path, key))
        return out


def coerce_value(
    schema: PropertySchema,
    value: Any,
    custom: CustomConstraints | None = None,
    *,
    category: str | None = PROPERTY_ERROR,
) -> tuple[Any, list[KilnError]]:
    """One value (not None) in the schema's type, with its errors (paths relative to it)."""
    coercer = _Coercer(custom, category)
    typed = coercer.value(schema, value, ())
    return typed, coercer.errors


def coerce_properties(
    schemas: SchemaMap,
    values: Mapping[str, Any] | None,
    custom: CustomConstraints | None = None,
    *,
    category: str | None = PROPERTY_ERROR,
) -> tuple[dict[str, Any], list[KilnError]]:
    """Typed values for every declared property (None when unset), and every error.

    A None value means "not set": the default applies, or the property is
    reported as not assigned when required. Unknown names are errors. Custom
    constraints are checked only when a registry is given. Error paths are
    relative to the properties map: ``()`` for unknown/missing properties,
    ``("networks", 0, "port")`` for a bad nested value.
    """
    coercer = _Coercer(custom, category)
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        coercer.fail(f'"{values}" is not a map', ())
        values = {}
    typed = coercer.mapping(schemas, values, ())
    return typed, coercer.errors


def custom_constraint_names(schemas: SchemaMap) -> set[str]:
    """Every custom constraint name used by the schemas, nested ones included."""
    names: set[str] = set()
    pending = list(schemas.values())
    while pending:
        schema = pending.pop()
        names.update(c.name for c in schema.constraints if isinstance(c, CustomConstraint))
        if schema.item_schema is not None:
            pending.append(schema.item_schema)
        elif schema.key_schemas is not None:
            pending.extend(schema.key_schemas.values())
    return names
