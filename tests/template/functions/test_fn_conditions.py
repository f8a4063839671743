"""Condition functions equals/not/and/or (and Fn:: spellings) and the if / Fn::If macro
(reference 1.5, 2.0 absent values, 2.17, 2.18, 2.21)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import StackValidationFailed
from kiln.core.paths import Path, render_path
from kiln.template.functions.base import ABSENT, Parser, resolve, resolve_top, validate_functions
from kiln.template.functions.conditions import condition_value
from kiln.template.inputs import build_stack
from kiln.template.versions import AWS_KEY, HEAT_CFN_KEY, HOT_DATES, HOT_KEY, get_version
from kiln.testing.heat_types import HEAT_TEST_TYPES

LATEST = "2021-04-16"
COND: Path = ("conditions", "c")
OUT: Path = ("outputs", "o", "value")
NAMES = {"yes_c": True, "no_c": False}
PARAMS: dict[str, Any] = {"pair": ["a", "a"], "single": ["a"], "flag": True, "name": "yes_c"}


class Ctx:
    """Two named conditions and a few parameters; records the names asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def condition(self, name: str) -> bool:
        self.asked.append(name)
        if name not in NAMES:
            raise StackValidationFailed(f'Invalid condition "{name}"')
        return NAMES[name]

    def has_parameter(self, name: str) -> bool:
        return name in PARAMS

    def param_value(self, name: str) -> Any:
        return PARAMS[name]

    # The rest of FunctionContext: nothing here may ask for it.
    def has_resource(self, name: str) -> bool:
        return False

    def resource_reference(self, name: str) -> Any:
        raise AssertionError(name)

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        raise AssertionError(name)

    def resource_attributes(self, name: str) -> Any:
        raise AssertionError(name)

    def check_attribute(self, name: str, attribute: str) -> str | None:
        raise AssertionError(name)

    def file_content(self, key: str) -> str | None:
        raise AssertionError(key)

    def facade(self, what: str) -> Any:
        raise AssertionError(what)

    def availability_zones(self) -> list[str]:
        raise AssertionError("availability_zones")

    def mapping(self, name: str, key: str, value: str) -> Any:
        raise AssertionError(name)


def condition_parser(version: str = LATEST, key: str = HOT_KEY) -> Parser:
    v = get_version(version, key)
    return Parser(v, v.condition_functions, v.condition_functions)


def cond(data: Any, version: str = LATEST, key: str = HOT_KEY, ctx: Ctx | None = None) -> Any:
    """Parse ``data`` as a condition definition and resolve it."""
    return resolve_top(condition_parser(version, key).parse(data, COND), ctx or Ctx())


def cond_error(data: Any, version: str = LATEST, key: str = HOT_KEY) -> StackValidationFailed:
    ctx = Ctx()
    with pytest.raises(StackValidationFailed) as info:
        parsed = condition_parser(version, key).parse(data, COND)
        errors = validate_functions(parsed, ctx)
        if errors:
            raise errors[0]
        resolve_top(parsed, ctx)
    assert isinstance(info.value, StackValidationFailed)
    return info.value


def value_parser(version: str = LATEST, key: str = HOT_KEY) -> Parser:
    """An ordinary parser whose ``if`` evaluates conditions with :func:`cond`."""
    v = get_version(version, key)
    return Parser(
        v,
        v.functions,
        v.condition_functions,
        lambda raw, path: _use(condition_parser(version, key), raw, path),
    )


def _use(parser: Parser, raw: Any, path: Path) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        return Ctx().condition(raw)
    ctx = Ctx()
    return condition_value(resolve_top(parser.parse(raw, path), ctx), ctx, path)


def value(data: Any, version: str = LATEST, key: str = HOT_KEY) -> Any:
    """Parse and resolve ``data`` as an output value."""
    return resolve_top(value_parser(version, key).parse(data, OUT), Ctx())


# -- equals --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([[1, 2], [1, 2]], True),
        ([[1, 2], [2, 1]], False),
        ([{"a": [1]}, {"a": [1]}], True),
        (["1", 1], False),  # types matter ...
        ([True, 1], True),  # ... except where Python says otherwise (quirk 12, kept)
        ([False, 0], True),
        ([1, 1.0], True),
        ([None, None], True),
        ([None, ""], False),
        (["a", "b"], False),
        ([{"get_param": "flag"}, True], True),
        ([{"equals": [1, 1]}, True], True),
    ],
)
def test_equals(args: list[Any], expected: bool) -> None:
    assert cond({"equals": args}) is expected


