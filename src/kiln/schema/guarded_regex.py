"""Regular expressions that cannot hang: matched by the ``regex`` engine under a deadline.

Python's ``re`` matches in one C call nothing can interrupt, so a catastrophic
pattern (``(a|aa)+$`` against ``aaaa...a!``) hangs whoever asks. This module
compiles a *twin* of an ``re`` pattern with the ``regex`` module (``VERSION0``,
its ``re``-compatible semantics) and matches with a ``timeout``. ``regex``
expands repetition counts when it compiles (``a{4294967294}`` asks for
gigabytes), so a twin is compiled only when the module's own parser shows the
pattern stays under MAX_REGEX_SIZE with its counts multiplied out. Every
refusal is a :class:`RegexStopped`. Used by parameter ``allowed_pattern``
constraints and by the yaql sandbox. Imports: stdlib and regex.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import itertools
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "DEFAULT_SECONDS",
    "MAX_CACHED_SIZE",
    "MAX_REGEX_SIZE",
    "RegexStopped",
    "evaluation_deadline",
    "expanded_size",
    "match_within",
    "twin",
]

# Units the regex compiler may expand one pattern to (a unit is a parse-tree node or a literal
# character, once per repetition of the repeats around it). Measured: at most some 280 bytes
# and 0.6 microseconds of C compilation per unit, so 6 MB and 12 ms at the limit. A pattern
# without counted repeats stays far below it: the memory quota keeps it under 10000 characters.
MAX_REGEX_SIZE = 20_000
# Compiled twins are kept while their sizes add up to at most this, and at most 512 of them.
MAX_CACHED_SIZE = 200_000
_MAX_CACHED_TWINS = 512
# The time a match may take when no evaluation is running (direct calls).
DEFAULT_SECONDS = 1.0


class RegexStopped(BaseException):
    """A regular expression was refused or ran out of time.

    A BaseException so that the library cannot swallow it. ``reason`` is None when the
    evaluation's time ran out, else the sentence saying why the pattern was refused.
    """

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason


# -- deadline -----------------------------------------------------------------------------------

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "kiln_yaql_regex_deadline", default=None
)


@contextlib.contextmanager
def evaluation_deadline(deadline: float) -> Iterator[None]:
    """Within the block, matches must end by ``deadline`` (a ``time.monotonic()`` value)."""
    token = _deadline.set(deadline)
    try:
        yield
    finally:
        _deadline.reset(token)


def _timeout() -> float:
    """Seconds the next match may take; raises RegexStopped when none are left."""
    deadline = _deadline.get()
    if deadline is None:
        return DEFAULT_SECONDS
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise RegexStopped
    return remaining


def _run(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)`` of a twin, with the timeout; a timeout becomes RegexStopped."""
    try:
        return method(*args, timeout=_timeout(), **kwargs)
    except TimeoutError:
        raise RegexStopped from None


def _finditer(compiled: Any, string: str) -> Iterator[Any]:
    """The matches of ``compiled`` in ``string``; the timeout bounds the whole iteration."""
    matches = compiled.finditer(string, timeout=_timeout())
    while True:
        try:
            match = next(matches)
        except StopIteration:
            return
        except TimeoutError:
            raise RegexStopped from None
        yield match


# -- twins --------------------------------------------------------------------------------------


