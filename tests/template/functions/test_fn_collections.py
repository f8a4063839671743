"""Tests of repeat, map_merge, map_replace, filter, list_concat(_unique), contains and the
CFN collection functions (reference 2.8, 2.10, 2.11, 2.13, 2.15, 2.16, 2.21, quirks 7 and 15)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fn_collections_support import (
    PATH,
    ev,
    fails,
    parse,
    parse_fails,
    validate,
    validate_fails,
)

from kiln.template.functions.collections import REPEAT_LIMIT
from kiln.template.functions.repeat import REPEAT_VALUE_LIMIT
from kiln.template.versions import AWS_KEY, HEAT_CFN_KEY

# -- repeat ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"repeat": {"template": "port-<%p%>", "for_each": {"<%p%>": ["80", "443"]}}},
            ["port-80", "port-443"],
        ),
        (  # F12 "all": the first for_each key varies slowest
            {
                "repeat": {
                    "template": {"net": "%n%", "sub": "%s%"},
                    "for_each": {"%n%": ["n1", "n2"], "%s%": ["s1", "s2"]},
                }
            },
            [
                {"net": "n1", "sub": "s1"},
                {"net": "n1", "sub": "s2"},
                {"net": "n2", "sub": "s1"},
                {"net": "n2", "sub": "s2"},
            ],
        ),
        (  # F12 "zip"
            {
                "repeat": {
                    "template": "%n%/%s%",
                    "for_each": {"%n%": ["n1", "n2"], "%s%": ["s1", "s2"]},
                    "permutations": False,
                }
            },
            ["n1/s1", "n2/s2"],
        ),
        (
            {
                "repeat": {
                    "template": {"net": "%n%", "sub": "%s%"},
                    "for_each": {"%n%": ["n1", "n2"], "%s%": ["s1", "s2"]},
                    "permutations": False,
                }
            },
            [{"net": "n1", "sub": "s1"}, {"net": "n2", "sub": "s2"}],
        ),
        (  # map values stand for their keys, in map order
            {"repeat": {"template": "%k%=on", "for_each": {"%k%": {"alpha": 1, "beta": 2}}}},
            ["alpha=on", "beta=on"],
        ),
        (  # nested repeat: the inner one first, then the outer placeholders
            {
                "repeat": {
                    "template": {"repeat": {"template": "%a%%b%", "for_each": {"%b%": ["x", "y"]}}},
                    "for_each": {"%a%": ["1", "2"]},
                }
            },
            [["1x", "1y"], ["2x", "2y"]],
        ),
        (  # keys, values and list items are substituted; other scalars are copied
            {
                "repeat": {
                    "template": {"%x%-key": ["%x%", 1, True, None, {"k": "a%x%b"}]},
                    "for_each": {"%x%": ["v"]},
                }
            },
            [{"v-key": ["v", 1, True, None, {"k": "avb"}]}],
        ),
        (  # placeholder by placeholder, in for_each order: a value may hold a later one
            {"repeat": {"template": "<a>", "for_each": {"<a>": ["<b>"], "<b>": ["B"]}}},
            ["B"],
        ),
        ({"repeat": {"template": "x", "for_each": {"%a%": None}}}, []),
        ({"repeat": {"template": "x", "for_each": {"%a%": ["1", "2"], "%b%": []}}}, []),
        ({"repeat": {"template": "%a%", "for_each": {"%a%": {"not_yet": 1}}}}, []),
        (  # extra keys are ignored
            {"repeat": {"template": "%a%", "for_each": {"%a%": ["1"]}, "extra": {"x": 1}}},
            ["1"],
        ),
        (  # functions in the template are resolved before substitution
            {"repeat": {"template": {"echo": "<%a%>"}, "for_each": {"%a%": ["1"]}}},
            ["<1>"],
        ),
        (
            {"repeat": {"template": "%a%", "for_each": {"echo": {"%a%": ["p", "q"]}}}},
            ["p", "q"],
        ),
        ({"repeat": {"template": "%a%", "for_each": {"%a%": {"echo": ["p"]}}}}, ["p"]),
        (
            {"repeat": {"echo": {"template": "%a%", "for_each": {"%a%": ["r", "s"]}}}},
            ["r", "s"],
        ),
        (
            {
                "repeat": {
                    "template": "%a%",
                    "for_each": {"%a%": ["1"]},
                    "permutations": {"echo": False},
                }
            },
            ["1"],
        ),
        (  # an absent for_each entry is dropped like any absent map value
            {"repeat": {"template": "%a%%b%", "for_each": {"%a%": ["1"], "%b%": {"absent": 1}}}},
            ["1%b%"],
        ),
        (  # nothing but nulls, zipped
            {"repeat": {"template": "x", "for_each": {"%a%": None}, "permutations": False}},
            [],
        ),
    ],
)
def test_repeat(data: Any, expected: Any) -> None:
    assert ev(data) == expected


def test_repeat_unequal_lengths_without_permutations_f13() -> None:
    fails(
        {
            "repeat": {
                "template": "%a%%b%",
                "for_each": {"%a%": ["x", "y"], "%b%": ["z"]},
                "permutations": False,
            }
        },
        "For repeat, the length of for_each values should be equal if no nested loop.",
    )


def test_repeat_null_list_zipped_with_a_full_one_is_unequal() -> None:
    fails(
        {
            "repeat": {
                "template": "x",
                "for_each": {"%a%": None, "%b%": ["1"]},
                "permutations": False,
            }
        },
        "the length of for_each values should be equal",
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"repeat": ["a"]}, 'Arguments to "repeat" must be a map'),
        ({"repeat": "a"}, 'Arguments to "repeat" must be a map'),
        ({"repeat": {"template": "a"}}, '"repeat" syntax should be'),
        ({"repeat": {"for_each": {"%a%": ["1"]}}}, '"repeat" syntax should be'),
        (
            {"repeat": {"template": "a", "for_each": {"absent": 1}}},
            '"repeat" syntax should be',
        ),
    ],
)
def test_repeat_shape_errors_at_parse_time(data: Any, message: str) -> None:
    err = parse_fails(data, message)
    assert err.path == (*PATH, "repeat")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"repeat": {"template": "a", "for_each": ["%a%"]}},
            'The "for_each" argument to "repeat" must contain a map',
        ),
        (
            {"repeat": {"template": "a", "for_each": {"%a%": "1"}}},
            'The values of the "for_each" argument to "repeat" must be lists or maps',
        ),
        (
            {"repeat": {"template": "a", "for_each": {"%a%": ["1"]}, "permutations": "no"}},
            '"permutations" should be boolean type for repeat function.',
        ),
        (
            {
                "repeat": {
                    "template": "a",
                    "for_each": {"%a%": {"k": "v"}},
                    "permutations": False,
                }
            },
            'The values of the "for_each" argument to "repeat" must be lists',
        ),
        (
            {"repeat": {"template": "a", "for_each": {1: ["1"]}}},
            'The keys of the "for_each" argument to "repeat" must be strings',
        ),
    ],
)
def test_repeat_validation_errors(data: Any, message: str) -> None:
    err = validate_fails(data, message)
    assert err.path == (*PATH, "repeat")
    fails(data, message)  # the same checks run on resolved values


@pytest.mark.parametrize(
    "data",
    [
        {"repeat": {"template": "a", "for_each": {"echo": ["%a%"]}}},
        {"repeat": {"template": "a", "for_each": {"%a%": {"echo": "1"}}}},
        {"repeat": {"template": "a", "for_each": {"%a%": ["1"]}, "permutations": {"echo": 1}}},
    ],
)
def test_repeat_computed_parts_are_checked_when_resolved(data: Any) -> None:
    assert validate(data) == []
    fails(data, "repeat")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (  # quirk 7: values must be strings, no stringification
            {"repeat": {"template": "%i%", "for_each": {"%i%": [1, 2]}}},
            'The values of the "for_each" argument to "repeat" must be strings: 1 (for %i%)',
        ),
        (
            {"repeat": {"template": "%i%", "for_each": {"%i%": {"echo": ["a", None]}}}},
            "must be strings: None",
        ),
        (
            {"repeat": {"template": "%i%", "for_each": {"%i%": {1: "one"}}}},
            "must be strings: 1",
        ),
        (  # quirk 7: an empty for_each is a clear error
            {"repeat": {"template": "x", "for_each": {}}},
            "for_each must not be empty",
        ),
        (
            {"repeat": {"template": "x", "for_each": {"echo": {}}}},
            "for_each must not be empty",
        ),
    ],
)
def test_repeat_value_errors_at_resolve_time(data: Any, message: str) -> None:
    assert validate(data) == []
    err = fails(data, message)
    assert err.path == (*PATH, "repeat")


def test_repeat_refuses_a_huge_product() -> None:
    values = [str(i) for i in range(400)]
    data = {"repeat": {"template": "x", "for_each": {"%a%": values, "%b%": values}}}
    fails(data, f'"repeat" would produce 160000 items; the limit is {REPEAT_LIMIT}')


def test_repeat_refuses_many_copies_of_a_large_template() -> None:
    # Found while fuzzing: within the item limit, 90000 copies of a 5000-item template (a
    # 30 KB template) took minutes and gigabytes; the copies times the template's
    # size are bounded too.
    values = [str(i) for i in range(300)]
    for_each = {"%a%": values, "%b%": values}
    err = fails(
        {"repeat": {"template": ["%a%%b%"] * 5000, "for_each": for_each}},
        f'"repeat" would produce more than {REPEAT_VALUE_LIMIT} values (90000 copies',
    )
    assert err.path == (*PATH, "repeat")
    nested = {"repeat": {"template": "%c%", "for_each": {"%c%": values}}}
    fails({"repeat": {"template": nested, "for_each": for_each}}, "90000 copies")
    assert len(ev({"repeat": {"template": ["%a%%b%"] * 10, "for_each": for_each}})) == 90000


@pytest.mark.parametrize("version", ["2015-04-30", "2015-10-15", "2016-04-08"])
def test_repeat_variant_l_rejects_maps(version: str) -> None:
    data = {"repeat": {"template": "%k%", "for_each": {"%k%": {"alpha": 1}}}}
    err = validate_fails(
        data, 'The values of the "for_each" argument to "repeat" must be lists', version
    )
    assert "maps" not in err.message
    assert ev({"repeat": {"template": "%k%", "for_each": {"%k%": ["a"]}}}, version) == ["a"]


@pytest.mark.parametrize("version", ["2016-10-14", "2017-02-24", "2017-09-01", "2021-04-16"])
def test_repeat_accepts_maps_from_2016_10_14(version: str) -> None:
    data = {"repeat": {"template": "%k%", "for_each": {"%k%": {"alpha": 1, "beta": 2}}}}
    assert validate(data, version) == []
    assert ev(data, version) == ["alpha", "beta"]


@pytest.mark.parametrize("version", ["2015-04-30", "2016-04-08", "2016-10-14", "2017-02-24"])
def test_repeat_permutations_is_an_ignored_key_before_2017_09_01(version: str) -> None:
    for permutations in (False, "maybe"):
        data = {
            "repeat": {
                "template": "%a%%b%",
                "for_each": {"%a%": ["1", "2"], "%b%": ["x"]},
                "permutations": permutations,
            }
        }
        assert validate(data, version) == []
        assert ev(data, version) == ["1x", "2x"]


@pytest.mark.parametrize("version", ["2017-09-01", "2018-03-02", "2018-08-31", "2021-04-16"])
def test_repeat_permutations_from_2017_09_01(version: str) -> None:
    data = {
        "repeat": {
            "template": "%a%%b%",
            "for_each": {"%a%": ["1", "2"], "%b%": ["x", "y"]},
            "permutations": False,
        }
    }
    assert ev(data, version) == ["1x", "2y"]


# -- map_merge -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"map_merge": [{"a": 1, "b": 2}, {"b": 3}]}, {"a": 1, "b": 3}),
        ({"map_merge": [{"a": {"x": 1}}, {"a": {"y": 2}}]}, {"a": {"y": 2}}),
        ({"map_merge": [{"a": 1}, None]}, {"a": 1}),
        ({"map_merge": [{"a": {"x": 1}, "b": 2}, None, {"a": {"y": 2}}]}, {"a": {"y": 2}, "b": 2}),
        ({"map_merge": []}, {}),
        ({"map_merge": {"not_yet": 1}}, {}),
        ({"map_merge": [{"not_yet": 1}, {"echo": {"c": 3}}]}, {"c": 3}),
        (
            {"map_merge": {"repeat": {"template": {"%k%": "v"}, "for_each": {"%k%": ["a", "b"]}}}},
            {"a": "v", "b": "v"},
        ),
    ],
)
def test_map_merge(data: Any, expected: Any) -> None:
    assert ev(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"map_merge": "abc"}, 'Incorrect arguments to "map_merge" should be:'),
        ({"map_merge": {"a": 1}}, 'Incorrect arguments to "map_merge" should be:'),
        (
            {"map_merge": [{"a": 1}, "b"]},
            "Incorrect arguments: Items to merge must be maps. 'b' is type <class 'str'> "
            "instead of a dict",
        ),
        ({"map_merge": [[1]]}, "Items to merge must be maps"),
    ],
)
def test_map_merge_errors(data: Any, message: str) -> None:
    err = fails(data, message)
    assert err.path == (*PATH, "map_merge")


# -- map_replace ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (  # F16 "r"
            {
                "map_replace": [
                    {"k1": "v1", "k2": "v2"},
                    {"keys": {"k1": "K1"}, "values": {"v2": "V2"}},
                ]
            },
            {"K1": "v1", "k2": "V2"},
        ),
        ({"map_replace": [{"a": 1, "b": [1]}, {"values": {1: "one"}}]}, {"a": "one", "b": [1]}),
        ({"map_replace": [{"a": {"x": 1}}, {"values": {"x": "y"}}]}, {"a": {"x": 1}}),
        ({"map_replace": [{"a": 1}, {"keys": {"a": "a"}}]}, {"a": 1}),
        ({"map_replace": [{"a": 1}, {"keys": None, "values": None}]}, {"a": 1}),
        ({"map_replace": [{"a": 1}, {}]}, {"a": 1}),
        ({"map_replace": [None, {"keys": {"a": "b"}}]}, {}),
        ({"map_replace": [{"not_yet": 1}, {"keys": {"a": "b"}}]}, {}),
        (
            {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "c", "b": "d"}}]},
            {"c": 1, "d": 2},
        ),
        (
            {"map_replace": {"echo": [{"a": "x"}, {"keys": {"a": "b"}, "values": {"x": "y"}}]}},
            {"b": "y"},
        ),
    ],
)
def test_map_replace(data: Any, expected: Any) -> None:
    assert ev(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (  # F17
            {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]},
            "key replacement b collides with a key in the input map",
        ),
        (
            {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "c", "b": "c"}}]},
            "key replacement c collides with a key in the output map",
        ),
        (  # the input is what counts, even when its key is renamed away too
            {"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b", "b": "c"}}]},
            "key replacement b collides with a key in the input map",
        ),
        ({"map_replace": [{"a": 1}]}, 'Incorrect arguments to "map_replace" should be:'),
        ({"map_replace": {"a": 1}}, 'Incorrect arguments to "map_replace" should be:'),
        ({"map_replace": [{}, {}, {}]}, 'Incorrect arguments to "map_replace" should be:'),
        (
            {"map_replace": [["a"], {"keys": {}}]},
            'Incorrect arguments: to "map_replace", arguments must be a list of maps.',
        ),
        (
            {"map_replace": [{"a": 1}, "keys"]},
            'Incorrect arguments: to "map_replace", arguments must be a list of maps.',
        ),
        (
            {"map_replace": [{"a": 1}, {"keys": {}, "other": {}}]},
            'Incorrect arguments to "map_replace" should be:',
        ),
        ({"map_replace": [{"a": 1}, {"keys": ["a"]}]}, '"keys" and "values" of "map_replace"'),
        ({"map_replace": [{"a": 1}, {"keys": {"a": [1]}}]}, "must be a string or a number"),
    ],
)
def test_map_replace_errors(data: Any, message: str) -> None:
    err = fails(data, message)
    assert err.path == (*PATH, "map_replace")


# -- filter ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"filter": [[None], [1, None, 2]]}, [1, 2]),
        ({"filter": [["a"], ["a", "b", "a"]]}, ["b"]),
        ({"filter": [[{"k": 1}], [{"k": 1}, {"k": 2}, [1]]]}, [{"k": 2}, [1]]),
        ({"filter": [[[1]], [[1], [2]]]}, [[2]]),
        ({"filter": [["a"], None]}, None),
        ({"filter": [["a"], []]}, []),
        ({"filter": [None, ["a"]]}, ["a"]),
        ({"filter": [[], ["a"]]}, ["a"]),
        ({"filter": [{"not_yet": 1}, ["a"]]}, ["a"]),
        ({"filter": [["a"], {"not_yet": 1}]}, None),
        ({"filter": {"echo": [["x"], ["x", "y"]]}}, ["y"]),
    ],
)
def test_filter(data: Any, expected: Any) -> None:
    assert ev(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"filter": "abc"}, 'Argument to "filter" must be a list'),
        ({"filter": {"a": 1}}, 'Argument to "filter" must be a list'),
        (
            {"filter": [["a"]]},
            '"filter" expected 2 arguments of the form [values, sequence] but got 1 arguments '
            "instead",
        ),
        ({"filter": [[], [], []]}, "but got 3 arguments instead"),
    ],
)
def test_filter_shape_errors_at_parse_time(data: Any, message: str) -> None:
    err = parse_fails(data, message)
    assert err.path == (*PATH, "filter")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"filter": [[1], "abc"]}, '"filter" only works with lists'),
        ({"filter": [[1], {"a": 1}]}, '"filter" only works with lists'),
        ({"filter": ["a", ["a"]]}, '"filter" filters a list of values'),
        ({"filter": {"echo": [[1]]}}, "but got 1 arguments instead"),
    ],
)
def test_filter_errors_at_resolve_time(data: Any, message: str) -> None:
    fails(data, message)


# -- list_concat, list_concat_unique -------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"list_concat": [["a", "b"], None, ["c"]]}, ["a", "b", "c"]),
        ({"list_concat": [["a", ["b"]], [["c"]]]}, ["a", ["b"], ["c"]]),
        ({"list_concat": [["a"], ["a"]]}, ["a", "a"]),
        ({"list_concat": []}, []),
        ({"list_concat": {"not_yet": 1}}, []),
        ({"list_concat": {"echo": [["x"], ["y"]]}}, ["x", "y"]),
        ({"list_concat_unique": [["a", "b"], ["b", "c", "a"]]}, ["a", "b", "c"]),
        (
            {"list_concat_unique": [[{"k": [1]}, {"k": [2]}], [{"k": [1]}, ["x"], ["x"]]]},
            [{"k": [1]}, {"k": [2]}, ["x"]],
        ),
        ({"list_concat_unique": [["b", "a", "b"], None]}, ["b", "a"]),
    ],
)
def test_list_concat(data: Any, expected: Any) -> None:
    assert ev(data) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"list_concat": "abc"}, 'Incorrect arguments to "list_concat" should be:'),
        ({"list_concat": {"a": ["b"]}}, 'Incorrect arguments to "list_concat" should be:'),
        ({"list_concat_unique": "abc"}, 'Incorrect arguments to "list_concat_unique" should be:'),
        (
            {"list_concat": [["a"], "b"]},
            'Incorrect arguments: Items to concat must be lists. [["a"], "b"] contains an item '
            'that is not a list: "b"',
        ),
        ({"list_concat_unique": [{"a": 1}]}, 'not a list: {"a": 1}'),
    ],
)
def test_list_concat_errors(data: Any, message: str) -> None:
    fails(data, message)


# -- contains ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"contains": ["b", ["a", "b"]]}, True),
        ({"contains": ["c", ["a", "b"]]}, False),
        ({"contains": ["ell", "hello"]}, True),
        ({"contains": ["x", "hello"]}, False),
        ({"contains": [{"k": [1]}, [{"k": [1]}]]}, True),
        ({"contains": [None, [None]]}, True),
        ({"contains": ["a", {"not_yet": 1}]}, False),
        ({"contains": {"echo": ["a", ["a"]]}}, True),
        ({"contains": ["a", {"absent": 1}, ["a"]]}, True),
    ],
)
def test_contains(data: Any, expected: bool) -> None:
    assert ev(data) is expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"contains": "abc"}, 'Incorrect arguments to "contains" should be:'),
        ({"contains": []}, 'Incorrect arguments to "contains" should be:'),
        (
            {"contains": ["a"]},
            'Arguments to "contains" must be of the form: [value1, [value1, value2]]',
        ),
        ({"contains": ["a", ["a"], ["b"]]}, 'Arguments to "contains" must be of the form'),
    ],
)
def test_contains_shape_errors_at_parse_time(data: Any, message: str) -> None:
    parse_fails(data, message)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"contains": ["x", {"x": 1}]}, 'Second argument to "contains" should be a sequence.'),
        ({"contains": ["x", 5]}, 'Second argument to "contains" should be a sequence.'),
        ({"contains": [1, "a1"]}, 'The first argument to "contains" must be a string'),
        ({"contains": {"echo": ["a"]}}, 'Arguments to "contains" must be of the form'),
    ],
)
def test_contains_errors_at_resolve_time(data: Any, message: str) -> None:
    fails(data, message)


# -- Fn::Select ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"Fn::Select": ["1", ["a", "b"]]}, "b"),
        ({"Fn::Select": [0, ["a", "b"]]}, "a"),
        ({"Fn::Select": [-1, ["a", "b"]]}, "b"),
        ({"Fn::Select": [5, ["a"]]}, ""),
        ({"Fn::Select": ["k", {"k": "v"}]}, "v"),
        ({"Fn::Select": ["x", {"k": "v"}]}, ""),
        ({"Fn::Select": [0, ""]}, ""),
        ({"Fn::Select": [0, None]}, ""),
        ({"Fn::Select": [0, {"not_yet": 1}]}, ""),
        ({"Fn::Select": [{"not_yet": 1}, ["a"]]}, ""),
        ({"Fn::Select": ["1", '["a", "b"]']}, "b"),
        ({"Fn::Select": ["k", '{"k": [1, 2]}']}, [1, 2]),
        ({"Fn::Select": [3, '["a"]']}, ""),
        ({"Fn::Select": {"echo": [1, ["a", "b"]]}}, "b"),
    ],
)
def test_select(data: Any, expected: Any) -> None:
    assert ev(data) == expected
    assert ev(data, "2010-09-09", AWS_KEY) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"Fn::Select": [0, "[a"]}, '"Fn::Select": Expecting value'),
        ({"Fn::Select": [0, {"k": "v"}]}, "the index must be a string to select from a map"),
        ({"Fn::Select": ["x", ["a"]]}, "the index must be an integer to select from a list"),
        ({"Fn::Select": [0, 5]}, "the collection must be a list, a map or a JSON string"),
        ({"Fn::Select": [0, "5"]}, "the collection must be a list, a map or a JSON string"),
        ({"Fn::Select": {"echo": [0]}}, 'Arguments to "Fn::Select" must be of the form'),
    ],
)
def test_select_errors(data: Any, message: str) -> None:
    err = fails(data, message)
    assert err.path == (*PATH, "Fn::Select")


@pytest.mark.parametrize(
    ("data", "message"),
    [  # fuzz findings: OverflowError and RecursionError escaped
        (
            {"Fn::Select": [float("inf"), ["a"]]},
            "must be an integer to select from a list, not inf",
        ),
        ({"Fn::Select": [float("-inf"), ["a"]]}, "not -inf"),
        ({"Fn::Select": [0, "[" * 5000 + "]" * 5000]}, "nests deeper than the maximum allowed"),
        # loads, but deeper than any template may nest
        ({"Fn::Select": [0, "[" * 500 + "]" * 500]}, "nests deeper than the maximum allowed"),
    ],
)
def test_select_rejects_infinite_indexes_and_too_deep_json(data: Any, message: str) -> None:
    err = fails(data, message)
    assert err.path == (*PATH, "Fn::Select")
    # JSON nested as deep as templates may be still selects
    assert ev({"Fn::Select": [0, "[" * 100 + "]" * 100]}) == json.loads("[" * 99 + "]" * 99)


@pytest.mark.parametrize("args", [[0], [0, ["a"], 1], "abc", {"a": 1}])
def test_select_shape_errors_at_parse_time(args: Any) -> None:
    parse_fails({"Fn::Select": args}, 'Arguments to "Fn::Select" must be of the form')


# -- Fn::MemberListToMap -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ([".member.0.Name=k1", ".member.0.Value=v1"], {"k1": "v1"}),
        (
            [
                ".member.1.Value=v2",
                ".member.0.Name=k1",
                ".member.1.Name=k2",
                ".member.0.Value=v1",
            ],
            {"k1": "v1", "k2": "v2"},
        ),
        (["Tags.member.10.Name=b", "Tags.member.2.Name=a"], {"a": None, "b": None}),
        ([".member.0.Name=k", ".member.0.Value=a=b"], {"k": "a=b"}),
        ([".member.0.Value=orphan", "not a member", ".member.x.Name=bad"], {}),
        ([], {}),
        (None, {}),
    ],
)
def test_member_list_to_map(members: Any, expected: Any) -> None:
    data = {"Fn::MemberListToMap": ["Name", "Value", members]}
    result = ev(data, "2012-12-12", HEAT_CFN_KEY)
    assert result == expected
    assert list(result) == list(expected)


@pytest.mark.parametrize(
    "args", [["Name", "Value"], "x", ["Name", 1, []], ["Name", "Value", "x=y"]]
)
def test_member_list_to_map_shape_errors(args: Any) -> None:
    parse_fails({"Fn::MemberListToMap": args}, 'Arguments to "Fn::MemberListToMap" must be')


def test_member_list_to_map_item_errors() -> None:
    fails({"Fn::MemberListToMap": ["Name", "Value", [1]]}, "members must be strings, not 1")
    # fuzz finding: int() refused the 5000 digits with a ValueError
    fails(
        {"Fn::MemberListToMap": ["Name", "Value", [".member." + "9" * 5000 + ".Name=x"]]},
        "member number 99999999999999999999... is too large",
    )
    fails(
        {"Fn::MemberListToMap": {"echo": ["Name", 2, []]}},
        'Arguments to "Fn::MemberListToMap" must be',
    )


# -- Fn::FindInMap, Fn::GetAZs -------------------------------------------------------------------


def test_find_in_map() -> None:
    data = {"Fn::FindInMap": ["RegionMap", {"echo": "us-east-1"}, "AMI"]}
    assert ev(data, "2010-09-09", AWS_KEY) == "ami-1"


def test_find_in_map_missing_entry_is_a_validation_error_quirk_15() -> None:
    err = fails(
        {"Fn::FindInMap": ["RegionMap", "eu-west-1", "AMI"]},
        "No mapping",
        "2012-12-12",
        HEAT_CFN_KEY,
    )
    assert err.path == (*PATH, "Fn::FindInMap")


@pytest.mark.parametrize("args", [["RegionMap", "us-east-1"], "RegionMap", [1, 2, 3, 4]])
def test_find_in_map_shape_errors(args: Any) -> None:
    parse_fails(
        {"Fn::FindInMap": args}, 'Arguments to "Fn::FindInMap" must be of the form: [map_name'
    )


def test_find_in_map_parts_must_be_strings() -> None:
    fails(
        {"Fn::FindInMap": ["RegionMap", 1, "AMI"]}, 'Arguments to "Fn::FindInMap" must be strings'
    )
    fails({"Fn::FindInMap": {"echo": ["RegionMap"]}}, "must be of the form")


@pytest.mark.parametrize("region", ["", "us-east-1", {"Ref": "AWS::Region"}, None])
def test_get_azs(region: Any) -> None:
    assert ev({"Fn::GetAZs": region}, "2010-09-09", AWS_KEY) == ["nova"]


def test_parse_keeps_function_objects_for_later() -> None:
    parsed = parse({"list_concat": [["a"], {"not_yet": 1}]})
    assert type(parsed).__name__ == "ListConcat"
    assert parsed.path == (*PATH, "list_concat")


# -- conformance cases -----------------------------------------------------------------------------


def test_conformance_f16_f20_outputs() -> None:
    outputs = {
        "m": {"map_merge": [{"a": {"x": 1}, "b": 2}, None, {"a": {"y": 2}}]},
        "r": {
            "map_replace": [
                {"k1": "v1", "k2": "v2"},
                {"keys": {"k1": "K1"}, "values": {"v2": "V2"}},
            ]
        },
        "f": {"filter": [[None], [1, None, 2]]},
        "c": {"list_concat": [["a", "b"], None, ["c"]]},
        "u": {"list_concat_unique": [["a", "b"], ["b", "c", "a"]]},
        "in": {"contains": ["ell", "hello"]},
    }
    assert {name: ev(value) for name, value in outputs.items()} == {
        "m": {"a": {"y": 2}, "b": 2},
        "r": {"K1": "v1", "k2": "V2"},
        "f": [1, 2],
        "c": ["a", "b", "c"],
        "u": ["a", "b", "c"],
        "in": True,
    }
