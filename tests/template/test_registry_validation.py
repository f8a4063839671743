"""Shape checks of resource_registry sections: hooks, restricted actions, values (6.5)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import (
    EnvironmentParseError,
    InvalidBreakPointHook,
    InvalidRestrictedAction,
    KilnError,
)
from kiln.template.registry import ResourceRegistry
from kiln.template.registry_validation import json_kind, validate_registry


@pytest.mark.parametrize(
    ("data", "error", "path", "message"),
    [
        # E02
        (
            {"resources": {"a": {"hooks": "pre-creat"}}},
            InvalidBreakPointHook,
            ("resource_registry", "resources", "a", "hooks"),
            'Invalid hook type "pre-creat" for resource breakpoint, acceptable hook types are:',
        ),
        (
            {"resources": {"a": {"hooks": ["pre-create", "during-create"]}}},
            InvalidBreakPointHook,
            ("resource_registry", "resources", "a", "hooks"),
            'Invalid hook type "during-create"',
        ),
        (
            {"resources": {"s": {"inner": {"hooks": 5}}}},
            InvalidBreakPointHook,
            ("resource_registry", "resources", "s", "inner", "hooks"),
            'Invalid hook type "5"',
        ),
        (
            {"resources": {"a": {"restricted_actions": "delete"}}},
            InvalidRestrictedAction,
            ("resource_registry", "resources", "a", "restricted_actions"),
            'Invalid restricted_action type "delete"',
        ),
        (
            {"resources": {"a": {"restricted_actions": ["update", "Replace"]}}},
            InvalidRestrictedAction,
            ("resource_registry", "resources", "a", "restricted_actions"),
            'Invalid restricted_action type "Replace"',
        ),
        (
            ["My::T"],
            EnvironmentParseError,
            ("resource_registry",),
            '"resource_registry" must be a map. Found a list instead',
        ),
        (
            {"My::T": 5},
            EnvironmentParseError,
            ("resource_registry", "My::T"),
            "must be a string or null. Found a number instead",
        ),
        (
            {"My::T": {"a": "b"}},
            EnvironmentParseError,
            ("resource_registry", "My::T"),
            "Found a map instead",
        ),
        (
            {"hooks": ["pre-create"]},
            EnvironmentParseError,
            ("resource_registry", "hooks"),
            "Found a list instead",
        ),
        (
            {"resources": ["a"]},
            EnvironmentParseError,
            ("resource_registry", "resources"),
            '"resources" must be a map',
        ),
        (
            {"resources": {"a": "OS::Heat::None"}},
            EnvironmentParseError,
            ("resource_registry", "resources", "a"),
            "A per-resource registry entry must be a map. Found a string instead",
        ),
        (
            {"resources": {"a": {"My::T": ["x"]}}},
            EnvironmentParseError,
            ("resource_registry", "resources", "a", "My::T"),
            "must be a string, a map or null. Found a list instead",
        ),
        (
            {1: "OS::Heat::None"},
            EnvironmentParseError,
            ("resource_registry",),
            "keys must be strings",
        ),
    ],
)
def test_invalid_registry(
    data: Any, error: type[KilnError], path: tuple[str, ...], message: str
) -> None:
    with pytest.raises(error) as info:
        ResourceRegistry(data)
    assert info.value.path == path
    assert message in info.value.message


def test_hook_message_lists_every_valid_hook() -> None:
    with pytest.raises(InvalidBreakPointHook) as info:
        validate_registry({"resources": {"a": {"hooks": "x"}}})
    for hook in ("pre-create", "post-create", "pre-update", "post-update", "pre-delete"):
        assert hook in info.value.message
    assert "post-delete" in info.value.message


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"My::T": None, "resources": None},
        {"resources": {"a": None, "b": {"hooks": None, "My::T": None}}},
        {"resources": {"a": {"hooks": [], "restricted_actions": []}}},
        {
            "A": "a.yaml",
            "resources": {
                "a": {"hooks": "post-delete", "restricted_actions": ["update", "replace"]},
                "*": {"inner": {"deeper": {"hooks": ["pre-create"]}}},
            },
        },
    ],
)
def test_valid_registry(data: dict[str, Any]) -> None:
    assert validate_registry(data) is data


def test_merged_with_validates_too() -> None:
    with pytest.raises(InvalidBreakPointHook):
        ResourceRegistry().merged_with({"resources": {"a": {"hooks": "nope"}}})


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (None, "null"),
        (True, "boolean"),
        (1, "number"),
        (1.5, "number"),
        ("s", "string"),
        ([], "list"),
        ({}, "map"),
    ],
)
def test_json_kind(value: Any, kind: str) -> None:
    assert json_kind(value) == kind
