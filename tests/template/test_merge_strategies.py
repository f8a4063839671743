"""Choosing and applying parameter merge strategies (6.3)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import InvalidMergeStrategyForParam, StackValidationFailed
from kiln.template.merge_strategies import choose_strategy, merge_value


@pytest.mark.parametrize(
    ("strategies", "recorded", "expected"),
    [
        ({}, None, "overwrite"),
        ({"default": "merge"}, None, "merge"),
        ({"default": "merge", "p": "deep_merge"}, None, "deep_merge"),
        ({"default": "merge", "p": "unknown"}, None, "merge"),
        ({"p": "unknown"}, None, "overwrite"),
        ({"default": "unknown"}, None, "overwrite"),
        # the recorded strategy beats the file's default, not the file's explicit entry
        ({}, "merge", "merge"),
        ({"default": "overwrite"}, "deep_merge", "deep_merge"),
        ({"p": "overwrite"}, "merge", "overwrite"),
        ({"default": "deep_merge", "p": "bogus"}, "merge", "deep_merge"),
    ],
)
def test_choose_strategy(strategies: dict[str, str], recorded: str | None, expected: str) -> None:
    assert choose_strategy(strategies, "p", recorded) == expected


@pytest.mark.parametrize(
    ("strategy", "ptype", "old", "new", "expected"),
    [
        ("merge", "string", "a", "b", "ab"),
        ("merge", "string", "a", 5, "a5"),
        ("merge", "comma_delimited_list", "a", "b", "a,b"),
        ("merge", "comma_delimited_list", ["a"], "b,c", ["a", "b", "c"]),
        ("merge", "json", {"a": {"x": 1}}, {"a": {"y": 2}}, {"a": {"y": 2}}),
        ("deep_merge", "json", {"a": {"x": 1}}, {"a": {"y": 2}}, {"a": {"x": 1, "y": 2}}),
        ("deep_merge", "json", {"a": [1], "b": "s"}, {"a": [2], "b": 3}, {"a": [1, 2], "b": 3}),
        ("merge", "json", '{"a": 1}', '{"b": 2}', {"a": 1, "b": 2}),
        ("merge", "Json", {"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
    ],
)
def test_merge_value(strategy: str, ptype: str, old: Any, new: Any, expected: Any) -> None:
    assert merge_value(strategy, ptype, old, new, "p", ("parameters", "p")) == expected


def test_merge_value_does_not_mutate_its_inputs() -> None:
    old = {"a": {"l": [1]}}
    merge_value("deep_merge", "json", old, {"a": {"l": [2]}}, "p", ())
    assert old == {"a": {"l": [1]}}


@pytest.mark.parametrize("ptype", ["boolean", "number", "Boolean", "Number", "mystery"])
def test_types_that_cannot_be_merged(ptype: str) -> None:
    with pytest.raises(InvalidMergeStrategyForParam) as info:
        merge_value("deep_merge", ptype, 1, 2, "p", ("parameter_defaults", "p"))
    assert info.value.message == "Invalid merge strategy 'deep_merge' for parameter 'p'."
    assert info.value.path == ("parameter_defaults", "p")


@pytest.mark.parametrize("depth", [500, 5000])
def test_too_deep_json_text_is_a_validation_error(depth: int) -> None:
    # Evaluator fuzz finding: json.loads raised RecursionError (5000), and merging
    # recursed into what it loaded (500).
    deep = "[" * depth + "]" * depth
    with pytest.raises(StackValidationFailed) as info:
        merge_value("deep_merge", "json", '{"a": 1}', deep, "p", ("parameters", "p"))
    assert info.value.message == (
        "Value of json parameter 'p' is not valid JSON: nesting depth exceeds maximum "
        "allowed depth (100)"
    )
    assert info.value.path == ("parameters", "p")