@pytest.mark.parametrize("args", [[1], [1, 2, 3], [], 5, "ab", None, {"a": 1}])
def test_equals_needs_two_values(args: Any) -> None:
    err = cond_error({"equals": args})
    assert err.message == 'Arguments to "equals" must be of the form: [value_1, value_2]'
    assert err.path == (*COND, "equals")


@pytest.mark.parametrize(
    ("data", "version", "key", "message"),
    [
        (
            {"equals": {"get_param": "pair"}},
            LATEST,
            HOT_KEY,
            'Arguments to "equals" must be of the form: [value_1, value_2]',
        ),
        (
            {"Fn::Not": {"Fn::Equals": [1, 1]}},
            "2010-09-09",
            AWS_KEY,
            'Arguments to "Fn::Not" must be of the form: [condition]',
        ),
    ],
)
def test_call_as_the_whole_argument_is_a_shape_error(
    data: Any, version: str, key: str, message: str
) -> None:
    with pytest.raises(StackValidationFailed) as info:
        condition_parser(version, key).parse(data, COND)
    assert info.value.message == message


def test_fn_equals_in_aws() -> None:
    assert cond({"Fn::Equals": [True, 1]}, "2010-09-09", AWS_KEY) is True
    err = cond_error({"Fn::Equals": [1]}, "2010-09-09", AWS_KEY)
    assert err.message == 'Arguments to "Fn::Equals" must be of the form: [value_1, value_2]'


# -- not -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        (True, False),
        (False, True),
        ("yes_c", False),
        ("no_c", True),
        ({"equals": ["a", "b"]}, True),
        ({"not": "no_c"}, False),
        ({"get_param": "flag"}, False),
        ({"get_param": "name"}, False),  # a string result is a condition name (quirk 11)
    ],
)
def test_not(arg: Any, expected: bool) -> None:
    assert cond({"not": arg}) is expected


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (None, 'Argument to "not" must be a condition'),
        ([True], 'Invalid condition "[True]"'),  # a list is not a wrapper
        (5, 'Invalid condition "5"'),
        ({"a": 1}, "Invalid condition \"{'a': 1}\""),
        ("nosuch", 'Invalid condition "nosuch"'),
    ],
)
def test_not_errors(arg: Any, message: str) -> None:
    assert cond_error({"not": arg}).message == message


@pytest.mark.parametrize(("arg", "expected"), [([True], False), (["no_c"], True)])
def test_fn_not_takes_a_one_element_list(arg: list[Any], expected: bool) -> None:
    assert cond({"Fn::Not": arg}, "2010-09-09", AWS_KEY) is expected


@pytest.mark.parametrize("arg", [True, "yes_c", [], [True, False], {"a": 1}])
def test_fn_not_shapes(arg: Any) -> None:
    err = cond_error({"Fn::Not": arg}, "2010-09-09", AWS_KEY)
    assert err.message == 'Arguments to "Fn::Not" must be of the form: [condition]'
    assert err.path == (*COND, "Fn::Not")


# -- and / or ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "args", "expected"),
    [
        ("and", [True, True], True),
        ("and", [True, "no_c"], False),
        ("and", ["yes_c", {"not": "no_c"}, True], True),
        ("and", [True, True, False], False),
        ("or", [False, False], False),
        ("or", ["no_c", "yes_c"], True),
        ("or", [False, False, {"equals": [1, 1]}], True),
        ("Fn::And", [True, "yes_c"], True),
        ("Fn::Or", ["no_c", False], False),
    ],
)
def test_and_or(fn: str, args: list[Any], expected: bool) -> None:
    key, version = (AWS_KEY, "2010-09-09") if fn.startswith("Fn::") else (HOT_KEY, LATEST)
    assert cond({fn: args}, version, key) is expected


@pytest.mark.parametrize("fn", ["and", "or"])
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([True], 'The minimum number of condition arguments to "{fn}" is 2.'),
        ([], 'The minimum number of condition arguments to "{fn}" is 2.'),
        (True, 'Arguments to "{fn}" must be a list of conditions'),
        ("yes_c", 'Arguments to "{fn}" must be a list of conditions'),
        ({"a": 1}, 'Arguments to "{fn}" must be a list of conditions'),
    ],
)
def test_and_or_shapes(fn: str, args: Any, message: str) -> None:
    err = cond_error({fn: args})
    assert err.message == message.format(fn=fn)
    assert err.path == (*COND, fn)


