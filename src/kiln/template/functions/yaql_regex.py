r"""Regular expressions of the yaql sandbox, matched by the ``regex`` engine under a deadline.

Python's ``re`` matches in one C call that the evaluation's trace hook cannot interrupt, so a
catastrophic pattern (``'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' =~ '(a|aa)+$'``) would hang the
evaluation. :func:`register` therefore puts into the sandbox's context Kiln's own versions of the
library's regular-expression functions (same names, parameters and results as
``yaql.standard_library.regex``). Patterns are still compiled and checked by ``re`` exactly as the
library does, so the accepted patterns, the error messages and the pattern objects an expression
handles (``regex()``, ``isRegex``, ``str``, ``=``) are the library's own; only the matching runs
on a twin compiled by the ``regex`` module in ``VERSION0`` (its ``re``-compatible semantics), with
a ``timeout`` equal to what is left of the evaluation's time. ``regex`` expands repetition counts
when it compiles (``a{4294967294}`` asks for gigabytes, ``(?:a|bc){1000000}`` overflows the C
stack), so a twin is compiled only once the module's own parser shows the pattern stays under
MAX_REGEX_SIZE with its counts multiplied out. Every refusal is a :class:`RegexStopped`.
Imports: stdlib, yaql and regex (both when first needed).

Why registered functions and not a patched library: the library reaches ``re`` through its
module globals and through the C methods of ``re.Pattern``, which cannot be patched; patching
``yaql.standard_library.regex.re`` would change yaql for the whole process and would silently
stop protecting anything the library later calls differently. The context is built without the
library's regex functions (``create_context(regex=False)``), so a call these versions do not
accept fails as an unknown method instead of falling back to an unguarded one, and a test
compares these signatures with the library's.

Known differences from the library, all outside ordinary patterns: syntax ``re`` takes as
literals but ``regex`` does not (POSIX classes ``[[:alpha:]]``, fuzzy constraints ``{e<=1}``),
replacement templates ``regex`` refuses (``\g< 1>``), more than about 200 nested groups (a
RecursionError), and the wording of the error for a ``replaceBy`` lambda returning a non-string.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "DEFAULT_SECONDS",
    "MAX_CACHED_SIZE",
    "MAX_REGEX_SIZE",
    "RegexStopped",
    "evaluation_deadline",
    "expanded_size",
    "register",
    "twin",
]

from kiln.schema.guarded_regex import (  # noqa: F401 - re-exported
    _MAX_CACHED_TWINS,
    _PURGE_EVERY,
    DEFAULT_SECONDS,
    MAX_CACHED_SIZE,
    MAX_REGEX_SIZE,
    RegexStopped,
    _compiles,
    _deadline,
    _finditer,
    _parse,
    _regex_flags,
    _run,
    _timeout,
    _TwinCache,
    _twins,
    evaluation_deadline,
    expanded_size,
    twin,
)


@functools.lru_cache(maxsize=256)
def _template_checker(groups: int, names: tuple[tuple[str, int], ...]) -> re.Pattern[str]:
    """A pattern that never matches, with the numbered and named groups of another."""
    by_index = {index: name for name, index in names}
    parts = (f"(?P<{by_index[i]}>)" if i in by_index else "()" for i in range(1, groups + 1))
    return re.compile("(?!)" + "".join(parts))


def _check_template(pattern: re.Pattern[str], template: str) -> None:
    """Raise re's error for a replacement template ``re`` would refuse for ``pattern``.

    ``re`` compiles a template before it looks for matches, so substituting into an empty
    string with a never-matching pattern of the same groups checks it at no risk.
    """
    checker = _template_checker(pattern.groups, tuple(sorted(pattern.groupindex.items())))
    checker.sub(template, "")


# -- the functions ------------------------------------------------------------------------------


def _search(pattern: re.Pattern[str], string: str) -> Any:
    return _run(twin(pattern).search, string)


def _record(match: Any, group: int | str) -> dict[str, Any]:
    return {"value": match.group(group), "start": match.start(group), "end": match.end(group)}


def _publish(context: Any, match: Any) -> None:
    """Set ``$1`` (the whole match), ``$2``... (the groups) as the library does."""
    context["$1"] = _record(match, 0)
    for index in range(1, len(match.groups()) + 1):
        context[f"${index + 1}"] = _record(match, index)
    # The library takes each named group's matched text for a (name, group) pair, so a
    # named group fails unless its text has two characters, the second naming a group; kept.
    for name, group in match.groupdict().values():
        context["$" + name] = {"value": group, "start": match.start(group), "end": match.end(group)}


def _replace(pattern: re.Pattern[str], string: str, repl: str, count: int) -> Any:
    compiled = twin(pattern)
    _check_template(pattern, repl)
    return _run(compiled.sub, repl, string, count=count)


def _replace_by(context: Any, pattern: re.Pattern[str], string: str, repl: Any, count: int) -> Any:
    def replacement(match: Any) -> Any:
        child = context.create_child_context()
        _publish(context, match)  # the library publishes into the caller's context
        return repl(child)

    return _run(twin(pattern).sub, replacement, string, count=count)


def register(context: Any) -> None:
    """Register the library's regular-expression functions, matching by ``regex``, in ``context``.

    Each function has the name, parameters (names, defaults, types) and results of the
    library's function it replaces; the specs are applied as calls, not decorator syntax,
    because yaql's decorators are untyped.
    """
    # Imported now, with the engine, so that no evaluation's budget pays for the import.
    import regex  # noqa: F401
    from regex import _regex_core  # noqa: F401
    from yaql.language import specs, yaqltypes
    from yaql.standard_library import regex as library

    # Kept from the library: they only compile with re (linear in the pattern) or test a type.
    context.register_function(library.regex)
    context.register_function(library.escape_regex)
    context.register_function(library.is_regex)

    def matches(regexp: re.Pattern[str], string: str) -> bool:
        return _search(regexp, string) is not None

    def string_matches(string: str, regexp: str) -> bool:
        return _search(re.compile(regexp), string) is not None

    def matches_regex(string: str, regexp: re.Pattern[str]) -> bool:
        return _search(regexp, string) is not None

    def matches_string(string: str, pattern: str) -> bool:
        return _search(re.compile(pattern), string) is not None

    def not_matches_regex(string: str, regexp: re.Pattern[str]) -> bool:
        return _search(regexp, string) is None

    def not_matches_string(string: str, pattern: str) -> bool:
        return _search(re.compile(pattern), string) is None

    def search(context: Any, regexp: re.Pattern[str], string: str, selector: Any = None) -> Any:
        match = _search(regexp, string)
        if match is None:
            return None
        if selector is None:
            return match.group()
        child = context.create_child_context()
        _publish(child, match)
        return selector(child)

    def search_all(
        context: Any, regexp: re.Pattern[str], string: str, selector: Any = None
    ) -> Iterator[Any]:
        for match in _finditer(twin(regexp), string):
            if selector is None:
                yield match.group()
            else:
                child = context.create_child_context()
                _publish(child, match)
                yield selector(child)

    def split(regexp: re.Pattern[str], string: str, max_split: int = 0) -> Any:
        return _run(twin(regexp).split, string, maxsplit=max_split)

    def split_string(string: str, regexp: re.Pattern[str], max_split: int = 0) -> Any:
        return _run(twin(regexp).split, string, maxsplit=max_split)

    def replace(regexp: re.Pattern[str], string: str, repl: str, count: int = 0) -> Any:
        return _replace(regexp, string, repl, count)

    def replace_string(string: str, regexp: re.Pattern[str], repl: str, count: int = 0) -> Any:
        return _replace(regexp, string, repl, count)

    def replace_by(
        context: Any, regexp: re.Pattern[str], string: str, repl: Any, count: int = 0
    ) -> Any:
        return _replace_by(context, regexp, string, repl, count)

    def replace_by_string(
        context: Any, string: str, regexp: re.Pattern[str], repl: Any, count: int = 0
    ) -> Any:
        return _replace_by(context, regexp, string, repl, count)

    text = yaqltypes.String

    def selector() -> Any:
        return yaqltypes.Lambda(with_context=True)

    table: tuple[tuple[Callable[..., Any], str, bool, dict[str, Any]], ...] = (
        (matches, "matches", True, {"regexp": re.Pattern, "string": text()}),
        (string_matches, "matches", True, {"string": text(), "regexp": text()}),
        (matches_regex, "#operator_=~", False, {"regexp": re.Pattern, "string": text()}),
        (matches_string, "#operator_=~", False, {"pattern": text(), "string": text()}),
        (not_matches_regex, "#operator_!~", False, {"regexp": re.Pattern, "string": text()}),
        (not_matches_string, "#operator_!~", False, {"pattern": text(), "string": text()}),
        (search, "search", True, {"regexp": re.Pattern, "string": text(), "selector": selector()}),
        (
            search_all,
            "searchAll",
            True,
            {"regexp": re.Pattern, "string": text(), "selector": selector()},
        ),
        (split, "split", True, {"regexp": re.Pattern, "string": text(), "max_split": int}),
        (split_string, "split", True, {"regexp": re.Pattern, "string": text(), "max_split": int}),
        (
            replace,
            "replace",
            True,
            {"regexp": re.Pattern, "string": text(), "repl": text(), "count": int},
        ),
        (
            replace_string,
            "replace",
            True,
            {"regexp": re.Pattern, "string": text(), "repl": text(), "count": int},
        ),
        (
            replace_by,
            "replaceBy",
            True,
            {"regexp": re.Pattern, "string": text(), "repl": selector(), "count": int},
        ),
        (
            replace_by_string,
            "replaceBy",
            True,
            {"regexp": re.Pattern, "string": text(), "repl": selector(), "count": int},
        ),
    )
    for function, name, is_method, parameters in table:
        declared: Any = function
        for parameter, kind in parameters.items():
            declared = specs.parameter(parameter, kind)(declared)
        if is_method:
            declared = specs.method(declared)
        context.register_function(specs.name(name)(declared))
