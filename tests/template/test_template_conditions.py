"""The conditions section (reference 4.4 and 1.6): lazy, memoised evaluation, cycles, boolean
definitions, names versus strings, "Invalid condition" located where it is used, and AWS
``Conditions``. The condition functions themselves are tested in test_fn_conditions.py."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import InvalidTemplateReference, KilnError, StackValidationFailed
from kiln.core.paths import render_path
from kiln.template.conditions import CATEGORY, Conditions
from kiln.template.functions.base import Parser
from kiln.template.inputs import build_stack
from kiln.template.stack import StackDefinition, StackIdentity
from kiln.template.versions import get_version
from kiln.testing.heat_types import HEAT_TEST_TYPES

VERSION = get_version("2016-10-14")


class Ctx:
    """The parameters and condition names a condition definition may ask for."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self.conditions: Conditions | None = None

    def has_parameter(self, name: str) -> bool:
        return name in self.params

    def param_value(self, name: str) -> Any:
        return self.params[name]

    def has_resource(self, name: str) -> bool:
        return False

    def condition(self, name: str) -> bool:
        assert self.conditions is not None
        return self.conditions.value(name)


class Counted:
    """Conditions over ``definitions``, counting how often a definition is evaluated."""

    def __init__(self, definitions: dict[str, Any], params: dict[str, Any] | None = None) -> None:
        self.calls = 0
        self.ctx = Ctx(params or {})
        parser = Parser(VERSION, VERSION.functions, VERSION.condition_functions)
        self.conditions = Conditions(definitions, parser, self.factory)
        self.ctx.conditions = self.conditions

    def factory(self) -> Any:
        self.calls += 1
        return self.ctx


# -- lazy and memoised ---------------------------------------------------------------------------


def test_nothing_is_evaluated_until_asked() -> None:
    counted = Counted({"a": {"equals": [1, 1]}, "b": {"get_param": "missing"}})
    assert counted.calls == 0
    assert counted.conditions.value("a") is True
    assert counted.calls == 1  # "b" (which would fail) was never looked at


def test_values_are_memoised() -> None:
    counted = Counted({"a": {"equals": [{"get_param": "p"}, "x"]}}, {"p": "x"})
    assert counted.conditions.value("a") is True
    assert counted.conditions.value("a") is True
    assert counted.conditions.evaluate("a", ("resources", "r", "condition")) is True
    assert counted.calls == 1


def test_a_shared_reference_is_evaluated_once() -> None:
    counted = Counted(
        {
            "base": {"equals": [1, 1]},
            "left": {"not": "base"},
            "right": {"and": ["base", {"not": "left"}]},
        }
    )
    assert counted.conditions.value("right") is True
    assert counted.conditions.value("left") is False
    assert counted.calls == 3  # base, left and right, once each


def test_boolean_definitions_need_no_evaluation() -> None:
    counted = Counted({"t": True, "f": False})
    assert (counted.conditions.value("t"), counted.conditions.value("f")) == (True, False)
    assert counted.calls == 0


def test_validate_all_evaluates_every_definition() -> None:
    # Quirk 13, Rec: an unreferenced condition cannot hide an error.
    counted = Counted({"ok": True, "bad": {"get_param": "p"}, "worse": {"not": "nosuch"}}, {"p": 1})
    errors = counted.conditions.validate_all()
    assert [e.message for e in errors] == [
        'The definition of condition "bad" is invalid: 1',
        'Invalid condition "nosuch"',
    ]
    assert all(e.category == CATEGORY for e in errors)


def test_a_failed_evaluation_is_not_left_half_done() -> None:
    counted = Counted({"a": {"not": "nosuch"}})
    for _ in range(2):  # the second attempt fails the same way, not as a cycle
        with pytest.raises(StackValidationFailed, match='Invalid condition "nosuch"'):
            counted.conditions.value("a")


def test_names_and_membership() -> None:
    conditions = Counted({"a": True, "b": False}).conditions
    assert conditions.names == ["a", "b"]
    assert "a" in conditions
    assert "c" not in conditions
    assert 1 not in conditions