class _TwinCache:
    """Least recently used twins, bounded by their count and their summed sizes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict[tuple[str, int], tuple[Any, int]] = (
            collections.OrderedDict()
        )
        self._size = 0

    def get(self, key: tuple[str, int]) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: tuple[str, int], compiled: Any, size: int) -> None:
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (compiled, size)
            self._size += size
            while self._entries and (
                self._size > MAX_CACHED_SIZE or len(self._entries) > _MAX_CACHED_TWINS
            ):
                _, (_, dropped) = self._entries.popitem(last=False)
                self._size -= dropped


_twins = _TwinCache()
# regex remembers every pattern it compiles, uncached ones too, until its cache is purged.
_compiles = itertools.count(1)
_PURGE_EVERY = 256


def _regex_flags(pattern: re.Pattern[str]) -> int:
    """The ``regex`` flags equal to those ``re`` compiled ``pattern`` with (inline ones too)."""
    import regex

    flags: int = regex.VERSION0
    for re_flag, regex_flag in (
        (re.IGNORECASE, regex.IGNORECASE),
        (re.MULTILINE, regex.MULTILINE),
        (re.DOTALL, regex.DOTALL),
        (re.VERBOSE, regex.VERBOSE),
        (re.ASCII, regex.ASCII),
    ):
        if pattern.flags & re_flag:
            flags |= regex_flag
    return flags


def twin(pattern: re.Pattern[str]) -> Any:
    """The ``regex`` pattern matching like ``pattern``; raises RegexStopped if it is too large."""
    key = (pattern.pattern, pattern.flags)
    compiled = _twins.get(key)
    if compiled is not None:
        return compiled
    import regex

    flags = _regex_flags(pattern)
    # Counted repeats are the only ones above one and are written with braces; without any,
    # the compiled size follows the pattern's length and the (traced, slow) walk is skipped.
    if "{" in pattern.pattern:
        size = expanded_size(pattern.pattern, flags)
    else:
        size = len(pattern.pattern) + 1
    if size > MAX_REGEX_SIZE:
        shown = pattern.pattern if len(pattern.pattern) <= 60 else pattern.pattern[:57] + "..."
        raise RegexStopped(
            f"the regular expression {shown!r} is too large: it has more than {MAX_REGEX_SIZE}"
            " parts once its repetition counts are multiplied out"
        )
    compiled = regex.compile(pattern.pattern, flags, cache_pattern=False)
    _twins.put(key, compiled, size)
    if next(_compiles) % _PURGE_EVERY == 0:
        regex.purge()
    return compiled


def expanded_size(pattern: str, flags: int, limit: int | None = None) -> int:
    """Units the ``regex`` compiler allocates for ``pattern``, counted until past ``limit``.

    Walks the tree of the module's own parser (private, but the only one that reads a pattern
    as ``regex`` will: it takes ``a{1 0 0}`` as ``a{100}`` where ``re`` sees literals). Each node
    and each literal character counts once per repetition of every repeat around it, by its
    minimum count, which is what the compiler expands (upper bounds cost nothing). Should a
    release of regex change that parser, this raises and regular expressions fail closed.
    """
    from regex import _regex_core as core

    limit = MAX_REGEX_SIZE if limit is None else limit
    size = 0
    stack: list[tuple[Any, int]] = [(_parse(core, pattern, flags), 1)]
    while stack:
        node, factor = stack.pop()
        size += factor
        count = getattr(node, "min_count", None)
        if isinstance(count, int) and count > 1:
            factor *= count  # for what the repeat contains
        for name, value in getattr(node, "__dict__", {}).items():
            if name.startswith("_"):
                continue
            items = value if isinstance(value, (list, tuple)) else (value,)
            for item in items:
                if isinstance(item, core.RegexBase):
                    stack.append((item, factor))
                elif items is value:
                    size += factor  # a literal character of a string node
        if size > limit:
            return size
    return size


def _parse(core: Any, pattern: str, flags: int) -> Any:
    """The parse tree ``regex.compile`` builds first (its parse step, without compiling)."""
    global_flags = flags
    while True:
        source = core.Source(pattern)
        info = core.Info(global_flags, source.char_type, {})
        info.guess_encoding = core.UNICODE
        source.ignore_space = bool(info.flags & core.VERBOSE)
        try:
            return core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            # an inline global flag such as (?x): parse again with it set, as regex does
            global_flags = info.global_flags


def match_within(pattern: re.Pattern[str], text: str, seconds: float = DEFAULT_SECONDS) -> Any:
    """``pattern.match(text)`` on its twin, stopped (RegexStopped) after ``seconds``."""
    with evaluation_deadline(time.monotonic() + seconds):
        return _run(twin(pattern).match, text)
