"""Checks of a ``resource_registry`` section's shape, hook names and restricted actions.

Every way of building a registry (parsing an environment, merging files, a PATCH
update) runs :func:`validate_registry`; errors carry paths starting at
``resource_registry``. Imports: kiln.core only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import (
    EnvironmentParseError,
    InvalidBreakPointHook,
    InvalidRestrictedAction,
)
from kiln.core.paths import Path

VALID_HOOKS: tuple[str, ...] = (
    "pre-create",
    "post-create",
    "pre-update",
    "post-update",
    "pre-delete",
    "post-delete",
)
VALID_RESTRICTED_ACTIONS: tuple[str, ...] = ("update", "replace")

RESOURCES = "resources"
HOOKS = "hooks"
RESTRICTED_ACTIONS = "restricted_actions"
_SECTION: Path = ("resource_registry",)


def json_kind(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, Mapping):
        return "map"
    return type(value).__name__


def validate_registry(data: Any) -> Mapping[str, Any]:
    """Check the shape of a ``resource_registry`` section; errors carry its path."""
    if not isinstance(data, Mapping):
        raise EnvironmentParseError(
            f'"resource_registry" must be a map. Found a {json_kind(data)} instead',
            path=_SECTION,
        )
    for key, value in data.items():
        path = (*_SECTION, key)
        _check_key(key, _SECTION)
        if key == RESOURCES:
            if value is not None:
                _check_resources_section(value, path)
        elif value is not None and not isinstance(value, str):
            raise EnvironmentParseError(
                f'Invalid resource_registry entry "{key}": the value must be a string or '
                f"null. Found a {json_kind(value)} instead",
                path=path,
            )
    return data


def _check_key(key: Any, path: Path) -> None:
    if not isinstance(key, str):
        raise EnvironmentParseError(
            f"resource_registry keys must be strings. Found a {json_kind(key)} ({key!r})",
            path=path,
        )


def _check_resources_section(section: Any, path: Path) -> None:
    if not isinstance(section, Mapping):
        raise EnvironmentParseError(
            f'"resources" must be a map of resource names to maps. '
            f"Found a {json_kind(section)} instead",
            path=path,
        )
    for name, entry in section.items():
        _check_key(name, path)
        if entry is not None:
            _check_resource_entry(entry, (*path, name))


def _check_resource_entry(entry: Any, path: Path) -> None:
    if not isinstance(entry, Mapping):
        raise EnvironmentParseError(
            f"A per-resource registry entry must be a map. Found a {json_kind(entry)} instead",
            path=path,
        )
    for key, value in entry.items():
        _check_key(key, path)
        here = (*path, key)
        if value is None:
            continue
        if key == HOOKS:
            check_hooks(value, here)
        elif key == RESTRICTED_ACTIONS:
            check_restricted_actions(value, here)
        elif isinstance(value, Mapping):
            _check_resource_entry(value, here)  # an entry for a resource of the nested stack
        elif not isinstance(value, str):
            raise EnvironmentParseError(
                f'Invalid resource_registry entry "{key}": the value must be a string, '
                f"a map or null. Found a {json_kind(value)} instead",
                path=here,
            )


def check_hooks(value: Any, path: Path) -> None:
    """A hook name or a list of them; raises InvalidBreakPointHook."""
    for hook in value if isinstance(value, list) else [value]:
        if not isinstance(hook, str) or hook not in VALID_HOOKS:
            raise InvalidBreakPointHook(
                f'Invalid hook type "{hook}" for resource breakpoint, acceptable hook '
                f"types are: {VALID_HOOKS}",
                path=path,
            )


def check_restricted_actions(value: Any, path: Path) -> None:
    """``update``, ``replace`` or a list of them; raises InvalidRestrictedAction."""
    for action in value if isinstance(value, list) else [value]:
        if not isinstance(action, str) or action not in VALID_RESTRICTED_ACTIONS:
            raise InvalidRestrictedAction(
                f'Invalid restricted_action type "{action}" for resource, acceptable '
                f"restricted_action types are: {VALID_RESTRICTED_ACTIONS}",
                path=path,
            )
