"""Fuzz tests of the evaluator: for any input, only KilnError subclasses escape.

Hypothesis writes random templates for every template version (HOT and both CFN
formats), as data and as YAML text, with random parameters, conditions,
resources (test types, unknown types, template resources from a random files
map), outputs and mappings, whose values hold random calls of every intrinsic
function; with random environments and parameter values (strategies in
evaluator_fuzz_values.py, evaluator_fuzz_mutants.py, evaluator_fuzz_support.py).
Two deterministic sweeps break one part at a time of valid calls and of a rich
valid case, which random data reaches too seldom. Properties:

- ``build_stack`` (with the test type catalogue and with the default unchecked
  types) raises only KilnErrors and collects only KilnErrors with a message;
  for a valid stack, simulated creation, output resolution, the reports and the
  graph renderings raise only KilnErrors.
- Parsing, validating, resolving (before and after creation) and partially
  resolving any value in a valid stack of any version raises only KilnErrors;
  so does evaluating any value as a condition.

``yaql`` expressions are small ones or the special values; hostile expressions
(budgets, quotas) are left to its own tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest
import yaml
from evaluator_fuzz_mutants import REMOVE, VALID_ARGS, mutated_calls, replaced, slots
from evaluator_fuzz_support import FIXED_FILES, cases, rich_case, skeleton, skeleton_templates
from evaluator_fuzz_values import (
    CONDITIONS,
    DEEP_JSON,
    DEEP_LIST,
    DEEPISH_JSON,
    HUGE_HEX,
    SPECIALS,
    VERSIONS,
    known_functions,
    scalars,
    version_values,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.core.errors import KilnError, ValidationFailed, raise_all
from kiln.graph.render import render_dot, render_text
from kiln.schema.checkers import builtin_checkers
from kiln.schema.resource_types import ResourceTypes
from kiln.template.environment import parse_environment
from kiln.template.functions.base import dependencies, resolve_top, validate_functions
from kiln.template.inputs import build_stack
from kiln.template.report import (
    partial_resolve,
    resolved_outputs,
    resolved_resources,
    validate_document,
)
from kiln.template.stack import Facade, StackDefinition
from kiln.template.template import Template
from kiln.template.versions import TemplateVersion
from kiln.testing.heat_types import HEAT_TEST_TYPES, CreatedState

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEWER = settings(max_examples=80, parent=FUZZ)
MORE = settings(max_examples=500, parent=FUZZ)


# -- checks --------------------------------------------------------------------------------------


def check_error(err: BaseException) -> None:
    """``err`` is a KilnError with a message, a path and a printable form."""
    assert isinstance(err, KilnError), f"{type(err).__name__}: {err}"
    assert isinstance(err.message, str) and err.message
    assert isinstance(err.path, tuple)
    assert isinstance(str(err), str)
    assert isinstance(err.to_dict(), dict)
    if isinstance(err, ValidationFailed):
        for inner in err.errors:
            check_error(inner)


FAILED = object()


def guarded(action: Callable[[], Any]) -> Any:
    """Run ``action``: a KilnError is an accepted outcome (gives FAILED); others propagate."""
    try:
        return action()
    except KilnError as err:
        check_error(err)
        return FAILED


def exercise(case: dict[str, Any], types: ResourceTypes | None) -> StackDefinition | None:
    """Build one case and, when valid, create, resolve, report and draw it."""
    stack = guarded(lambda: build_stack(**case, types=types))
    if stack is FAILED:
        return None
    for err in stack.errors:
        check_error(err)
    if stack.errors:
        return stack
    guarded(lambda: validate_document(stack))
    guarded(lambda: resolved_resources(stack))
    guarded(lambda: resolved_outputs(stack))
    guarded(lambda: render_text(stack.graph))
    guarded(lambda: render_text(stack.graph, reduce=True))
    guarded(lambda: render_dot(stack.graph))
    guarded(lambda: stack.graph.levels())
    guarded(lambda: [out.to_dict() for out in stack.output_values().values()])
    guarded(lambda: CreatedState().create_all(stack))
    # After creation, get_resource and get_attr have values: resolve everything again.
    guarded(lambda: [out.to_dict() for out in stack.output_values().values()])
    guarded(lambda: resolved_resources(stack))
    guarded(lambda: resolved_outputs(stack))
    return stack


def to_yaml(data: Any) -> str | None:
    """YAML text of data; None when PyYAML cannot write it (too deep, huge ints)."""
    try:
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return text.replace(f"'{HUGE_HEX}'", HUGE_HEX)


def as_text(case: dict[str, Any]) -> dict[str, Any] | None:
    """The case with its template (and a mapping environment) as YAML text."""
    text = to_yaml(case["template"])
    if text is None:
        return None
    env = case["environment"]
    return {**case, "template": text, "environment": to_yaml(env) if isinstance(env, dict) else env}


# -- whole stacks through the public API ----------------------------------------------------


@FUZZ
@given(cases())
def test_random_templates_as_data(case: dict[str, Any]) -> None:
    exercise(case, HEAT_TEST_TYPES)
    exercise(case, None)


@FEWER
@given(cases())
def test_random_templates_as_yaml_text(case: dict[str, Any]) -> None:
    text_case = as_text(case)
    if text_case is not None:
        exercise(text_case, HEAT_TEST_TYPES)


@FUZZ
@given(cases(skeleton_templates(), quiet=st.booleans()))
def test_random_values_in_a_valid_skeleton(case: dict[str, Any]) -> None:
    exercise(case, HEAT_TEST_TYPES)


# One version of each family, the oldest HOT and the newest (conditions, all keys); and
# the special values that matter to declarations and environments (types, extremes, text
# too deep or too long), so that the sweep stays within a few seconds.
SWEEP_VERSIONS = [v for v in VERSIONS if v.date in ("2010-09-09", "2013-05-23", "2021-04-16")]
CASE_SPECIALS = [None, True, -1, 10**400, math.inf, math.nan, "", "9" * 5000, [], {}, [None],
                 {"": None}, DEEP_JSON, DEEPISH_JSON, "(" * 2000 + ")" * 2000,
                 "a{99999999999999999999}", DEEP_LIST]  # fmt: skip


def case_mutations() -> Iterator[tuple[str, dict[str, Any]]]:
    """A rich valid case with one part of its template, environment or parameter values
    replaced by a special value or removed."""
    for version in SWEEP_VERSIONS:
        case = rich_case(version)
        # environment_files holds (name, data) pairs the caller builds: only data varies.
        for part, under in (("template", ()), ("environment", ()), ("parameters", ()),
                            ("environment_files", (0, 1))):  # fmt: skip
            for where in slots(case[part]):
                if where[: len(under)] != under:
                    continue
                for special in (*CASE_SPECIALS, REMOVE):
                    yield version.name, {**case, part: replaced(case[part], where, special)}


def text_mutations() -> Iterator[tuple[str, dict[str, Any]]]:
    """A rich valid case as YAML text, with an int too long for decimal text in each place
    of the template (YAML reads it from hexadecimal; data cannot carry it)."""
    for version in SWEEP_VERSIONS:
        case = rich_case(version)
        for where in slots(case["template"])[1:]:
            text = to_yaml(replaced(case["template"], where, HUGE_HEX))
            if text is not None:
                yield version.name, {**case, "template": text}


def test_every_single_mutation_of_a_valid_case_builds_or_fails_with_kiln_errors() -> None:
    """Deterministic: parameters, constraints, conditions, resources, outputs and the
    environment, each part broken in turn."""
    crashes: dict[str, str] = {}
    for name, case in itertools.chain(case_mutations(), text_mutations()):
        try:
            exercise(case, HEAT_TEST_TYPES)
        except Exception as exc:  # collected, so that one run shows every crash
            crashes.setdefault(f"{type(exc).__name__}: {exc}"[:200], f"{name} {case!r}")
    assert not crashes, "\n".join(f"{k}\n    {v[:300]}" for k, v in crashes.items())


# -- any value in a valid stack ------------------------------------------------------------------

FACADE = Facade(metadata={"m": [1, {"k": "v"}]}, deletion_policy="Retain", update_policy={})


@cache
def valid_stack(version: TemplateVersion, created: bool) -> StackDefinition:
    """A valid stack of ``version`` (a nested one: resource_facade works), maybe created."""
    data = skeleton(version, {"a": [1, {"b": "c"}]}, "text", 1, None)
    stack = StackDefinition(
        Template.from_data(data),
        parse_environment({"parameter_defaults": {"p2": "u,v"}}),
        FIXED_FILES,
        types=HEAT_TEST_TYPES,
        facade=FACADE,
        depth=1,
    )
    assert not stack.errors, stack.errors
    if created:
        CreatedState().create_all(stack)
    return stack


@st.composite
def stacks_and_values(draw: st.DrawFn) -> tuple[StackDefinition, Any]:
    version = draw(st.sampled_from(VERSIONS))
    value = st.one_of(mutated_calls(version), version_values(version, inputs=False))
    return valid_stack(version, draw(st.booleans())), draw(value)


PATHS = [("outputs", "o", "value"), ("resources", "r0", "properties", "value")]


def evaluate(stack: StackDefinition, raw: Any, path: tuple[str, ...]) -> None:
    """Parse, validate, resolve and partially resolve ``raw``, and use it as a condition."""
    parsed = guarded(lambda: stack.parser.parse(raw, path))
    if parsed is not FAILED:
        for err in validate_functions(parsed, stack):
            check_error(err)
        guarded(lambda: resolve_top(parsed, stack))
        guarded(lambda: partial_resolve(parsed, stack))
        guarded(lambda: stack.depends_on_unknown(parsed))
        guarded(lambda: dependencies(parsed, stack))
    guarded(lambda: stack.parser.in_condition_context().parse(raw, path))
    if stack.version.has_conditions:
        guarded(lambda: stack.conditions.evaluate(raw, path))


@MORE
@given(stacks_and_values(), st.sampled_from(PATHS))
def test_any_value_evaluates_or_fails_with_kiln_errors(
    stack_and_value: tuple[StackDefinition, Any], path: tuple[str, ...]
) -> None:
    evaluate(*stack_and_value, path)


def single_mutations() -> Iterator[tuple[TemplateVersion, dict[str, Any]]]:
    """Every valid example call with one part replaced by a special value or removed, in
    the first and the last version that knows the function (variants differ)."""
    for name, examples in VALID_ARGS.items():
        versions = [v for v in VERSIONS if name in known_functions(v)]
        for version in dict.fromkeys((versions[0], versions[-1])):
            for args in examples:
                for where in slots(args):
                    for special in (*SPECIALS, REMOVE):
                        yield version, {name: replaced(args, where, special)}


def test_every_single_mutation_of_a_valid_call_evaluates_or_fails_with_kiln_errors() -> None:
    """Deterministic: what the random tests may miss for want of examples."""
    crashes: dict[str, str] = {}
    for version, raw in single_mutations():
        for created in (False, True):
            try:
                evaluate(valid_stack(version, created), raw, PATHS[0])
            except Exception as exc:  # collected, so that one run shows every crash
                crashes.setdefault(f"{type(exc).__name__}: {exc}"[:200], f"{version.name} {raw!r}")
    assert not crashes, "\n".join(f"{k}\n    {v[:300]}" for k, v in crashes.items())


@FUZZ
@given(st.sampled_from(VERSIONS), st.data())
def test_any_condition_operand_evaluates_or_fails_with_kiln_errors(
    version: TemplateVersion, data: st.DataObject
) -> None:
    if not version.has_conditions:
        return
    stack = valid_stack(version, False)
    value = data.draw(st.one_of(mutated_calls(version), version_values(version, inputs=False)))
    name = data.draw(
        st.sampled_from(
            [
                "equals",
                "Fn::Equals",
                "not",
                "Fn::Not",
                "and",
                "or",
                "Fn::And",
                "Fn::Or",
                "contains",
                "get_param",
                "Ref",
            ]
        )
    )
    operand = data.draw(st.sampled_from([value, [value], [value, value], [*CONDITIONS, value]]))
    guarded(lambda: stack.conditions.evaluate({name: operand}, ("conditions", "x")))
    guarded(lambda: stack.conditions.evaluate(value, ("conditions", "x")))


# -- custom constraint checkers, which see user values -------------------------------------


@FEWER
@given(st.one_of(scalars, st.lists(scalars, max_size=2)))
def test_custom_constraint_checkers_answer_any_value(value: Any) -> None:
    for name, checker in builtin_checkers().items():
        result = checker(value)
        assert result is None or isinstance(result, str), name


# -- the starting points are valid -----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_the_cases_the_sweeps_break_are_valid(version: TemplateVersion) -> None:
    """Each sweep breaks one part of something valid, so that the rest gets exercised."""
    stack = exercise(rich_case(version), HEAT_TEST_TYPES)
    assert stack is not None and stack.errors == []
    assert all(out.error is None for out in stack.output_values().values())
    assert valid_stack(version, created=True).errors == []


@pytest.mark.parametrize("name", sorted(VALID_ARGS))
def test_every_function_has_valid_examples(name: str) -> None:
    """Some examples fit only some versions: in the newest that knows the function,
    most examples are valid."""
    version = [v for v in VERSIONS if name in known_functions(v)][-1]
    stack = valid_stack(version, created=True)
    valid = 0
    for args in VALID_ARGS[name]:
        try:
            if name in version.functions:
                parsed = stack.parser.parse({name: args}, PATHS[0])
                raise_all(validate_functions(parsed, stack))
                resolve_top(parsed, stack)
            else:  # a condition function
                stack.conditions.evaluate({name: args}, ("conditions", "x"))
        except KilnError:
            continue
        valid += 1
    assert valid * 2 > len(VALID_ARGS[name])
