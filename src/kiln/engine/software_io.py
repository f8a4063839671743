"""Checking a software config's fields as the create request gives them.

Inputs and outputs are lists of maps (heat-api.md 2.8): an input has ``name``
and optionally ``type`` (``String`` when absent), ``description``, ``default``
(which must suit the type), ``replace_on_change`` (kept only when true) and
``value``; an output has ``name``, ``type``, ``description`` and
``error_output`` (false when absent). Every problem is reported at once, each
with its path (``inputs[1].type``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed, raise_all
from kiln.core.paths import PathSegment
from kiln.template.parameter_types import CFN_TYPES, ParameterSchema, convert_value

IO_TYPES = tuple(CFN_TYPES)  # String, Number, CommaDelimitedList, Json, Boolean
INPUT_KEYS = ("name", "type", "description", "default", "replace_on_change", "value")
OUTPUT_KEYS = ("name", "type", "description", "error_output")
MAX_NAME = 255


def check_text(value: Any, what: str, *, limit: int = MAX_NAME, required: bool = False) -> None:
    """A string of at most ``limit`` characters (or None unless ``required``)."""
    if value is None:
        if required:
            raise StackValidationFailed("is required", path=(what,))
        return
    if not isinstance(value, str):
        raise StackValidationFailed("must be a string", path=(what,))
    if len(value) > limit:
        raise StackValidationFailed(f"must be at most {limit} characters", path=(what,))


def config_fields(
    name: Any, group: Any, inputs: Any, outputs: Any, options: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """The stored inputs, outputs and options; raises every problem found."""
    errors: list[KilnError] = []
    for value, what in ((name, "name"), (group, "group")):
        try:
            check_text(value, what)
        except KilnError as err:
            errors.append(err)
    if options is not None and not isinstance(options, Mapping):
        errors.append(StackValidationFailed("must be a map", path=("options",)))
    stored_inputs = _items(inputs, "inputs", _input, errors)
    stored_outputs = _items(outputs, "outputs", _output, errors)
    raise_all(errors)
    return stored_inputs, stored_outputs, dict(options or {})


def _items(raw: Any, section: str, check: Any, errors: list[KilnError]) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(StackValidationFailed("must be a list", path=(section,)))
        return []
    stored = []
    for index, item in enumerate(raw):
        at: tuple[PathSegment, ...] = (section, index)
        if not isinstance(item, Mapping):
            errors.append(StackValidationFailed("must be a map", path=at))
            continue
        stored.append(check(item, at, errors))
    return stored


def _common(
    item: Mapping[str, Any],
    at: tuple[PathSegment, ...],
    allowed: tuple[str, ...],
    errors: list[KilnError],
) -> dict[str, Any]:
    for key in item:
        if key not in allowed:
            errors.append(StackValidationFailed(f"Unknown key {key}", path=(*at, key)))
    name = item.get("name")
    if not isinstance(name, str) or not name:
        errors.append(StackValidationFailed("name is required and must be a string", path=at))
    kind = item.get("type") or "String"
    if kind not in IO_TYPES:
        errors.append(
            StackValidationFailed(
                f'"{kind}" is not an allowed value {list(IO_TYPES)}', path=(*at, "type")
            )
        )
    stored: dict[str, Any] = {"name": name, "type": kind}
    description = item.get("description")
    if description is not None:
        if isinstance(description, str):
            stored["description"] = description
        else:
            errors.append(StackValidationFailed("must be a string", path=(*at, "description")))
    return stored


def _input(
    item: Mapping[str, Any], at: tuple[PathSegment, ...], errors: list[KilnError]
) -> dict[str, Any]:
    stored = _common(item, at, INPUT_KEYS, errors)
    if "default" in item and item["default"] is not None:
        if stored["type"] in IO_TYPES:
            schema = ParameterSchema(str(stored["name"]), CFN_TYPES[stored["type"]])
            try:
                convert_value(schema, item["default"])
            except KilnError as err:
                errors.append(StackValidationFailed(err.message, path=(*at, "default")))
        stored["default"] = item["default"]
    replace = item.get("replace_on_change", False)
    if not isinstance(replace, bool):
        errors.append(StackValidationFailed("must be a boolean", path=(*at, "replace_on_change")))
    elif replace:
        stored["replace_on_change"] = True
    if "value" in item:
        stored["value"] = item["value"]
    return stored


def _output(
    item: Mapping[str, Any], at: tuple[PathSegment, ...], errors: list[KilnError]
) -> dict[str, Any]:
    stored = _common(item, at, OUTPUT_KEYS, errors)
    error_output = item.get("error_output", False)
    if not isinstance(error_output, bool):
        errors.append(StackValidationFailed("must be a boolean", path=(*at, "error_output")))
        error_output = False
    stored["error_output"] = error_output
    return stored
