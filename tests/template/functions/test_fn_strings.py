"""Tests of list_join/Fn::Join and the str_replace family (reference 2.5, 2.6, 2.21)."""

from __future__ import annotations

from typing import Any

import pytest
from fn_strings_support import PATH, ev, fails, parse, parse_fails

from kiln.core.errors import StackValidationFailed
from kiln.template.functions.strings import to_json
from kiln.template.versions import AWS_KEY

# -- list_join ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"list_join": [", ", ["a", "b", "c"]]}, "a, b, c"),
        ({"list_join": ["-", ["a"], ["b", "c"]]}, "a-b-c"),
        ({"list_join": [",", ["x", {"k": "v"}, [1]]]}, 'x,{"k": "v"},[1]'),
        ({"list_join": [",", []]}, ""),
        ({"list_join": [",", None]}, ""),
        ({"list_join": [",", None, ["a"], None]}, "a"),
        ({"list_join": [",", ["a", None, "b"]]}, "a,,b"),
        ({"list_join": [",", {"not_yet": "r"}]}, ""),
        (
            {"list_join": [",", [{"b": {"d": 1, "c": [1, 2]}, "a": None}]]},
            '{"a": null, "b": {"c": [1, 2], "d": 1}}',
        ),
        ({"list_join": {"echo": ["+", ["a", "b"], ["c"]]}}, "a+b+c"),
        ({"list_join": [{"echo": "/"}, {"echo": ["a", "b"]}]}, "a/b"),
    ],
)
def test_list_join_variant_n(data: Any, expected: str) -> None:
    assert ev(data) == expected


@pytest.mark.parametrize("version", ["2015-10-15", "2016-04-08", "2018-08-31", "2021-04-16"])
def test_list_join_several_lists_from_2015_10_15(version: str) -> None:
    assert ev({"list_join": ["-", ["a"], ["b", "c"]]}, version) == "a-b-c"


@pytest.mark.parametrize("version", ["2013-05-23", "2014-10-16", "2015-04-30"])
def test_list_join_variant_1_before_2015_10_15(version: str) -> None:
    assert ev({"list_join": [", ", ["a", None, "c"]]}, version) == "a, , c"
    parse_fails(
        {"list_join": ["-", ["a"], ["b", "c"]]},
        'Incorrect arguments to "list_join" should be:',
        version,
    )
    fails(
        {"list_join": [",", ["x", {"k": "v"}]]},
        "Items to join must be strings not {'k': 'v'}",
        version,
    )
    fails({"list_join": [",", ["x", ["y"]]]}, "Items to join must be strings not ['y']", version)


@pytest.mark.parametrize(
    ("version", "key"), [("2013-05-23", None), ("2010-09-09", AWS_KEY), ("2012-12-12", None)]
)
def test_fn_join_is_always_variant_1(version: str, key: str | None) -> None:
    if version == "2012-12-12":
        key = "HeatTemplateFormatVersion"
    assert ev({"Fn::Join": [",", ["a", "b"]]}, version, key) == "a,b"
    fails({"Fn::Join": [",", [{"k": 1}]]}, "Items to join must be strings not", version, key)
    with pytest.raises(StackValidationFailed, match='Incorrect arguments to "Fn::Join"'):
        parse({"Fn::Join": [",", ["a"], ["b"]]}, version, key)


def test_fn_join_in_a_newer_hot_table_still_variant_1() -> None:
    # The class decides by name, not only by version.
    fails({"Fn::Join": [",", [["a"]]]}, "Items to join must be strings not [", "2021-04-16")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"list_join": [",", ["a", 1]]}, "Items to join must be string, map or list not 1"),
        ({"list_join": [",", [True]]}, "Items to join must be string, map or list not True"),
        ({"list_join": [",", [1.5]]}, "Items to join must be string, map or list not 1.5"),
        ({"list_join": [",", "abc"]}, '"list_join" must operate on a list'),
        ({"list_join": [",", {"a": 1}]}, '"list_join" must operate on a list'),
        ({"list_join": [",", ["a"], "b"]}, '"list_join" must operate on a list'),
        ({"list_join": [1, ["a"]]}, '"list_join" delimiter must be a string'),
        ({"list_join": [None, ["a"]]}, '"list_join" delimiter must be a string'),
        ({"list_join": {"echo": "x"}}, 'Incorrect arguments to "list_join" should be:'),
        ({"list_join": {"echo": [","]}}, 'Incorrect arguments to "list_join" should be:'),
        ({"list_join": [",", [{1: "a", "b": 2}]]}, '"list_join" cannot serialise'),
        ({"Fn::Join": [",", "ab"]}, '"Fn::Join" must operate on a list'),
        ({"Fn::Join": [0, ["a"]]}, '"Fn::Join" delimiter must be a string'),
    ],
)
def test_list_join_resolve_errors(data: Any, message: str) -> None:
    err = fails(data, message)
    assert err.path == (*PATH, next(iter(data)))


