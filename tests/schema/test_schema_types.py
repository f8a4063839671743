"""Shared value helpers: type kinds, lenient numbers and booleans, NO_DEFAULT."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from kiln.schema.types import NO_DEFAULT, parse_bool, str_to_num, type_kind


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("String", "string"),
        ("string", "string"),
        ("Integer", "integer"),
        ("Number", "number"),
        ("number", "number"),
        ("comma_delimited_list", "list"),
        ("CommaDelimitedList", "list"),
        ("List", "list"),
        ("json", "map"),
        ("Json", "map"),
        ("Map", "map"),
        ("Any", "any"),
        ("Boolean", "boolean"),
        ("STRING", None),
    ],
)
def test_type_kind(name: str, kind: str | None) -> None:
    assert type_kind(name) == kind


@pytest.mark.parametrize(
    ("raw", "value"),
    [(True, True), ("on", True), (" Yes ", True), ("T", True), (1, True), ("1", True),
     (False, False), ("off", False), ("NO", False), (0, False), ("f", False)],
)  # fmt: skip
def test_parse_bool(raw: Any, value: bool) -> None:
    assert parse_bool(raw) is value


def test_parse_bool_message() -> None:
    with pytest.raises(ValueError) as info:
        parse_bool("maybe")
    assert str(info.value) == (
        "Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', "
        "'no', 'off', 'on', 't', 'true', 'y', 'yes'"
    )


@pytest.mark.parametrize(
    ("raw", "value"), [("7", 7), (" 7 ", 7), ("2.5", 2.5), ("1e3", 1000.0), (4, 4), (0.5, 0.5)]
)
def test_str_to_num(raw: Any, value: int | float) -> None:
    result = str_to_num(raw)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "could not convert string to float: 'abc'"),
        (True, "could not convert string to float: 'True'"),
        ([1], "float() argument must be a string or a real number, not 'list'"),
    ],
)
def test_str_to_num_errors(raw: Any, message: str) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        str_to_num(raw)
    assert str(info.value) == message


def test_no_default_is_a_falsy_singleton() -> None:
    assert not NO_DEFAULT
    assert repr(NO_DEFAULT) == "NO_DEFAULT"
    assert copy.deepcopy(NO_DEFAULT) is NO_DEFAULT
    assert pickle.loads(pickle.dumps(NO_DEFAULT)) is NO_DEFAULT