# -- cycles --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("definitions", "start"),
    [
        ({"a": {"not": "a"}}, "a"),
        ({"a": {"not": "b"}, "b": {"not": "a"}}, "a"),
        ({"a": {"and": ["b", True]}, "b": {"or": ["c", False]}, "c": {"not": "a"}}, "a"),
        ({"x": True, "a": {"or": ["x", "a"]}}, "a"),  # found even after a deciding operand
    ],
)
def test_cycles_are_errors(definitions: dict[str, Any], start: str) -> None:
    conditions = Counted(definitions).conditions
    with pytest.raises(StackValidationFailed) as info:
        conditions.value(start)
    err = info.value
    assert err.message.startswith("Circular definition for condition")
    assert err.category == CATEGORY
    assert err.path[0] == "conditions"
    assert err.full_message.startswith("Condition validation error: conditions.")


def test_cycle_through_build_stack_is_located() -> None:
    stack = build_stack(
        "heat_template_version: 2016-10-14\n"
        "conditions:\n  a: {not: b}\n  b: {not: a}\n"
        "resources:\n  r: {type: OS::Heat::None, condition: a}\n"
    )
    messages = [e.full_message for e in stack.errors]
    assert (
        'Condition validation error: conditions.a: Circular definition for condition "a"'
        in messages
    )
    located = [e for e in stack.errors if e.path == ("conditions", "a")]
    assert located and located[0].location is not None
    assert located[0].location.line == 3


# -- definitions must be booleans ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("definition", "shown"),
    [
        ("c1", "c1"),  # a bare string is not a reference to condition c1
        ("'true'", "true"),
        ("1", "1"),
        ("0", "0"),
        ("null", "None"),
        ("[true]", "[True]"),
        ("{a: 1}", "{'a': 1}"),
        ("{unknown_fn: 1}", "{'unknown_fn': 1}"),  # unknown names are data
        ("{get_param: s}", "test"),  # a string parameter (K04)
        ("{get_param: n}", "3"),
    ],
)
def test_definition_must_be_boolean(definition: str, shown: str) -> None:
    stack = build_stack(
        "heat_template_version: 2016-10-14\n"
        "parameters:\n  s: {type: string, default: test}\n  n: {type: number, default: 3}\n"
        f"conditions:\n  c1: true\n  c2: {definition}\n"
    )
    assert [(e.category, e.message) for e in stack.errors] == [
        (CATEGORY, f'The definition of condition "c2" is invalid: {shown}')
    ]


@pytest.mark.parametrize(
    ("definition", "value"),
    [
        ("true", True),
        ("false", False),
        ("{get_param: b}", True),  # a boolean parameter
        ("{not: c1}", False),  # references go through not/and/or
        ("{and: [c1, {get_param: b}]}", True),
        ("{or: [false, {not: c1}]}", False),
        ("{equals: [{get_param: b}, true]}", True),
    ],
)
def test_boolean_definitions(definition: str, value: bool) -> None:
    stack = build_stack(
        "heat_template_version: 2016-10-14\n"
        "parameters:\n  b: {type: boolean, default: 'yes'}\n"
        f"conditions:\n  c1: true\n  c2: {definition}\n"
    )
    assert stack.errors == []
    assert stack.conditions.value("c2") is value


def test_definition_error_is_located_at_the_definition() -> None:
    stack = build_stack("heat_template_version: 2016-10-14\nconditions:\n  c: 1\n")
    [err] = stack.errors
    assert err.path == ("conditions", "c")
    assert err.location is not None


def test_conditions_section_must_be_a_map() -> None:
    stack = build_stack("heat_template_version: 2016-10-14\nconditions: [a]\n")
    assert [e.full_message for e in stack.errors] == [
        "Conditions validation error: conditions: Condition definitions must be a map. "
        "Found a list instead"
    ]


def test_null_conditions_section_is_empty() -> None:
    stack = build_stack("heat_template_version: 2016-10-14\nconditions:\n")
    assert stack.errors == []
    assert stack.conditions.names == []


# -- uses: a name, a boolean or an expression; undefined names located where used ------------------