def test_list_join_item_repr_is_truncated() -> None:
    err = fails(
        {"list_join": [",", [list(range(500))]]}, "Items to join must be strings not", "2015-04-30"
    )
    assert err.message.endswith(repr(list(range(500)))[:200])


@pytest.mark.parametrize(
    "data",
    [
        {"list_join": "a,b"},
        {"list_join": {"a": 1}},
        {"list_join": [","]},
        {"list_join": []},
        {"Fn::Join": [",", ["a"], ["b"]]},
    ],
)
def test_list_join_shape_errors_at_parse(data: Any) -> None:
    parse_fails(data, f'Incorrect arguments to "{next(iter(data))}" should be:')


def test_json_serialisation_uses_sorted_keys_and_spaced_separators() -> None:
    assert to_json({"z": [1, {"y": True, "x": None}], "a": "é"}) == (
        '{"a": "\\u00e9", "z": [1, {"x": null, "y": true}]}'
    )


# -- str_replace family ------------------------------------------------------------------------


def rep(template: Any, params: Any, fn: str = "str_replace") -> dict[str, Any]:
    return {fn: {"template": template, "params": params}}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            rep("http://$host:$port/", {"$host": "example.org", "$port": 8080}),
            "http://example.org:8080/",
        ),
        (rep("$a $ab", {"$a": "X", "$ab": "Y"}), "X Y"),
        (rep("$a $ab", {"$ab": "Y", "$a": "X"}), "X Y"),
        (rep("ab", {"a": "b", "b": "c"}), "bc"),
        (rep("$x", {"$x": "$y", "$y": "no"}), "$y"),
        # equal lengths: ascending order, so "ab" is replaced before "xa"
        (rep("xab", {"xa": "2", "ab": "1"}), "x1"),
        (rep("xab", {"ab": "1", "xa": "2"}), "x1"),
        (rep("cfg=DATA", {"DATA": {"b": 1, "a": [2]}}), 'cfg={"a": [2], "b": 1}'),
        (rep("l=L", {"L": ["a", {"k": None}]}), 'l=["a", {"k": null}]'),
        (rep("n=N", {"N": 8080}), "n=8080"),
        (rep("f=F", {"F": 1.5}), "f=1.5"),
        (rep("b=B c=C", {"B": True, "C": False}), "b=True c=False"),
        (rep("v=V.", {"V": None}), "v=."),
        (rep("v=V.", {"V": {"not_yet": "r"}}), "v=."),
        (rep("no placeholders", {}), "no placeholders"),
        (rep("aaa", {"a": "bb"}), "bbbbbb"),
        ({"str_replace": {"template": "x", "params": {"x": "y"}, "extra": 1}}, "y"),
        ({"str_replace": {"template": {"echo": "hi N"}, "params": {"echo": {"N": 1}}}}, "hi 1"),
        ({"str_replace": {"echo": {"template": "t", "params": {"t": "T"}}}}, "T"),
    ],
)
def test_str_replace(data: Any, expected: str) -> None:
    assert ev(data) == expected


def test_str_replace_variant_s_before_2015_10_15() -> None:
    assert ev(rep("n=N b=B", {"N": 1, "B": True}), "2015-04-30") == "n=1 b=True"
    for value in ({"b": 1}, ["a"]):
        fails(
            rep("cfg=DATA", {"DATA": value}),
            '"str_replace" params must be strings or numbers, param DATA is not valid',
            "2015-04-30",
        )
    assert ev(rep("cfg=DATA", {"DATA": {"b": 1, "a": [2]}}), "2015-10-15") == (
        'cfg={"a": [2], "b": 1}'
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (rep(1, {"a": "b"}), '"str_replace" template must be a string'),
        (rep(None, {"a": "b"}), '"str_replace" template must be a string'),
        (rep("x", {"echo": ["a"]}), '"str_replace" params must be a map'),
        (rep("x", {"not_yet": "r"}), '"str_replace" params must be a map'),
        # Appendix B #5: mixed key types are reported, not a sort crash
        (rep("x1", {1: "a", "x": "b"}), '"str_replace" param placeholders must be strings'),
        (rep("x1", {1: "a"}), '"str_replace" param placeholders must be strings'),
        (rep("x", {"": "a"}), '"str_replace" param placeholders must not be empty'),
        (rep("x", {"x": {1: "a", "b": 2}}), '"str_replace" cannot serialise'),
        ({"str_replace": {"echo": "x"}}, 'Arguments to "str_replace" must be a map'),
        ({"str_replace": {"echo": {"template": "x"}}}, '"str_replace" syntax should be'),
    ],
)
def test_str_replace_resolve_errors(data: Any, message: str) -> None:
    err = fails(data, message)
    assert err.path == (*PATH, "str_replace")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"str_replace": "x"}, 'Arguments to "str_replace" must be a map'),
        ({"str_replace": ["x", {}]}, 'Arguments to "str_replace" must be a map'),
        ({"str_replace": {"template": "x"}}, '"str_replace" syntax should be'),
        ({"str_replace": {"params": {}}}, '"str_replace" syntax should be'),
        (rep("x", ["a"]), '"str_replace" parameters must be a mapping'),
        (rep("x", None), '"str_replace" parameters must be a mapping'),
        (rep("x", ["a"], "str_replace_strict"), '"str_replace_strict" parameters must be a'),
        ({"str_replace_vstrict": 1}, 'Arguments to "str_replace_vstrict" must be a map'),
    ],
)
def test_str_replace_shape_errors_at_parse(data: Any, message: str) -> None:
    parse_fails(data, message)