@pytest.mark.parametrize(("fn", "args"), [("and", [True, 1]), ("or", [False, [True]])])
def test_and_or_operand_that_is_neither_boolean_nor_name(fn: str, args: list[Any]) -> None:
    err = cond_error({fn: args})
    assert err.message == f'Invalid condition "{args[1]}"'
    assert err.path == (*COND, fn, 1)


@pytest.mark.parametrize(
    ("fn", "args", "result", "asked"),
    [
        ("and", ["no_c", "yes_c", "nosuch"], False, ["no_c"]),
        ("or", ["yes_c", "no_c", "nosuch"], True, ["yes_c"]),
        ("and", ["yes_c", "no_c", "nosuch"], False, ["yes_c", "no_c"]),
    ],
)
def test_and_or_short_circuit_their_result(
    fn: str, args: list[Any], result: bool, asked: list[str]
) -> None:
    ctx = Ctx()
    parsed = condition_parser().parse({fn: args}, COND)
    assert resolve_top(parsed, ctx) is result
    assert ctx.asked == asked


@pytest.mark.parametrize("fn", ["and", "or"])
def test_and_or_validate_every_operand(fn: str) -> None:
    # Quirk 13, Rec: an invalid name after the deciding operand is still an error.
    parsed = condition_parser().parse({fn: [fn == "or", "nosuch"]}, COND)
    errors = validate_functions(parsed, Ctx())
    assert [e.message for e in errors] == ['Invalid condition "nosuch"']


def test_condition_functions_are_plain_data_outside_condition_contexts() -> None:
    # K10
    for data in ({"equals": [1, 1]}, {"not": True}, {"and": [True, True]}, {"or": [True, False]}):
        assert value(data) == data
    assert value({"Fn::Equals": [1, 1]}, "2010-09-09", AWS_KEY) == {"Fn::Equals": [1, 1]}


@pytest.mark.parametrize("name", ["equals", "not", "and", "or"])
@pytest.mark.parametrize("version", [d for d in HOT_DATES if d < "2016-10-14"])
def test_no_condition_functions_before_2016_10_14(name: str, version: str) -> None:
    assert get_version(version).condition_functions == {}
    assert name not in get_version(version).functions


# -- if ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"if": ["yes_c", "a", "b"]}, "a"),
        ({"if": ["no_c", "a", "b"]}, "b"),
        ({"if": [True, "a", "b"]}, "a"),
        ({"if": [{"not": "no_c"}, 3, 1]}, 3),
        ({"if": [{"equals": [{"get_param": "flag"}, True]}, "on", "off"]}, "on"),
        ({"if": ["no_c", "a", None]}, None),
        ({"if": [{"get_param": "name"}, "a", "b"]}, "a"),  # a string is a name (quirk 11)
        ({"if": ["yes_c", {"list_join": ["-", ["x", "y"]]}, "z"]}, "x-y"),  # branch parsed
        ({"if": ["yes_c", {"if": ["no_c", "inner", "other"]}, "outer"]}, "other"),
    ],
)
def test_if(data: Any, expected: Any) -> None:
    assert value(data) == expected


def test_if_parses_only_the_chosen_branch() -> None:
    # The untaken branch may hold anything, even calls with bad arguments.
    data = {"if": ["no_c", {"str_split": 5, "get_attr": "x"}, "fine"]}
    assert value(data) == "fine"
    assert value({"if": ["yes_c", "fine", {"get_param": []}]}) == "fine"


@pytest.mark.parametrize(
    ("version", "lengths_ok"),
    [(d, (3,)) for d in HOT_DATES if "2016-10-14" <= d < LATEST] + [(LATEST, (2, 3))],
)
@pytest.mark.parametrize("length", [0, 1, 2, 3, 4])
def test_if_argument_count_by_version(
    version: str, lengths_ok: tuple[int, ...], length: int
) -> None:
    args = [True, "a", "b", "c"][:length]
    if length in lengths_ok:
        assert value({"if": args}, version) == "a"
        return
    with pytest.raises(StackValidationFailed) as info:
        value({"if": args}, version)
    assert info.value.message == (
        'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'
    )
    assert info.value.path == (*OUT, "if")


@pytest.mark.parametrize("args", ["yes_c", {"a": 1}, None, True])
def test_if_needs_a_list(args: Any) -> None:
    with pytest.raises(StackValidationFailed, match=r'Arguments to "if" must be of the form'):
        value({"if": args})