def test_a_use_that_is_a_string_is_a_name() -> None:
    conditions = Counted({"c1": False}).conditions
    assert conditions.evaluate("c1", ("resources", "r", "condition")) is False
    assert conditions.evaluate(True, ("resources", "r", "condition")) is True
    assert conditions.evaluate({"not": "c1"}, ("resources", "r", "condition")) is True


@pytest.mark.parametrize(
    ("use", "path"),
    [
        ("resources:\n  r: {type: OS::Heat::None, condition: nosuch}\n", "resources.r.condition"),
        ("outputs:\n  o: {value: 1, condition: nosuch}\n", "outputs.o.condition"),
        ("outputs:\n  o: {value: {if: [nosuch, a, b]}}\n", "outputs.o.value.if"),
        (
            "resources:\n  r: {type: OS::Heat::Value, properties: {value: {if: [nosuch, 1, 2]}}}\n",
            "resources.r.properties.value.if",
        ),
    ],
)
def test_undefined_name_is_located_where_it_is_used(use: str, path: str) -> None:
    stack = build_stack("heat_template_version: 2016-10-14\n" + use, types=HEAT_TEST_TYPES)
    assert [(render_path(e.path), e.message) for e in stack.errors] == [
        (path, 'Invalid condition "nosuch"')
    ]
    assert stack.errors[0].location is not None


@pytest.mark.parametrize(
    ("use", "prefix"),
    [
        ("conditions:\n  c: {not: nosuch}\n", "conditions.c"),
        ("conditions:\n  c: {and: [true, nosuch]}\n", "conditions.c"),
        ("outputs:\n  o: {value: 1, condition: {not: nosuch}}\n", "outputs.o.condition"),
        ("outputs:\n  o: {value: {if: [{or: [false, nosuch]}, a, b]}}\n", "outputs.o.value.if"),
        (
            "parameters:\n  p: {type: string, default: nosuch}\n"
            "outputs:\n  o: {value: {if: [{get_param: p}, a, b]}}\n",
            "outputs.o.value.if",
        ),
    ],
)
def test_undefined_name_inside_an_expression_is_located(use: str, prefix: str) -> None:
    stack = build_stack("heat_template_version: 2016-10-14\n" + use)
    invalid = [e for e in stack.errors if e.message == 'Invalid condition "nosuch"']
    assert invalid
    assert all(render_path(e.path).startswith(prefix) for e in invalid)


def test_resource_condition_selects_resources() -> None:
    stack = build_stack(
        "heat_template_version: 2016-10-14\n"
        "parameters:\n  env: {type: string, default: test}\n"
        "conditions:\n  prod: {equals: [{get_param: env}, prod]}\n"
        "resources:\n"
        "  big: {type: OS::Heat::None, condition: prod}\n"
        "  small: {type: OS::Heat::None, condition: {not: prod}}\n"
        "  always: {type: OS::Heat::None, condition: true}\n"
        "  never: {type: OS::Heat::None, condition: false}\n",
        environment={"parameters": {"env": "prod"}},
    )
    assert stack.errors == []
    assert sorted(stack.resources) == ["always", "big"]
    assert stack.disabled == {"small", "never"}


# -- AWS 2010 ------------------------------------------------------------------------------------

AWS = """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Env: {Type: String, Default: prod}
Mappings:
  Sizes: {prod: {big: 'true'}, test: {big: 'false'}}
Conditions:
  IsProd: {'Fn::Equals': [{Ref: Env}, prod]}
  NotProd: {'Fn::Not': [IsProd]}
  Both: {'Fn::And': [IsProd, {'Fn::Not': [NotProd]}]}
  Either: {'Fn::Or': [NotProd, IsProd]}
  Mapped: {'Fn::Equals': [{'Fn::FindInMap': [Sizes, {Ref: Env}, big]}, 'true']}
  Named: {'Fn::Equals': [{Ref: 'AWS::StackName'}, web]}
  Literal: true
Resources:
  A: {Type: 'OS::Heat::None', Condition: IsProd}
  B: {Type: 'OS::Heat::None', Condition: NotProd}
  C: {Type: 'OS::Heat::None', Condition: Both}
  D: {Type: 'OS::Heat::None', Condition: Either}
  E: {Type: 'OS::Heat::None', Condition: Mapped}
  F: {Type: 'OS::Heat::None', Condition: {'Fn::Not': [Literal]}}
Outputs:
  Size: {Value: {'Fn::If': [IsProd, large, small]}}
"""


