"""Tests of the yaql function and its sandbox (reference 2.12, 8.4, quirk 9)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest
from fn_collections_support import PATH, ev, fails, parse, parse_fails, stub_context, validate

from kiln.core.errors import StackValidationFailed
from kiln.template.functions import yaql_function as yq
from kiln.template.functions.base import FunctionSpec, Parser, resolve_top
from kiln.template.versions import get_version

# Hostile expressions must stop on their own: a hang fails here, never a speed check.
pytestmark = pytest.mark.timeout(60)


def test_heat_limits() -> None:
    assert yq.LIMIT_ITERATORS == 200
    assert yq.MEMORY_QUOTA == 10000


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"yaql": {"expression": "$.data.nums.sum()", "data": {"nums": [1, 2, 3]}}}, 6),
        ({"yaql": {"expression": "$.data.where($ > 1)", "data": [1, 2, 3]}}, [2, 3]),
        ({"yaql": {"expression": "$.data"}}, {}),
        ({"yaql": {"expression": "$.data", "data": None}}, None),
        ({"yaql": {"expression": "range(0, 300).len()"}}, 300),
        ({"yaql": {"expression": "list(range(0, 200)).len()"}}, 200),
        (
            {"yaql": {"expression": "$.data.select($.n)", "data": [{"n": "a"}, {"n": "b"}]}},
            ["a", "b"],
        ),
        (
            {"yaql": {"expression": "$.data", "data": {"m": {"k": [1, {"x": None}]}}}},
            {"m": {"k": [1, {"x": None}]}},
        ),
        ({"yaql": {"expression": "$.data.a + $.data.b", "data": {"a": "x", "b": "y"}}}, "xy"),
        ({"yaql": {"expression": "$.data", "data": {"echo": [1, {"echo": 2}]}}}, [1, 2]),
        ({"yaql": {"expression": {"echo": "1 + 2"}}}, 3),
        ({"yaql": {"echo": {"expression": "$.data * 2", "data": 4}}}, 8),
        ({"yaql": {"expression": "$.data", "data": {"absent": 1}}}, {}),
        ({"yaql": {"expression": "pow(3, 2)"}}, 9),
        ({"yaql": {"expression": "pow(3, 2, 5)"}}, 4),
        ({"yaql": {"expression": "pow(2, -1)"}}, 0.5),
        ({"yaql": {"expression": "pow(1, 100000000000)"}}, 1),
        ({"yaql": {"expression": "pow(-1, 100000000001)"}}, -1),
        ({"yaql": {"expression": "pow(0, 100000000000)"}}, 0),
        ({"yaql": {"expression": "pow(2, 100)"}}, 2**100),
        ({"yaql": {"expression": "pow(3, 100000000000000, 1000000007)"}}, 745771538),
        ({"yaql": {"expression": "shiftBitsLeft(8, 2)"}}, 32),
        ({"yaql": {"expression": "shiftBitsRight(8, 2)"}}, 2),
        ({"yaql": {"expression": "[1, 2] * 2"}}, [1, 2, 1, 2]),
        ({"yaql": {"expression": "2 * [1]"}}, [1, 1]),
        ({"yaql": {"expression": "'ab' * 2"}}, "abab"),
        ({"yaql": {"expression": "2 * 3"}}, 6),
    ],
)
def test_yaql(data: Any, expected: Any) -> None:
    assert ev(data) == expected


@pytest.mark.parametrize(
    ("expression", "data", "expected"),
    [
        # quirk 9: sets become sorted lists
        ("$.data.keys()", {"b": 1, "a": 2, "c": 3}, ["a", "b", "c"]),
        ("set(3, 1, 2)", None, [1, 2, 3]),
        ("$.data.toSet()", ["y", "x", "y"], ["x", "y"]),
        ("dict(k => set(2, 1))", None, {"k": [1, 2]}),
    ],
)
def test_yaql_sets_become_sorted_lists(expression: str, data: Any, expected: Any) -> None:
    result = ev({"yaql": {"expression": expression, "data": data}})
    assert result == expected
    assert type(result) is type(expected)


def test_yaql_unsortable_set_becomes_a_list() -> None:
    result = ev({"yaql": {"expression": "set(1, 'a', 2)"}})
    assert isinstance(result, list)
    assert sorted(result, key=str) == [1, 2, "a"]


def test_yaql_results_are_plain_lists_and_dicts() -> None:
    result = ev({"yaql": {"expression": "$.data", "data": {"l": [[1], {"m": [2]}]}}})
    assert type(result) is dict
    assert type(result["l"]) is list
    assert type(result["l"][0]) is list
    assert type(result["l"][1]) is dict
    assert type(result["l"][1]["m"]) is list


def test_yaql_f18_collection_limit() -> None:
    err = fails({"yaql": {"expression": "list(range(0, 500))"}}, "Collection length exceeds 200")
    assert err.path == (*PATH, "yaql")
    fails({"yaql": {"expression": "range(0, 201)"}}, "Collection length exceeds 200 elements")
    fails(
        {"yaql": {"expression": "$.data", "data": list(range(201))}},
        "Collection length exceeds 200 elements",
    )


def test_yaql_f19_syntax_error_at_parse_time() -> None:
    err = parse_fails({"yaql": {"expression": "1 +"}}, "Bad expression")
    assert "unexpected end of statement" in err.message
    assert err.path == (*PATH, "yaql")


def test_yaql_computed_expression_is_checked_when_resolved() -> None:
    data = {"yaql": {"expression": {"echo": "1 +"}}}
    assert validate(data) == []
    fails(data, "Bad expression")
    fails({"yaql": {"expression": {"echo": 5}}}, 'The "expression" argument to yaql must contain')


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"yaql": "1 + 1"}, 'Arguments to "yaql" must be a map.'),
        ({"yaql": ["1"]}, 'Arguments to "yaql" must be a map.'),
        ({"yaql": {"data": 1}}, '"yaql" syntax should be'),
        ({"yaql": {"expression": "1", "extra": 1}}, '"yaql" syntax should be'),
        ({"yaql": {"expression": {"absent": 1}}}, '"yaql" syntax should be'),
        ({"yaql": {"expression": 5}}, 'The "expression" argument to yaql must contain a string.'),
        ({"yaql": {"expression": "1 + + )"}}, "Bad expression"),
        ({"yaql": {"expression": "'unterminated"}}, "Bad expression"),
    ],
)
def test_yaql_shape_errors_at_parse_time(data: Any, message: str) -> None:
    parse_fails(data, message)


def test_yaql_whole_argument_computed() -> None:
    fails({"yaql": {"echo": {"data": 1}}}, '"yaql" syntax should be')
    fails({"yaql": {"echo": "1"}}, 'Arguments to "yaql" must be a map.')


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "ZeroDivisionError"),
        ("$.data.nosuch()", 'Unknown method "nosuch"'),
        ("nosuch(1)", 'Unknown function "nosuch"'),
        ("int('x')", "ValueError"),
        ("now()", "is a datetime, not JSON-like data"),
        ("regex('a')", "not JSON-like data"),
        ("dict(list(1) => 2)", "has a map key"),
        ("def(f, f()) -> f()", "RecursionError"),
    ],
)
def test_yaql_runtime_errors_become_validation_errors(expression: str, message: str) -> None:
    err = fails({"yaql": {"expression": expression, "data": {"a": 1}}}, message)
    assert err.path == (*PATH, "yaql")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("range(0, 100000000000).sum()", "Collection length exceeds 200 elements"),
        ("range(0, 1000000000000).select($ * 2).len()", "Collection length exceeds 200 elements"),
        ("range(0, 100000000000).len()", "The yaql expression was stopped"),
        ("sequence().len()", "The yaql expression was stopped"),
        ("1.repeat().len()", "The yaql expression was stopped"),
        (
            "range(0, 199).select(range(0, 199).select($).sum()).sum()",
            "The yaql expression was stopped",
        ),
        ("'ab' * 100000000", "Expression consumed too much memory"),
        ("[1, 2] * 100000000", "Expression consumed too much memory"),
        ("100000000 * [1, 2]", "Expression consumed too much memory"),
        ("100000000 * 'ab'", "Expression consumed too much memory"),
        ("let(x => 'a' * 5000) -> $x.replace('a', $x)", "Expression consumed too much memory"),
        ("pow(3, 100000000)", "Expression consumed too much memory"),
        ("pow(10, 100000)", "Expression consumed too much memory"),
        ("shiftBitsLeft(1, 100000000000)", "Expression consumed too much memory"),
        (
            "pow(pow(7, 9000), pow(7, 9000) - 1, pow(3, 9000) + 2)",
            "The yaql expression was stopped",
        ),
    ],
)
def test_yaql_hostile_expressions_fail_fast(expression: str, message: str) -> None:
    err = fails({"yaql": {"expression": expression}}, message)
    assert err.path == (*PATH, "yaql")


def test_yaql_step_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yq, "MAX_EVALUATION_STEPS", 5000)
    fails(
        {"yaql": {"expression": "range(0, 150).select($ * 2).sum()"}},
        "The yaql expression was stopped: its evaluation took more than 5000 steps",
    )
    assert ev({"yaql": {"expression": "1 + 1"}}) == 2


def test_yaql_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yq, "MAX_EVALUATION_SECONDS", 0.0)
    fails(
        {"yaql": {"expression": "range(0, 150).select($ * 2).sum()"}},
        "its evaluation took more than 0 seconds",
    )


@pytest.mark.parametrize(
    ("limit", "data", "message"),
    [
        ("MAX_RESULT_ITEMS", [[1, 2], [3, 4], [5]], "has more than 5 items"),
        ("MAX_RESULT_CHARS", ["abc", "def"], "has more than 5 characters"),
    ],
)
def test_yaql_result_size_bound(
    monkeypatch: pytest.MonkeyPatch, limit: str, data: Any, message: str
) -> None:
    monkeypatch.setattr(yq, limit, 5)
    fails({"yaql": {"expression": "$.data", "data": data}}, message)


def test_yaql_restores_the_previous_trace_function() -> None:
    calls: list[str] = []

    def tracer(frame: Any, event: str, arg: Any) -> None:
        calls.append(event)

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        assert ev({"yaql": {"expression": "1 + 1"}}) == 2
        with pytest.raises(StackValidationFailed):
            ev({"yaql": {"expression": "sequence().len()"}})
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(previous)
    assert sys.gettrace() is previous


def test_yaql_engine_and_parses_are_shared() -> None:
    assert yq._engine() is yq._engine()
    assert yq.parse_expression("$.data") is yq.parse_expression("$.data")


def test_yaql_parallel_evaluations() -> None:
    results: dict[int, Any] = {}
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            results[n] = ev({"yaql": {"expression": f"$.data.sum() + {n}", "data": [n, n]}})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert results == {n: 3 * n for n in range(8)}


@pytest.mark.parametrize(("value", "expected"), [(1, False), (3, True)])
def test_yaql_as_a_condition_function(value: int, expected: bool) -> None:
    table = {"yaql": FunctionSpec.of(yq.Yaql)}
    parser = Parser(get_version("2017-09-01"), table, table).in_condition_context()
    parsed = parser.parse(
        {"yaql": {"expression": "$.data > 2", "data": value}}, ("conditions", "c")
    )
    assert resolve_top(parsed, stub_context()) is expected


def test_yaql_parse_result_is_a_yaql_call() -> None:
    parsed = parse({"yaql": {"expression": "$.data", "data": [1]}})
    assert isinstance(parsed, yq.Yaql)
