"""Parameter values: where they come from, checking them, reporting them.

:func:`resolve_parameter_values` picks each parameter's value (user value, else
environment default, else template default; reference 3.2), converts it and
checks it; :func:`validate_document_parameters` builds the ``Parameters`` object
of the template-validate API (heat-api.md 3.7); :func:`check_immutable` compares
old and new values on update (3.5). Imports: kiln.core, kiln.schema, kiln.template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import (
    ImmutableParameterModified,
    KilnError,
    UnknownUserParameter,
    UserParameterMissing,
)
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
from kiln.schema.custom import CustomConstraints
from kiln.template.parameter_types import PSEUDO_PARAMETER_NAMES, ParameterSchema, convert_value


def resolve_parameter_values(
    schemas: Mapping[str, ParameterSchema],
    user_values: Mapping[str, Any],
    env_defaults: Mapping[str, Any],
    *,
    check_values: bool,
    custom: CustomConstraints | None = None,
    allow_missing: bool = False,
) -> tuple[dict[str, Any], list[KilnError]]:
    """Typed values of every parameter that has one, and the errors found.

    Priority: user value, environment default, template default; None counts as
    not given. Names in ``user_values`` the template does not declare are
    errors; unknown names in ``env_defaults`` are ignored (they are meant for
    nested templates). Values that do not convert are always errors. With
    ``check_values``, a parameter without a value is an error and values are
    checked against the constraints (custom ones only when ``custom`` is given;
    template defaults only against custom ones, the rest being checked when the
    declaration is parsed). A value failing a constraint is still returned.
    ``allow_missing`` tolerates parameters without a value even when values are
    checked (offline validation: check what is given, as a later create would).
    """
    errors: list[KilnError] = []
    for name in user_values:
        if name not in schemas:
            errors.append(
                UnknownUserParameter(
                    f"The Parameter ({name}) was not defined in template.",
                    path=("parameters", name),
                )
            )
    values: dict[str, Any] = {}
    for name, schema in schemas.items():
        raw, source = _effective_raw(schema, user_values, env_defaults)
        if source is None:
            if check_values and not allow_missing:
                errors.append(
                    UserParameterMissing(
                        f"The Parameter ({name}) was not provided.", path=schema.path
                    )
                )
            continue
        try:
            typed = convert_value(schema, raw)
        except KilnError as err:
            if source == _TEMPLATE:
                # A default that does not convert is reported at the default itself.
                err.path = (*err.path, _default_key(schema))
            errors.append(err)
            continue
        values[name] = typed
        if check_values:
            constraints = schema.constraints
            if source == _TEMPLATE:
                constraints = tuple(c for c in constraints if isinstance(c, CustomConstraint))
            message = first_failure(constraints, typed, custom, value_type=schema.type)
            if message is not None:
                errors.append(schema.invalid(message))
    return values, errors


_USER, _ENVIRONMENT, _TEMPLATE = "user", "environment", "template"


def _effective_raw(
    schema: ParameterSchema, user_values: Mapping[str, Any], env_defaults: Mapping[str, Any]
) -> tuple[Any, str | None]:
    """The raw value and its source; (None, None) when the parameter has none."""
    value = user_values.get(schema.name)
    if value is not None:
        return value, _USER
    value = env_defaults.get(schema.name)
    if value is not None:
        return value, _ENVIRONMENT
    if schema.has_default:
        return schema.default, _TEMPLATE
    return None, None


def _default_key(schema: ParameterSchema) -> str:
    return "Default" if schema.section == "Parameters" else "default"


def validate_document_parameters(
    schemas: Mapping[str, ParameterSchema],
    user_values: Mapping[str, Any],
    env_defaults: Mapping[str, Any],
) -> dict[str, dict[str, Any]]:
    """The ``Parameters`` object of the template-validate response (CamelCase keys).

    ``Default`` is the environment default when there is one, else the raw
    template default; ``Value`` is the user value as supplied. Pseudo
    parameters are left out.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, schema in schemas.items():
        if name in PSEUDO_PARAMETER_NAMES:
            continue
        info: dict[str, Any] = {
            "Type": schema.cfn_type,
            "Description": schema.description,
            "Label": schema.label if schema.label is not None else name,
            "NoEcho": "true" if schema.hidden else "false",
        }
        env_default = env_defaults.get(name)
        if env_default is not None:
            info["Default"] = env_default
        elif schema.has_default:
            info["Default"] = schema.default
        user_value = user_values.get(name)
        if user_value is not None:
            info["Value"] = user_value
        if schema.tags is not None:
            info["Tags"] = list(schema.tags)
        descriptions: list[str] = []
        for constraint in schema.constraints:
            info.update(_constraint_summary(constraint))
            # CFN's ConstraintDescription is shared by all constraints: show it once.
            if constraint.description and constraint.description not in descriptions:
                descriptions.append(constraint.description)
        if descriptions:
            info["ConstraintDescription"] = " ".join(descriptions)
        out[name] = info
    return out


def _constraint_summary(constraint: Constraint) -> dict[str, Any]:
    pairs: tuple[tuple[str, Any], ...]
    if isinstance(constraint, Length):
        pairs = (("MinLength", constraint.min), ("MaxLength", constraint.max))
    elif isinstance(constraint, Range):
        pairs = (("MinValue", constraint.min), ("MaxValue", constraint.max))
    elif isinstance(constraint, Modulo):
        pairs = (("Step", constraint.step), ("Offset", constraint.offset))
    elif isinstance(constraint, AllowedValues):
        pairs = (("AllowedValues", list(constraint.allowed)),)
    elif isinstance(constraint, AllowedPattern):
        pairs = (("AllowedPattern", constraint.pattern),)
    elif isinstance(constraint, CustomConstraint):
        pairs = (("CustomConstraint", constraint.name),)
    else:
        pairs = ()
    return {key: value for key, value in pairs if value is not None}


def check_immutable(
    old_schemas: Mapping[str, ParameterSchema],
    old_values: Mapping[str, Any],
    new_schemas: Mapping[str, ParameterSchema],
    new_user_values: Mapping[str, Any],
) -> list[KilnError]:
    """ImmutableParameterModified when an update changes an immutable parameter.

    A parameter is compared when the *new* template declares it immutable, the
    old template declares it too, it had an old value, and ``new_user_values``
    gives it a (non-null) value: the user value supplied with the update, or,
    if the caller chooses, the new effective value. Both sides are converted
    with the new schema before comparing, so ``"5"`` equals ``5`` for a number
    (Heat compares raw with typed: quirk 18).
    """
    changed = []
    for name, schema in new_schemas.items():
        if not schema.immutable or name not in old_schemas or name not in old_values:
            continue
        new = new_user_values.get(name)
        if new is None:
            continue
        if _typed(schema, new) != _typed(schema, old_values[name]):
            changed.append(name)
    if not changed:
        return []
    return [
        ImmutableParameterModified(
            "The following parameters are immutable and may not be updated: " + ", ".join(changed)
        )
    ]


def _typed(schema: ParameterSchema, value: Any) -> Any:
    try:
        return convert_value(schema, value)
    except KilnError:
        return value