@pytest.mark.parametrize(
    ("env", "values", "enabled"),
    [
        (
            "prod",
            {
                "IsProd": True,
                "NotProd": False,
                "Both": True,
                "Either": True,
                "Mapped": True,
                "Named": True,
                "Literal": True,
            },
            ["A", "C", "D", "E"],
        ),
        (
            "test",
            {
                "IsProd": False,
                "NotProd": True,
                "Both": False,
                "Either": True,
                "Mapped": False,
                "Named": True,
                "Literal": True,
            },
            ["B", "D"],
        ),
    ],
)
def test_aws_conditions(env: str, values: dict[str, bool], enabled: list[str]) -> None:
    stack = build_stack(
        AWS, environment={"parameters": {"Env": env}}, identity=StackIdentity(name="web")
    )
    assert stack.errors == []
    assert {name: stack.conditions.value(name) for name in stack.conditions.names} == values
    assert sorted(stack.resources) == enabled
    expected_size = "large" if env == "prod" else "small"
    assert stack.output_values()["Size"].value == expected_size


def aws_errors(conditions: str) -> list[KilnError]:
    stack: StackDefinition = build_stack(
        "AWSTemplateFormatVersion: '2010-09-09'\n"
        "Parameters:\n  P: {Type: String, Default: x}\n"
        "Resources:\n  R: {Type: 'OS::Heat::None'}\n"
        f"Conditions:\n{conditions}"
    )
    return stack.errors


@pytest.mark.parametrize(
    ("condition", "kind", "path", "message"),
    [
        (
            "  C: {'Fn::Equals': [{Ref: R}, R]}\n",  # Ref in conditions: parameters only
            InvalidTemplateReference,
            "Conditions.C.Fn::Equals[0].Ref",
            'The specified reference "R" (in unknown) is incorrect.',
        ),
        (
            "  C: {'Fn::Not': IsProd}\n",
            StackValidationFailed,
            "Conditions.C.Fn::Not",
            'Arguments to "Fn::Not" must be of the form: [condition]',
        ),
        (
            "  C: {'Fn::GetAtt': [R, x]}\n",
            StackValidationFailed,
            "Conditions.C.Fn::GetAtt",
            'The function "Fn::GetAtt" is invalid in this context',
        ),
        (
            "  C: {'Fn::Equals': [{'Fn::FindInMap': [M, x, y]}, 1]}\n",
            StackValidationFailed,
            "Conditions.C.Fn::Equals[0].Fn::FindInMap",
            'Mapping "M" has no entry [x][y]',
        ),
        (
            "  C: {'Fn::Equals': [{Ref: P}, x], extra: 1}\n",  # two keys: data, resolved inside
            StackValidationFailed,
            None,
            "The definition of condition \"C\" is invalid: {'Fn::Equals': ['x', 'x'], 'extra': 1}",
        ),
        (
            "  C: {equals: [1, 1]}\n",  # HOT spelling: plain data in CFN
            StackValidationFailed,
            None,
            "The definition of condition \"C\" is invalid: {'equals': [1, 1]}",
        ),
    ],
)
def test_aws_condition_errors(
    condition: str, kind: type[KilnError], path: str | None, message: str
) -> None:
    [err] = aws_errors(condition)
    assert (type(err), err.message, err.category) == (kind, message, CATEGORY)
    if path is not None:
        assert render_path(err.path) == path


def test_heat_cfn_has_no_conditions() -> None:
    stack = build_stack(
        "HeatTemplateFormatVersion: '2012-12-12'\n"
        "Resources:\n  R: {Type: 'OS::Heat::None', Condition: false}\n"
    )
    # The key is unknown (and ignored) there: the resource stays enabled.
    assert stack.errors == []
    assert list(stack.resources) == ["R"]