@pytest.mark.parametrize("version", [d for d in HOT_DATES if d < "2016-10-14"])
def test_if_is_data_before_2016_10_14(version: str) -> None:
    assert value({"if": [True, "a", "b"]}, version) == {"if": [True, "a", "b"]}


def test_if_condition_is_a_condition_context() -> None:
    with pytest.raises(StackValidationFailed) as info:
        value({"if": [{"get_attr": ["r", "x"]}, "a", "b"]})
    assert info.value.message == 'The function "get_attr" is invalid in this context'
    assert render_path(info.value.path) == "outputs.o.value.if.get_attr"


# -- absent values (2021-04-16 two-argument if) ----------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"if": ["no_c", "b"]}, None),  # at top level: null (K08)
        ({"if": ["yes_c", "b"]}, "b"),
        (["a", {"if": ["no_c", "b"]}, "c"], ["a", "c"]),  # list item dropped
        ({"x": 1, "y": {"if": ["no_c", 2]}}, {"x": 1}),  # map entry dropped
        ([{"if": ["no_c", 1, None]}], [None]),  # an explicit null is not absent
        ([["a", {"if": ["no_c", "b"]}]], [["a"]]),  # only the nearest container loses it
        ({"k": [{"if": ["no_c", 1]}]}, {"k": []}),
        ([{"if": ["yes_c", {"if": ["no_c", "inner"]}, "outer"]}], []),  # through nested ifs
        ({"if": ["yes_c", {"if": ["no_c", "inner"]}, "outer"]}, None),
        ({"list_join": [",", ["a", {"if": ["no_c", "b"]}, "c"]]}, "a,c"),  # seen by functions
    ],
)
def test_absent_propagates_to_the_nearest_container(data: Any, expected: Any) -> None:
    assert value(data) == expected


def test_a_false_two_argument_if_is_absent() -> None:
    parsed = value_parser().parse({"if": ["no_c", "b"]}, OUT)
    assert parsed is ABSENT
    assert resolve(parsed, Ctx()) is ABSENT
    assert resolve_top(parsed, Ctx()) is None


def test_absent_property_means_not_given() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n"
        "  v:\n    type: OS::Heat::Value\n"
        "    properties: {value: 1, type: {if: [false, string]}}\n",
        types=HEAT_TEST_TYPES,
    )
    assert stack.errors == []
    required = build_stack(
        "heat_template_version: 2021-04-16\n"
        "resources:\n  v: {type: OS::Heat::Value, properties: {value: {if: [false, 1]}}}\n",
        types=HEAT_TEST_TYPES,
    )
    assert [e.message for e in required.errors] == ["Property value not assigned"]


# -- Fn::If (AWS 2010 only) ------------------------------------------------------------------------


def test_fn_if_in_aws() -> None:
    assert value({"Fn::If": ["yes_c", "a", "b"]}, "2010-09-09", AWS_KEY) == "a"
    assert value({"Fn::If": ["no_c", "a", "b"]}, "2010-09-09", AWS_KEY) == "b"
    with pytest.raises(StackValidationFailed) as info:
        value({"Fn::If": ["yes_c", "a"]}, "2010-09-09", AWS_KEY)
    assert info.value.message == (
        'Arguments to "Fn::If" must be of the form: [condition_name, value_if_true, value_if_false]'
    )


@pytest.mark.parametrize(
    ("data", "version", "key"),
    [
        ({"Fn::If": [True, "a", "b"]}, "2012-12-12", HEAT_CFN_KEY),
        ({"Fn::If": [True, "a", "b"]}, LATEST, HOT_KEY),
        ({"if": [True, "a", "b"]}, "2010-09-09", AWS_KEY),
    ],
)
def test_other_spellings_of_if_are_data(data: Any, version: str, key: str) -> None:
    assert value(data, version, key) == data


def test_fn_if_end_to_end() -> None:
    stack = build_stack(
        "AWSTemplateFormatVersion: '2010-09-09'\n"
        "Parameters:\n  Env: {Type: String, Default: prod}\n"
        "Conditions:\n  IsProd: {'Fn::Equals': [{Ref: Env}, prod]}\n"
        "Outputs:\n"
        "  Size: {Value: {'Fn::If': [IsProd, large, small]}}\n"
        "  Inline: {Value: {'Fn::If': [{'Fn::Not': [IsProd]}, x, y]}}\n"
    )
    assert stack.errors == []
    assert {k: v.value for k, v in stack.output_values().items()} == {
        "Size": "large",
        "Inline": "y",
    }
