"""Tests of the yaql sandbox's regular expressions: the library's results, bounded work."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fn_collections_support import PATH, ev, fails

from kiln.schema import guarded_regex as gr
from kiln.template.functions import yaql_function as yq
from kiln.template.functions import yaql_regex as yr

# 34 and 46 letters: (a|aa)+$ backtracks some 2**34 times in re before failing.
BAD_34 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"
BAD_46 = "a" * 46 + "!"
STOPPED = "The yaql expression was stopped"
OUT_OF_TIME = "its evaluation took more than"


# Hostile expressions must stop on their own: a hang fails here, never a speed check.
pytestmark = pytest.mark.timeout(60)


def library_result(expression: str, data: Any) -> Any:
    """What the yaql library's own standard context (Heat's) makes of ``expression``."""
    import yaql

    engine = yaql.YaqlFactory().create(
        options={"yaql.limitIterators": yq.LIMIT_ITERATORS, "yaql.memoryQuota": yq.MEMORY_QUOTA}
    )
    try:
        return engine(expression).evaluate(data={"data": data}, context=yaql.create_context())
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def kiln_result(expression: str, data: Any) -> Any:
    try:
        return ev({"yaql": {"expression": expression, "data": data}})
    except Exception as exc:
        return getattr(exc, "message", str(exc))


# -- the library's results ----------------------------------------------------------------------

LIBRARY_CASES: list[tuple[str, Any]] = [
    # the library's documented examples
    ("regex('a.c').matches('abc')", None),
    ("regex('A.c').matches('abc')", None),
    ("regex('A.c', ignoreCase => true).matches('abc')", None),
    ("'abc'.matches('a.c')", None),
    ("'abc' =~ regex('a.c')", None),
    ("'abc' =~ 'a.c'", None),
    ("'acb' !~ regex('a.c')", None),
    ("'abc' !~ regex('a.c')", None),
    ("'abc' !~ 'a.c'", None),
    ("regex('a.c').search('abcabc')", None),
    ("regex('a.c').search('cabc', $)", None),
    ("regex('a.c').search('cabc', $.start)", None),
    ("regex('a.c').searchAll('abcadc')", None),
    ("regex('a.c').searchAll('abcadc', $)", None),
    ("regex('a.').split('abcadc')", None),
    ("regex('a.').split('abcadc', maxSplit => 1)", None),
    ("'abcadc'.split(regex('a.'))", None),
    ("'abcadc'.split(regex('a.'), maxSplit => 1)", None),
    ("regex('a.').replace('abcadc', 'xx')", None),
    ("regex('a.').replace('abcadc', 'xx', count => 1)", None),
    ("'abcadc'.replace(regex('a.'), 'xx')", None),
    (
        "regex('a.c').replaceBy('abcadc', switch($.value = 'abc' => xx, $.value = 'adc' => yy))",
        None,
    ),
    (
        "'abcadc'.replaceBy(regex('a.c'), switch($.value = 'abc' => xx, $.value = 'adc' => yy))",
        None,
    ),
    ("escapeRegex('a.')", None),
    ("isRegex(regex('a.c'))", None),
    ("isRegex(regex('a.c').matches('abc'))", None),
    # groups, flags and data
    ("regex('a(.)c').search('cabc', [$1, $2])", None),
    ("regex('(a)(.)c').searchAll('abcadc', [$1.value, $2.value, $3.value])", None),
    ("regex('(a)|b').searchAll('ab', $2)", None),
    ("regex('a(.)c').replaceBy('abcadc', $2.value)", None),
    ("'abcadc'.replace(regex('(a)(.)'), '\\\\2\\\\1')", None),
    ("regex('(?P<x>a)(b)?').replace('xaz', '<\\\\g<x>|\\\\2|\\\\g<0>>')", None),
    ("regex('^b', multiLine => true).matches('a\nb')", None),
    ("regex('^b').matches('a\nb')", None),
    ("regex('a.b', dotAll => true).matches('a\nb')", None),
    ("regex('a.b').matches('a\nb')", None),
    ("regex('STRASSE', ignoreCase => true).matches('strasse')", None),
    ("'K' =~ '(?i)\u212a'", None),
    ("$.data.where($ =~ '^web-\\d+$')", ["web-1", "db-1", "web-22", "web-x"]),
    ("$.data.select(regex('(\\w+)@(\\w+)').search($, $3.value))", ["a@b", "c@d", "e"]),
    ("regex('\\s*,\\s*').split($.data)", "a , b,c ,d"),
    ("'\u0661\u06623' =~ '^\\d+$'", None),
    ("regex('(?x) a b # comment').matches('ab')", None),
    ("regex('a++b').matches('aab')", None),
    ("regex('(?>a|ab)c').matches('abc')", None),
    # zero-width matches, counts out of range
    ("regex('x*').split('abxd')", None),
    ("regex('').replace('ab', '-')", None),
    ("regex('\\b').split('a b')", None),
    ("regex('a').replace('aaa', 'b', count => -1)", None),
    ("regex('a').split('aaa', maxSplit => -1)", None),
    ("regex('a').searchAll('').len()", None),
    # the plain string functions of the same names are untouched
    ("'a b'.split(' ')", None),
    ("'a,b'.replace(',', ';')", None),
    # the library's quirk: a named group's text is unpacked as a (name, group) pair
    ("regex('(?P<x>ab)').search('ab', $)", None),
    ("regex('(?P<x>a)').search('a', $)", None),
    # errors keep the library's (re's) messages
    ("regex('(').matches('a')", None),
    ("'a' =~ '('", None),
    ("'a' =~ '\\p{L}'", None),
    ("'a' =~ '(?<=a+)b'", None),
    ("regex('a').replace('a', '\\\\q')", None),
    ("regex('a').replace('a', '\\\\x41')", None),
    ("regex('(a)').replace('a', '\\\\7')", None),
    ("regex('a').replace('b', '\\\\g<x>')", None),
    ("regex('a').search(1)", None),
    ("regex(1)", None),
]


@pytest.mark.parametrize(("expression", "data"), LIBRARY_CASES)
def test_regex_functions_give_the_library_results(expression: str, data: Any) -> None:
    expected = library_result(expression, data)
    result = kiln_result(expression, data)
    if isinstance(expected, str) and ": " in expected and isinstance(result, str):
        # errors: Kiln's message is the library's, less the exception type for yaql's own
        assert expected.split(": ", 1)[1] in result
    else:
        assert result == expected


def test_replacement_lambda_must_give_strings() -> None:
    # re says "sequence item 0: expected str instance, int found"; the same TypeError here
    assert "TypeError: expected str instance, int found" in kiln_result(
        "regex('a').replaceBy('a', 1)", None
    )
    assert "expected str instance, int found" in library_result(
        "regex('a').replaceBy('a', 1)", None
    )


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("regex('a.c').search('cabc', $)", {"value": "abc", "start": 1, "end": 4}),
        ("regex('a(.)c').replaceBy('abcadc', $2.value)", "bd"),
        ("str(regex('a'))", "re.compile('a')"),
        ("regex('a') = regex('a')", True),
    ],
)
def test_regex_function_results(expression: str, expected: Any) -> None:
    assert ev({"yaql": {"expression": expression}}) == expected


def test_regex_objects_are_the_library_pattern_objects() -> None:
    result = kiln_result("regex('a')", None)
    assert "is a Pattern, not JSON-like data" in result


# -- catastrophic patterns ----------------------------------------------------------------------

ENTRY_POINTS = [
    f"'{BAD_46}' =~ '(a|aa)+$'",
    f"'{BAD_46}' =~ regex('(a|aa)+$')",
    f"'{BAD_46}' !~ '(a|aa)+$'",
    f"'{BAD_46}' !~ regex('(a|aa)+$')",
    f"'{BAD_46}'.matches('(a|aa)+$')",
    f"regex('(a|aa)+$').matches('{BAD_46}')",
    f"regex('(a|aa)+$').search('{BAD_46}')",
    f"regex('(a|aa)+$').search('{BAD_46}', $.start)",
    f"regex('(a|aa)+$').searchAll('{BAD_46}')",
    f"regex('(a|aa)+$').searchAll('{BAD_46}', $.value).len()",
    f"regex('(a|aa)+$').split('{BAD_46}')",
    f"'{BAD_46}'.split(regex('(a|aa)+$'), maxSplit => 1)",
    f"regex('(a|aa)+$').replace('{BAD_46}', 'x')",
    f"'{BAD_46}'.replace(regex('(a|aa)+$'), 'x', count => 1)",
    f"regex('(a|aa)+$').replaceBy('{BAD_46}', 'x')",
    f"'{BAD_46}'.replaceBy(regex('(a|aa)+$'), $.value)",
    f"regex('(\\w|\\w\\w)+$', ignoreCase => true).matches('{BAD_46}')",
    f"regex('^((a|aa)+)+$').matches('{BAD_46}')",
    "$.data.where($ =~ '(a|aa)+$')",
]


@pytest.mark.parametrize("expression", ENTRY_POINTS)
def test_catastrophic_patterns_stop_at_every_entry_point(
    monkeypatch: pytest.MonkeyPatch, expression: str
) -> None:
    # a shorter budget keeps the suite quick; the default one is tested below
    monkeypatch.setattr(yq, "MAX_EVALUATION_SECONDS", 0.3)
    err = fails(
        {"yaql": {"expression": expression, "data": [BAD_46]}},
        f"{STOPPED}: {OUT_OF_TIME} 0.3 seconds",
    )
    assert err.path == (*PATH, "yaql")


def test_catastrophic_patterns_fail_fast_with_the_default_budget() -> None:
    # the regex engine sees at once that (a+)+$ cannot match, where re backtracks
    assert ev({"yaql": {"expression": f"'{BAD_34}' =~ '(a+)+$'"}}) is False
    for expression in (f"'{BAD_46}' =~ '(a|aa)+$'", f"regex('(a|aa)+$').replace('{BAD_46}', 'x')"):
        fails(
            {"yaql": {"expression": expression}},
            f"{STOPPED}: {OUT_OF_TIME} 1 seconds",
        )


def test_regex_time_counts_against_the_evaluation_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yq, "MAX_EVALUATION_SECONDS", 0.3)
    fails(
        {"yaql": {"expression": "$.data.select($ =~ '(a|aa)+$')", "data": [BAD_46] * 10}},
        f"{STOPPED}: {OUT_OF_TIME} 0.3 seconds",
    )
    # ten catastrophic matches share one budget instead of taking 0.3 seconds each


def test_step_budget_stops_a_replacement_lambda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yq, "MAX_EVALUATION_STEPS", 20_000)
    fails(
        {"yaql": {"expression": "regex('a').replaceBy('aaaa', str(range(0, 150).sum()))"}},
        f"{STOPPED}: its evaluation took more than 20000 steps",
    )


def test_parallel_catastrophic_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yq, "MAX_EVALUATION_SECONDS", 0.3)
    messages: list[str] = []

    def work() -> None:
        messages.append(kiln_result("$.data =~ '(a|aa)+$'", BAD_46))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(messages) == 3
    assert all(OUT_OF_TIME in message for message in messages)


# -- patterns the regex compiler would expand without bound -------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        "a{1000000}",
        "a{4294967294}",
        "(?:a|bc){1000000}",
        "((a{100}){100}){100}",
        "(?:(?:a{1000,}){1000,}){1000,}",
        "(?:(?=a)){100000}",
        "(?x)a{1 0 0 0 0 0 0}",
        "(?:xxxxxxxxxx){5000}",
        "[ab]{30000}",
    ],
)
def test_patterns_that_expand_too_far_are_refused(pattern: str) -> None:
    for expression in (f"'a' =~ '{pattern}'", f"regex('{pattern}').matches('a')"):
        fails(
            {"yaql": {"expression": expression}},
            f"{STOPPED}: the regular expression '{pattern}' is too large",
        )


def test_large_pattern_shown_shortened() -> None:
    err = fails({"yaql": {"expression": "'a' =~ ('b' * 80 + '{30000}')"}}, "is too large")
    assert "'" + "b" * 57 + "...'" in err.message


@pytest.mark.parametrize(
    "pattern",
    [
        "a{10}",
        "a{0,4294967294}",
        "(?:a{0,1000}){0,1000}",
        "a{1000,}",
        "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
        "^(?:(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1?\\d?\\d)$",
        "^[a-f0-9]{64}$",
        ".{5000}",
        "x" * 9000,
        "(?:ab|cd)" * 1000,
        "a{1 0 0 0 0 0 0}",  # literal braces outside verbose mode, in re and regex alike
    ],
)
def test_ordinary_patterns_are_small(pattern: str) -> None:
    import regex

    assert yr.expanded_size(pattern, regex.VERSION0) <= yr.MAX_REGEX_SIZE


@pytest.mark.parametrize(
    ("pattern", "verbose", "low", "high"),
    [
        ("a", False, 1, 4),
        ("a{100}", False, 100, 110),
        ("(?:a{100}){100}", False, 10_000, 10_400),
        ("a{0,100}", False, 1, 5),
        ("a{100,}", False, 100, 110),
        ("a{100}?", False, 100, 110),
        ("a{100}+", False, 100, 110),
        # regex reads a{1 0 0} as a{100} in verbose mode, where re sees literals
        ("a{1 0 0}", False, 1, 20),
        ("a{1 0 0}", True, 100, 110),
        ("(?x)a{1 0 0}", False, 100, 110),
    ],
)
def test_expanded_size_multiplies_minimum_counts(
    pattern: str, verbose: bool, low: int, high: int
) -> None:
    import regex

    flags = regex.VERSION0 | (regex.VERBOSE if verbose else 0)
    assert low <= yr.expanded_size(pattern, flags, limit=10**9) <= high


def test_expanded_size_stops_counting_past_the_limit() -> None:
    import regex

    assert yr.expanded_size("(?:(?:a{1000}){1000}){1000}", regex.VERSION0) > yr.MAX_REGEX_SIZE


# -- twins, deadline and cache ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "found"),
    [
        ("abc", 0, "ABC", False),
        ("abc", re.IGNORECASE, "ABC", True),
        ("a b c", re.VERBOSE, "abc", True),
        ("^b$", 0, "a\nb\nc", False),
        ("^b$", re.MULTILINE, "a\nb\nc", True),
        ("a.b", 0, "a\nb", False),
        ("a.b", re.DOTALL, "a\nb", True),
        ("^\\w$", 0, "é", True),
        ("^\\w$", re.ASCII, "é", False),
    ],
)
def test_twin_keeps_the_flags(pattern: str, flags: int, text: str, found: bool) -> None:
    assert (yr.twin(re.compile(pattern, flags)).search(text) is not None) is found


def test_twins_are_cached() -> None:
    pattern = re.compile("cached-twin")
    assert yr.twin(pattern) is yr.twin(re.compile("cached-twin"))


def test_twin_cache_is_bounded_and_keeps_recent_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gr, "MAX_CACHED_SIZE", 50)
    cache = yr._TwinCache()
    first = object()
    cache.put(("first", 0), first, 10)
    for n in range(30):
        assert cache.get(("first", 0)) is first
        cache.put((f"p{n}", 0), object(), 10)
    assert cache.get(("p0", 0)) is None
    assert sum(1 for n in range(30) if cache.get((f"p{n}", 0)) is not None) == 4


def test_regex_module_forgets_uncached_patterns() -> None:
    import regex._main

    for n in range(600):
        yr.twin(re.compile(f"forgotten-{n}"))
    # regex keeps a record of every pattern it compiled until purged (a private table)
    assert len(regex._main._locale_sensitive) < 600


def test_outside_an_evaluation_matches_get_the_default_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gr, "DEFAULT_SECONDS", 0.2)
    assert yr._timeout() == 0.2
    with pytest.raises(yr.RegexStopped) as info:
        yr._run(yr.twin(re.compile("(a|aa)+$")).search, "a" * 60 + "!")
    assert info.value.reason is None


def test_deadline_bounds_the_timeout() -> None:
    with yr.evaluation_deadline(time.monotonic() + 0.2):
        assert 0 < yr._timeout() <= 0.2
    with yr.evaluation_deadline(time.monotonic() - 1), pytest.raises(yr.RegexStopped):
        yr._timeout()
    assert yr._timeout() == yr.DEFAULT_SECONDS


def test_finditer_times_out_as_a_whole() -> None:
    compiled = yr.twin(re.compile("(a|aa)+$|b"))
    matches: Iterator[Any] = yr._finditer(compiled, "b" + "a" * 60 + "!")
    with yr.evaluation_deadline(time.monotonic() + 0.2):
        assert next(matches).group() == "b"
        with pytest.raises(yr.RegexStopped):
            next(matches)


def test_regex_stopped_is_not_an_exception() -> None:
    # so that no library code catching Exception can swallow it
    assert not issubclass(yr.RegexStopped, Exception)


# -- registration -------------------------------------------------------------------------------


def _signatures(context: Any) -> dict[str, list[Any]]:
    """Each function name's overloads as comparable data (yaql has no public listing)."""
    out: dict[str, list[Any]] = {}
    for name, definitions in context._functions.items():
        for definition in definitions:
            parameters = []
            for parameter in definition.parameters.values():
                kind = parameter.value_type
                parameters.append(
                    (
                        parameter.position if parameter.position is not None else -1,
                        parameter.name,
                        parameter.alias,
                        repr(parameter.default),
                        type(kind).__name__,
                        getattr(kind, "python_type", None),
                        getattr(kind, "nullable", None),
                        getattr(kind, "with_context", None),
                        getattr(kind, "method", None),
                    )
                )
            out.setdefault(name, []).append(
                (
                    definition.is_method,
                    definition.is_function,
                    definition.no_kwargs,
                    tuple(sorted(parameters, key=repr)),
                )
            )
    return {name: sorted(overloads, key=repr) for name, overloads in out.items()}


def test_registered_functions_have_the_library_signatures() -> None:
    from yaql.language import contexts, conventions
    from yaql.standard_library import regex as library

    theirs = contexts.Context(convention=conventions.CamelCaseConvention())
    library.register(theirs)
    ours = contexts.Context(convention=conventions.CamelCaseConvention())
    yr.register(ours)
    assert _signatures(ours) == _signatures(theirs)


def test_sandbox_has_no_function_of_the_library_matching_with_re() -> None:
    from yaql.standard_library import regex as library

    _, root = yq._engine()
    library_payloads = {
        getattr(library, name)
        for name in dir(library)
        if callable(getattr(library, name)) and not name.startswith("_")
    } - {library.regex, library.escape_regex, library.is_regex}
    names = ("matches", "#operator_=~", "#operator_!~", "search", "searchAll", "split", "replace")
    seen = 0
    for name in (*names, "replaceBy"):
        for layer in root.collect_functions(name):
            for definition in layer:
                assert definition.payload not in library_payloads
                seen += 1
    assert seen >= 14
