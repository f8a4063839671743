"""Parameter declarations: parsing the ``parameters`` (``Parameters``) section.

:func:`parse_parameter_schemas` reads HOT or CFN declarations into
:class:`ParameterSchema` values and reports every problem it finds (reference
sections 3.1, 3.4 and 1.6), each at the path of the offending part. Values are
dealt with in ``kiln.template.parameter_values`` and conversion in
``kiln.template.parameter_types``; their public names are re-exported here so
callers import one module. Imports: kiln.core, kiln.schema, kiln.template.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kiln.core.errors import InvalidSchemaError, KilnError, StackValidationFailed
from kiln.core.paths import Path
from kiln.schema.constraints import (
    AllowedPattern,
    AllowedValues,
    Constraint,
    CustomConstraint,
    Length,
    Modulo,
    Range,
    first_failure,
)
from kiln.schema.types import NO_DEFAULT, str_to_num
from kiln.template.parameter_types import (
    CFN_TYPES,
    PARAMETER_TYPES,
    PSEUDO_PARAMETER_NAMES,
    ParameterSchema,
    convert_value,
    display_value,
    parameter_property_schema,
    pseudo_parameter_values,
)
from kiln.template.parameter_values import (
    check_immutable,
    resolve_parameter_values,
    validate_document_parameters,
)
from kiln.template.versions import TemplateVersion

__all__ = [
    "NO_DEFAULT",
    "PSEUDO_PARAMETER_NAMES",
    "ParameterSchema",
    "check_immutable",
    "convert_value",
    "display_value",
    "parameter_property_schema",
    "parse_parameter_schemas",
    "pseudo_parameter_values",
    "resolve_parameter_values",
    "validate_document_parameters",
]

# When a constraint map holds several keys, Heat used the first in this order.
_HOT_CONSTRAINT_KEYS = (
    "modulo",
    "range",
    "length",
    "allowed_values",
    "allowed_pattern",
    "custom_constraint",
)
_HOT_CONSTRAINT_MAP_KEYS = (*_HOT_CONSTRAINT_KEYS, "description")


def parse_parameter_schemas(
    section: Any, version: TemplateVersion
) -> tuple[dict[str, ParameterSchema], list[KilnError]]:
    """Every parameter declared in ``section``, and every error in the declarations.

    A parameter whose declaration is unusable (not a map, no valid type) is
    left out of the result; one with a bad constraint keeps its other constraints.
    """
    key = "Parameters" if version.is_cfn else "parameters"
    if section is None:
        return {}, []
    if not isinstance(section, Mapping):
        found = type(section).__name__
        message = f'"{key}" must contain a map of parameter maps. Found a [{found}] instead'
        return {}, [StackValidationFailed(message, path=(key,))]
    schemas: dict[str, ParameterSchema] = {}
    errors: list[KilnError] = []
    for raw_name, declaration in section.items():
        parser = _Declaration(str(raw_name), declaration, version, (key, raw_name))
        schema = parser.parse()
        errors.extend(parser.errors)
        if schema is not None:
            schemas[schema.name] = schema
    return schemas, errors


class _Declaration:
    """Parses one parameter declaration, collecting its errors."""

    def __init__(self, name: str, raw: Any, version: TemplateVersion, path: Path) -> None:
        self.name = name
        self.raw = raw
        self.version = version
        self.path = path
        self.errors: list[KilnError] = []

    def fail(self, message: str, *subpath: Any) -> None:
        self.errors.append(InvalidSchemaError(message, path=(*self.path, *subpath)))

    def parse(self) -> ParameterSchema | None:
        raw = self.raw
        if not isinstance(raw, Mapping):
            self.fail(f"Invalid parameter ({self.name}), expected a mapping")
            return None
        allowed = self.version.parameter_keys
        for k in raw:
            if k not in allowed:
                self.fail(f"Invalid key '{k}' for parameter ({self.name})", k)
        type_key = "Type" if self.version.is_cfn else "type"
        declared_type = raw.get(type_key)
        type_name = self._type(declared_type, type_key)
        if self.version.is_cfn:
            constraints = self._cfn_constraints(raw)
            fields = self._cfn_fields(raw)
        else:
            constraints = self._hot_constraints(raw.get("constraints"))
            fields = self._hot_fields(raw)
        if type_name is None:
            return None
        constraints = self._applicable(constraints, str(declared_type))
        schema = ParameterSchema(
            name=self.name,
            type=type_name,
            constraints=tuple(c for c, _ in constraints),
            section=str(self.path[0]),
            **fields,
        )
        self._check_default(schema)
        return schema

    # -- common parts ---------------------------------------------------------
    def _type(self, declared: Any, type_key: str) -> str | None:
        if declared is None:
            self.fail(f"Missing parameter type for parameter: {self.name}")
            return None
        names = CFN_TYPES if self.version.is_cfn else {t: t for t in PARAMETER_TYPES}
        if not isinstance(declared, str) or declared not in names:
            self.fail(f"Invalid type ({declared})", type_key)
            return None
        return names[declared]

    def _applicable(
        self, constraints: list[tuple[Constraint, Path]], declared_type: str
    ) -> list[tuple[Constraint, Path]]:
        kept = []
        for constraint, where in constraints:
            message = constraint.applicability_error(declared_type)
            if message is None:
                kept.append((constraint, where))
            else:
                self.fail(f"Parameter '{self.name}' is invalid: {message}", *where)
        return kept

    def _check_default(self, schema: ParameterSchema) -> None:
        # A default that does not convert is reported when it is used (as Heat does).
        if not schema.has_default:
            return
        try:
            typed = convert_value(schema, schema.default)
        except KilnError:
            return
        message = first_failure(schema.constraints, typed, value_type=schema.type, skip_custom=True)
        if message is not None:
            default_key = "Default" if self.version.is_cfn else "default"
            self.fail(
                f"Parameter '{self.name}' is invalid: Invalid default {schema.default} ({message})",
                default_key,
            )

    def _flag(self, raw: Mapping[Any, Any], key: str) -> bool:
        value = raw.get(key, False)
        if value is None or isinstance(value, bool):
            return bool(value)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        self.fail(
            f"Invalid {key} value ({value}) for parameter ({self.name}), expected a boolean", key
        )
        return False

    def _number(self, raw: Any, message: str, *subpath: Any) -> Any:
        """Heat's reading of numeric bounds: numeric strings count as numbers."""
        if raw is None or isinstance(raw, bool):
            return raw
        try:
            return str_to_num(raw)
        except (TypeError, ValueError):
            self.fail(message, *subpath)
            return _BAD

    def _build(
        self, factory: Callable[..., Constraint], where: Path, *args: Any, **kwargs: Any
    ) -> Constraint | None:
        if any(a is _BAD for a in args):
            return None
        try:
            return factory(*args, **kwargs)
        except InvalidSchemaError as exc:
            self.fail(exc.message, *where)
            return None

    # -- HOT --------------------------------------------------------------------
    def _hot_fields(self, raw: Mapping[Any, Any]) -> dict[str, Any]:
        # Before 2018-03-02 ``tags`` is an invalid key, already reported.
        tags = raw.get("tags") if "tags" in self.version.parameter_keys else None
        if tags is not None and not isinstance(tags, list):
            self.fail(f"Tags property should be a list for parameter: {self.name}", "tags")
            tags = None
        return {
            "label": _text_or_none(raw.get("label")),
            "description": _text_or_none(raw.get("description")) or "",
            "default": _default(raw.get("default", NO_DEFAULT)),
            "hidden": self._flag(raw, "hidden"),
            "immutable": self._flag(raw, "immutable"),
            "tags": None if tags is None else tuple(str(t) for t in tags),
        }

    def _hot_constraints(self, raw: Any) -> list[tuple[Constraint, Path]]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.fail(
                f"Invalid parameter constraints for parameter {self.name}, expected a list",
                "constraints",
            )
            return []
        out = []
        for index, item in enumerate(raw):
            where: Path = ("constraints", index)
            constraint = self._hot_constraint(item, where)
            if constraint is not None:
                out.append((constraint, where))
        return out

    def _hot_constraint(self, item: Any, where: Path) -> Constraint | None:
        if not isinstance(item, Mapping):
            self.fail("Invalid parameter constraints, expected a mapping", *where)
            return None
        bad = [k for k in item if k not in _HOT_CONSTRAINT_MAP_KEYS]
        for k in bad:
            self.fail(f"Invalid key '{k}' for parameter constraints", *where, k)
        if bad:
            return None
        # Before 2017-02-24 ``modulo`` is an accepted key that expresses nothing.
        present = [
            k
            for k in _HOT_CONSTRAINT_KEYS
            if k in item and (k != "modulo" or self.version.has_modulo)
        ]
        if not present:
            self.fail("No constraint expressed", *where)
            return None
        if len(present) > 1:
            # Heat silently uses the first one (quirk 17); we reject.
            self.fail(
                "Only one constraint may be expressed in a constraint map, found: "
                + ", ".join(present),
                *where,
            )
            return None
        key = present[0]
        description = _text_or_none(item.get("description"))
        return self._hot_constraint_of(key, item[key], (*where, key), description)

    def _hot_constraint_of(
        self, key: str, arg: Any, where: Path, description: str | None
    ) -> Constraint | None:
        if key in ("range", "length", "modulo"):
            factory, names, message = _BOUNDED[key]
            if not isinstance(arg, Mapping):
                self.fail(f"Invalid {key} constraint, expected a mapping", *where)
                return None
            bad = [k for k in arg if k not in names]
            for k in bad:
                self.fail(f"Invalid key '{k}' for {key} constraint", *where, k)
            if bad:
                return None
            bounds = [self._number(arg.get(n), message, *where, n) for n in names]
            return self._build(factory, where, *bounds, description=description)
        factories: dict[str, Callable[..., Constraint]] = {
            "allowed_values": AllowedValues,
            "allowed_pattern": AllowedPattern,
            "custom_constraint": CustomConstraint,
        }
        return self._build(factories[key], where, arg, description=description)

    # -- CFN --------------------------------------------------------------------
    def _cfn_fields(self, raw: Mapping[Any, Any]) -> dict[str, Any]:
        return {
            "label": _text_or_none(raw.get("Label")),
            "description": _text_or_none(raw.get("Description")) or "",
            "default": _default(raw.get("Default", NO_DEFAULT)),
            "hidden": str(raw.get("NoEcho", "false")).lower() == "true",
        }

    def _cfn_constraints(self, raw: Mapping[Any, Any]) -> list[tuple[Constraint, Path]]:
        # ConstraintDescription is the message of every constraint.
        description = _text_or_none(raw.get("ConstraintDescription"))
        out: list[tuple[Constraint, Path]] = []
        for low, high, factory, message in (
            ("MinValue", "MaxValue", Range, "min/max must be numeric"),
            ("MinLength", "MaxLength", Length, "min/max length must be integral"),
        ):
            if low in raw or high in raw:
                where: Path = (low if low in raw else high,)
                bounds = [self._number(raw.get(k), message, k) for k in (low, high)]
                constraint = self._build(factory, where, *bounds, description=description)
                if constraint is not None:
                    out.append((constraint, where))
        for key, single in (("AllowedValues", AllowedValues), ("AllowedPattern", AllowedPattern)):
            if key in raw:
                constraint = self._build(single, (key,), raw[key], description=description)
                if constraint is not None:
                    out.append((constraint, (key,)))
        return out


class _Bad:
    """A bound that failed to parse (already reported)."""


_BAD = _Bad()

_BOUNDED: dict[str, tuple[Callable[..., Constraint], tuple[str, str], str]] = {
    "range": (Range, ("min", "max"), "min/max must be numeric"),
    "length": (Length, ("min", "max"), "min/max length must be integral"),
    "modulo": (Modulo, ("step", "offset"), "step/offset must be integer"),
}


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _default(value: Any) -> Any:
    # A null default means "no default".
    return NO_DEFAULT if value is None else value