@pytest.mark.parametrize(
    ("params", "missing"),
    [
        ({"x": 1, "y": 2}, "y"),
        ({"x": 1, "bb": 2, "c": 3, "a": 4}, "bb,a,c"),
    ],
)
def test_str_replace_strict_reports_unused_params(params: dict[str, Any], missing: str) -> None:
    for fn in ("str_replace_strict", "str_replace_vstrict"):
        fails(
            rep("x", params, fn), f"The following params were not found in the template: {missing}"
        )


def test_str_replace_strict_checks_the_original_template() -> None:
    # "$b" only appears after "$a" is replaced: still missing
    fails(rep("$a", {"$a": "$b", "$b": "B"}, "str_replace_strict"), "template: $b")
    assert ev(rep("$a $b", {"$a": None, "$b": ""}, "str_replace_strict")) == " "


@pytest.mark.parametrize("value", [None, "", [], {}, {"not_yet": "r"}])
def test_str_replace_vstrict_rejects_empty_values(value: Any) -> None:
    fails(
        rep("x", {"x": value}, "str_replace_vstrict"),
        "str_replace_vstrict has an undefined or empty value for param x, "
        "must be a defined non-empty value",
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, "0"), (False, "False"), (0.0, "0.0"), ([0], "[0]"), ({"a": 0}, '{"a": 0}')],
)
def test_str_replace_vstrict_accepts_falsy_non_empty_values(value: Any, expected: str) -> None:
    assert ev(rep("x", {"x": value}, "str_replace_vstrict")) == expected


def test_fn_replace() -> None:
    assert ev({"Fn::Replace": [{"$x": "X"}, "a $x"]}, "2013-05-23") == "a X"
    assert ev({"Fn::Replace": [{"$x": 1, "$xx": "Y"}, "$xx $x"]}, "2010-09-09", AWS_KEY) == "Y 1"
    assert ev({"Fn::Replace": [{"echo": {"$x": "X"}}, {"echo": "$x"}]}, "2013-05-23") == "X"
    assert ev({"Fn::Replace": {"echo": [{"$x": "X"}, "$x"]}}, "2013-05-23") == "X"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"Fn::Replace": [{"$x": ["a"]}, "$x"]},
            '"Fn::Replace" params must be strings or numbers, param $x is not valid',
        ),
        ({"Fn::Replace": [{"$x": {"a": 1}}, "$x"]}, "param $x is not valid"),
        ({"Fn::Replace": [{"$x": "a"}, 1]}, '"Fn::Replace" template must be a string'),
        ({"Fn::Replace": [{"echo": "a"}, "x"]}, '"Fn::Replace" params must be a map'),
        ({"Fn::Replace": {"echo": ["a"]}}, 'Incorrect arguments to "Fn::Replace" should be:'),
    ],
)
def test_fn_replace_errors(data: Any, message: str) -> None:
    fails(data, message, "2013-05-23")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"Fn::Replace": "x"}, 'Incorrect arguments to "Fn::Replace" should be:'),
        ({"Fn::Replace": [{"$x": "a"}]}, 'Incorrect arguments to "Fn::Replace" should be:'),
        ({"Fn::Replace": ["x", "y"]}, '"Fn::Replace" parameters must be a mapping'),
    ],
)
def test_fn_replace_shape_errors_at_parse(data: Any, message: str) -> None:
    parse_fails(data, message, "2013-05-23")


def test_str_replace_many_params_single_pass() -> None:
    params = {f"<{i}>": f"[{i}]" for i in range(3000)}
    template = "".join(f"<{i}>" for i in range(3000))
    assert ev(rep(template, params)) == "".join(f"[{i}]" for i in range(3000))
