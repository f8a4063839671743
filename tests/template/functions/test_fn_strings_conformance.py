"""Conformance cases F08-F11, F14, F15, F21, F22 (reference 9.2) at the level of the functions.

Each case's outputs are resolved as output values; ``validate`` cases expect the
error that stack validation reports (property errors are raised on resolution,
``make_url`` literal errors by the function's validation).
"""

from __future__ import annotations

from typing import Any

import pytest
from fn_strings_support import ev, fails, validation_errors

CREATE_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "F08": (
        {
            "a": {"str_replace": {"template": "$a $ab", "params": {"$a": "X", "$ab": "Y"}}},
            "b": {"str_replace": {"template": "ab", "params": {"a": "b", "b": "c"}}},
            "c": {"str_replace": {"template": "cfg=DATA", "params": {"DATA": {"b": 1, "a": [2]}}}},
            "d": {"str_replace": {"template": "n=N", "params": {"N": 8080}}},
        },
        {"a": "X Y", "b": "bc", "c": 'cfg={"a": [2], "b": 1}', "d": "n=8080"},
    ),
    "F11": (
        {
            "a": {"list_join": ["-", ["a"], ["b", "c"]]},
            "b": {"list_join": [",", ["x", {"k": "v"}, [1]]]},
        },
        {"a": "a-b-c", "b": 'x,{"k": "v"},[1]'},
    ),
    "F14": (
        {"m": {"digest": ["md5", "hello"]}, "s": {"digest": ["sha256", "abc"]}},
        {
            "m": "5d41402abc4b2a76b9719d911017c592",
            "s": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        },
    ),
    "F15": (
        {"l": {"str_split": [",", "a,b,,c"]}, "i": {"str_split": [",", "a,b,c", "2"]}},
        {"l": ["a", "b", "", "c"], "i": "c"},
    ),
    "F21": (
        {
            "a": {
                "make_url": {
                    "scheme": "https",
                    "host": "example.org",
                    "port": 8443,
                    "path": "/a b",
                    "query": {"q": "x y"},
                    "fragment": "top",
                }
            },
            "b": {"make_url": {"scheme": "http", "host": "::1", "path": "/"}},
        },
        {"a": "https://example.org:8443/a%20b?q=x+y#top", "b": "http://[::1]/"},
    ),
}


@pytest.mark.parametrize("case", sorted(CREATE_CASES))
def test_create_case_outputs(case: str) -> None:
    outputs, expected = CREATE_CASES[case]
    assert {name: ev(value) for name, value in outputs.items()} == expected


def test_f09_str_replace_strict_unused_param() -> None:
    value = {"str_replace_strict": {"template": "x", "params": {"x": 1, "y": 2}}}
    fails(value, "The following params were not found in the template: y")


def test_f10_str_replace_vstrict_empty_value() -> None:
    value = {"str_replace_vstrict": {"template": "x", "params": {"x": ""}}}
    fails(value, "has an undefined or empty value for param x")


def test_f22_make_url_port_out_of_range_is_a_validation_error() -> None:
    value = {"make_url": {"scheme": "http", "host": "h", "port": 70000}}
    errors = validation_errors(value)
    assert [e.kind for e in errors] == ["StackValidationFailed"]
    assert "Invalid URL port 70000" in errors[0].message
