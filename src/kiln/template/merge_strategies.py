"""Parameter merge strategies of environment files: ``overwrite``, ``merge``, ``deep_merge``.

:func:`choose_strategy` picks the strategy a file applies to one parameter;
:func:`merge_value` combines an earlier value with a later one according to the
parameter's type (strings concatenate, comma-delimited lists extend, json maps
update shallowly or recursively; booleans and numbers cannot be merged).
Imports: kiln.core, kiln.template.loader (its nesting bound).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kiln.core.errors import InvalidMergeStrategyForParam, StackValidationFailed
from kiln.core.paths import Path
from kiln.template.loader import MAX_DEPTH, depth_ok

OVERWRITE = "overwrite"
MERGE = "merge"
DEEP_MERGE = "deep_merge"
STRATEGIES: tuple[str, ...] = (OVERWRITE, MERGE, DEEP_MERGE)
DEFAULT_KEY = "default"

# HOT type names, and the CFN spellings for templates of that format.
_TYPES = {
    "string": "string",
    "number": "number",
    "comma_delimited_list": "comma_delimited_list",
    "json": "json",
    "boolean": "boolean",
    "String": "string",
    "Number": "number",
    "CommaDelimitedList": "comma_delimited_list",
    "Json": "json",
    "Boolean": "boolean",
}


def choose_strategy(strategies: Mapping[str, str], param: str, recorded: str | None) -> str:
    """The strategy a file uses for ``param``.

    The file's entry for the name, else the one recorded by an earlier file, else
    the file's ``default``, else overwrite; an unrecognised name falls back to the
    file's default (itself overwrite when unrecognised).
    """
    default = strategies.get(DEFAULT_KEY, OVERWRITE)
    if default not in STRATEGIES:
        default = OVERWRITE
    if param in strategies:
        chosen = strategies[param]
    elif recorded is not None:
        chosen = recorded
    else:
        chosen = default
    return chosen if chosen in STRATEGIES else default


def merge_value(strategy: str, param_type: str, old: Any, new: Any, param: str, path: Path) -> Any:
    """Combine an earlier value with a later one by a merge or deep_merge strategy."""
    kind = _TYPES.get(param_type)
    if kind == "string":
        return _text(old) + _text(new)
    if kind == "comma_delimited_list":
        if isinstance(old, str) and isinstance(new, str):
            return f"{old},{new}" if old else new
        return _as_list(old) + _as_list(new)
    if kind == "json":
        old_data, new_data = _as_json(old, param, path), _as_json(new, param, path)
        if isinstance(old_data, dict) and isinstance(new_data, dict):
            if strategy == DEEP_MERGE:
                return _deep_merge(old_data, new_data)
            return {**old_data, **new_data}
        if isinstance(old_data, list) and isinstance(new_data, list):
            return old_data + new_data
        return new_data  # different shapes: nothing to combine, the later value wins
    # boolean, number (Rec of quirk 23: numbers are rejected, not added) and unknown types
    raise InvalidMergeStrategyForParam(
        f"Invalid merge strategy '{strategy}' for parameter '{param}'.", path=path
    )


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return value.split(",") if value else []
    return [value]


def _as_json(value: Any, param: str, path: Path) -> Any:
    # A json parameter's value may be given as JSON text.
    if not isinstance(value, str):
        return value
    try:
        loaded = json.loads(value)
    except ValueError as exc:
        raise StackValidationFailed(
            f"Value of json parameter '{param}' is not valid JSON: {exc}", path=path
        ) from None
    except RecursionError:
        loaded = _TOO_DEEP
    if loaded is _TOO_DEEP or not depth_ok(loaded):
        # The loader's bound: merging (recursive) and later steps never see deeper data.
        raise StackValidationFailed(
            f"Value of json parameter '{param}' is not valid JSON: nesting depth exceeds "
            f"maximum allowed depth ({MAX_DEPTH})",
            path=path,
        )
    return loaded


_TOO_DEEP = object()


def _deep_merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Nested maps merge, nested lists and strings concatenate, anything else is replaced."""
    result = dict(old)
    for key, value in new.items():
        before: Any = result.get(key)
        if isinstance(before, dict) and isinstance(value, dict):
            result[key] = _deep_merge(before, value)
        elif type(before) in (list, str) and type(value) is type(before):
            result[key] = before + value  # lists extend, strings concatenate
        else:
            result[key] = value
    return result
