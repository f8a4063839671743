"""Tests of str_split/Fn::Split, digest and Fn::Base64 (reference 2.7, 2.9, 2.21)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from fn_strings_support import PATH, ev, fails, parse, parse_fails

from kiln.core.errors import StackValidationFailed
from kiln.template.functions.strings import digest_algorithms
from kiln.template.versions import AWS_KEY

# -- str_split ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([",", "a,b,,c"], ["a", "b", "", "c"]),
        ([",", "a,b,c", "2"], "c"),
        ([",", "a,b,c", 0], "a"),
        ([",", "a,b,c", -1], "c"),
        ([",", "a,b,c", "-3"], "a"),
        ([",", "a,b,c", 1.0], "b"),
        ([", ", "a, b,c"], ["a", "b,c"]),
        ([",", ""], [""]),
        ([",", "abc"], ["abc"]),
        ([",", ",a,"], ["", "a", ""]),
        ([None, "  a  b\tc\n"], ["a", "b", "c"]),
        ([None, "a b", 1], "b"),
        ([",", None], None),
        ([",", None, 5], None),
        ([",", {"not_yet": "r"}], None),
        ([{"echo": "-"}, {"echo": "x-y"}, {"echo": 1}], "y"),
    ],
)
def test_str_split(args: list[Any], expected: Any) -> None:
    assert ev({"str_split": args}) == expected


def test_str_split_argument_may_be_computed() -> None:
    assert ev({"str_split": {"echo": [":", "a:b"]}}) == ["a", "b"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([","], 'Incorrect arguments to "str_split" should be:'),
        ([], 'Incorrect arguments to "str_split" should be:'),
        ([",", "a", 0, "extra"], 'Incorrect arguments to "str_split" should be:'),
        ({"echo": "a,b"}, 'Incorrect arguments to "str_split" should be:'),
        (None, 'Incorrect arguments to "str_split" should be:'),
        ([",", "a,b,c", 3], 'Incorrect index to "str_split" should be between 0 and 2'),
        ([",", "a,b,c", -4], 'Incorrect index to "str_split" should be between 0 and 2'),
        ([",", "a,b,c", "x"], 'Incorrect index to "str_split" should be:'),
        ([",", "a,b,c", "1.5"], 'Incorrect index to "str_split" should be:'),
        ([",", "a,b,c", 1.5], 'Incorrect index to "str_split" should be:'),
        ([",", "a,b,c", True], 'Incorrect index to "str_split" should be:'),
        ([",", "a,b,c", None], 'Incorrect index to "str_split" should be:'),
        ([",", "a,b,c", [1]], 'Incorrect index to "str_split" should be:'),
        (["", "abc"], "empty separator"),
        ([1, "a1b"], '"str_split" delimiter must be a string'),
        # Appendix B #6: a clear type error instead of a crash
        ([",", 12], '"str_split" can only split a string, not int'),
        ([",", ["a", "b"]], '"str_split" can only split a string, not list'),
    ],
)
def test_str_split_resolve_errors(args: Any, message: str) -> None:
    parse({"str_split": args})  # nothing here is rejected while parsing
    err = fails({"str_split": args}, message)
    assert err.path == (*PATH, "str_split")


@pytest.mark.parametrize("args", ["a,b", {"delim": ","}])
def test_str_split_string_or_map_argument_rejected_at_parse(args: Any) -> None:
    parse_fails({"str_split": args}, 'Incorrect arguments to "str_split" should be:')


def test_fn_split() -> None:
    assert ev({"Fn::Split": [",", "a,b"]}, "2013-05-23") == ["a", "b"]
    assert ev({"Fn::Split": [";", {"echo": "x;;y"}]}, "2010-09-09", AWS_KEY) == ["x", "", "y"]
    assert ev({"Fn::Split": [",", {"not_yet": "r"}]}, "2013-05-23") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("a,b", 'Incorrect arguments to "Fn::Split" should be:'),
        ([","], 'Incorrect arguments to "Fn::Split" should be:'),
        ([",", "a", "b"], 'Incorrect arguments to "Fn::Split" should be:'),
        ({"echo": [",", "a,b"]}, 'Incorrect arguments to "Fn::Split" should be:'),
        ([{"echo": ","}, "a,b"], 'Delimiter for "Fn::Split" must be a literal string'),
        ([None, "a b"], 'Delimiter for "Fn::Split" must be a literal string'),
        (["", "ab"], "empty separator"),
    ],
)
def test_fn_split_shape_errors_at_parse(args: Any, message: str) -> None:
    parse_fails({"Fn::Split": args}, message, "2013-05-23")


def test_fn_split_of_a_non_string() -> None:
    fails({"Fn::Split": [",", {"echo": 5}]}, '"Fn::Split" can only split a string', "2013-05-23")


# -- digest ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["md5", "hello"], "5d41402abc4b2a76b9719d911017c592"),
        (["SHA256", "abc"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (["Sha1", ""], "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ([{"echo": "md5"}, {"echo": "hello"}], "5d41402abc4b2a76b9719d911017c592"),
    ],
)
def test_digest(args: list[Any], expected: str) -> None:
    assert ev({"digest": args}) == expected


FIXED_LENGTH_GUARANTEED = sorted(
    name for name in hashlib.algorithms_guaranteed if not name.startswith("shake_")
)


@pytest.mark.parametrize("algorithm", FIXED_LENGTH_GUARANTEED)
def test_digest_every_guaranteed_algorithm(algorithm: str) -> None:
    expected = hashlib.new(algorithm, b"kiln \xe9").hexdigest()
    assert ev({"digest": [algorithm, "kiln é"]}) == expected
    assert ev({"digest": [algorithm.upper(), "kiln é"]}) == expected
    assert algorithm in digest_algorithms()


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("café", "café".encode("latin-1")),  # Latin-1 text: Heat's bytes, unchanged
        ("\xff\x00", b"\xff\x00"),
        ("€", "€".encode()),  # Appendix B #8: UTF-8 instead of a crash
        ("é€", "é€".encode()),  # the whole value, not character by character
    ],
)
def test_digest_encoding(value: str, encoded: bytes) -> None:
    assert ev({"digest": ["sha256", value]}) == hashlib.sha256(encoded).hexdigest()


def test_digest_latin_1_result_differs_from_utf_8() -> None:
    assert ev({"digest": ["md5", "é"]}) == hashlib.md5(b"\xe9").hexdigest()
    assert ev({"digest": ["md5", "é"]}) != hashlib.md5("é".encode()).hexdigest()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["md5", 5], 'Argument to function "digest" must be a list of strings'),
        (["md5", None], 'Argument to function "digest" must be a list of strings'),
        (["md5", {"not_yet": "r"}], 'Argument to function "digest" must be a list of strings'),
        ("md5", 'Argument to function "digest" must be a list of strings'),
        ({"echo": {"a": "b"}}, 'Argument to function "digest" must be a list of strings'),
        (["md5"], 'Function "digest" usage: ["<algorithm>", "<value>"]'),
        (["md5", "a", "b"], 'Function "digest" usage: ["<algorithm>", "<value>"]'),
        (["crc32", "x"], "Algorithm must be one of {"),
        # variable-length hashes need a length the function has no way to take
        (["shake_128", "x"], "Algorithm must be one of {"),
    ],
)
def test_digest_errors(args: Any, message: str) -> None:
    parse({"digest": args})  # checked only once resolved
    err = fails({"digest": args}, message)
    assert err.path == (*PATH, "digest")


def test_digest_unknown_algorithm_lists_the_choices() -> None:
    err = fails({"digest": ["crc32", "x"]}, "Algorithm must be one of")
    for name in ("md5", "sha1", "sha256", "sha512"):
        assert name in err.message
    assert "shake_128" not in err.message


# -- Fn::Base64 --------------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "key"), [("2013-05-23", None), ("2010-09-09", AWS_KEY)])
def test_base64_returns_the_string_unchanged(version: str, key: str | None) -> None:
    assert ev({"Fn::Base64": "#!/bin/sh\necho hi"}, version, key) == "#!/bin/sh\necho hi"
    assert ev({"Fn::Base64": {"echo": "x"}}, version, key) == "x"
    assert ev({"Fn::Base64": ""}, version, key) == ""
    assert ev({"Fn::Base64": {"not_yet": "r"}}, version, key) is None


@pytest.mark.parametrize("value", [1, ["a"], {"a": "b"}, True])
def test_base64_requires_a_string(value: Any) -> None:
    with pytest.raises(StackValidationFailed, match='"Fn::Base64" argument must be a string'):
        ev({"Fn::Base64": value}, "2013-05-23")
