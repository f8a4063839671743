"""The ``yaql`` intrinsic function (reference 2.12) and the sandbox it evaluates in.

One yaql engine and one standard context are built per process, lazily, with
Heat's limits (``LIMIT_ITERATORS``, ``MEMORY_QUOTA``). Because those limits do
not bound the *work* an expression does (``range(0, 10**11).len()`` loops in
plain Python), each evaluation also runs under a step and time budget enforced
by a trace hook, the library functions whose single C-level call could run or
allocate without bound (``pow``, ``shiftBitsLeft``, sequence ``*``) are shadowed
by guarded versions, regular expressions match on the ``regex`` engine with a timeout
(kiln.template.functions.yaql_regex), and the result is converted to plain JSON-like data under a
size bound. Every failure becomes a ``StackValidationFailed``. Imports: stdlib, yaql, kiln.core,
kiln.template.functions.base, kiln.template.functions.yaql_regex.
"""

from __future__ import annotations

import collections.abc  # yaql reads collections.abc without importing it
import functools
import sys
import threading
import time
from types import FrameType
from typing import Any

from kiln.template.functions import yaql_regex
from kiln.template.functions.base import ABSENT, Function, FunctionContext, resolve

__all__ = [
    "LIMIT_ITERATORS",
    "MAX_EVALUATION_SECONDS",
    "MAX_EVALUATION_STEPS",
    "MAX_RESULT_CHARS",
    "MAX_RESULT_ITEMS",
    "MEMORY_QUOTA",
    "Yaql",
    "YaqlError",
    "evaluate_expression",
    "parse_expression",
]

# Heat's ``[yaql]`` configuration defaults.
LIMIT_ITERATORS = 200
MEMORY_QUOTA = 10000

# Kiln's own bounds. A step is one Python-level trace event inside the library
# (about 4 million per second here, ~3800 per lambda call), so the step limit
# is the deterministic bound and the time limit a backstop for slow steps.
MAX_EVALUATION_STEPS = 4_000_000
MAX_EVALUATION_SECONDS = 1.0
MAX_RESULT_ITEMS = 100_000
MAX_RESULT_CHARS = 1_000_000

# An integer wider than this cannot fit the memory quota anyway.
_MAX_INT_BITS = 8 * MEMORY_QUOTA
_CHECK_EVERY = 1024


class YaqlError(Exception):
    """A yaql expression could not be parsed or evaluated; ``str()`` is the message."""


# -- engine -------------------------------------------------------------------------------------

_lock = threading.Lock()
_sandbox: tuple[Any, Any] | None = None


def _engine() -> tuple[Any, Any]:
    """(engine, root context), built on first use."""
    global _sandbox
    with _lock:
        if _sandbox is None:
            import yaql
            from yaql.standard_library import yaqlized

            engine = yaql.YaqlFactory().create(
                options={
                    "yaql.limitIterators": LIMIT_ITERATORS,
                    "yaql.memoryQuota": MEMORY_QUOTA,
                    # converted by _to_plain, under Kiln's result bounds
                    "yaql.convertOutputData": False,
                }
            )
            # The library's standard context, its regex functions replaced by Kiln's (in the
            # same layer, the yaqlized operators above them, as create_context() stacks them).
            context = yaql.create_context(regex=False, yaqlized=False)
            yaql_regex.register(context)
            context = yaqlized.register(context).create_child_context()
            _register_guards(context)
            _sandbox = (engine, context)
        return _sandbox


def _register_guards(context: Any) -> None:
    """Shadow library functions whose one C-level call could run or allocate without bound."""
    from yaql.language import exceptions, specs, yaqltypes

    def guarded_pow(a: Any, b: Any, c: Any = None) -> Any:
        both_int = isinstance(a, int) and isinstance(b, int)
        if c is None:
            # |a| >= 2**(bits - 1), so the result has at least (bits - 1) * b bits
            if both_int and b > 0 and (a.bit_length() - 1) * b > _MAX_INT_BITS:
                raise exceptions.MemoryQuotaExceededException()
            return pow(a, b)
        if both_int and isinstance(c, int) and b > 0 and c != 0:
            return _modular_pow(a, b, c)
        return pow(a, b, c)

    def guarded_shift_left(value: int, bits_number: int) -> int:
        if value and bits_number > 0 and value.bit_length() + bits_number > _MAX_INT_BITS:
            raise exceptions.MemoryQuotaExceededException()
        return value << bits_number

    def guarded_repeat_sequence(left: Any, right: int) -> Any:
        # The library's own estimate lets e.g. [1, 2] * 10**8 through to allocate.
        if right > 0 and 8 * len(left) * right > MEMORY_QUOTA:
            raise exceptions.MemoryQuotaExceededException()
        return left * right

    def guarded_repeat_sequence_reversed(left: int, right: Any) -> Any:
        return guarded_repeat_sequence(right, left)

    number = yaqltypes.Number
    pow_spec = specs.parameter("a", number())(guarded_pow)
    pow_spec = specs.parameter("b", number())(pow_spec)
    pow_spec = specs.parameter("c", number(nullable=True))(pow_spec)
    context.register_function(specs.name("pow")(pow_spec))
    shift_spec = specs.parameter("value", int)(guarded_shift_left)
    shift_spec = specs.parameter("bits_number", int)(shift_spec)
    context.register_function(specs.name("shiftBitsLeft")(shift_spec))
    times_spec = specs.parameter("left", yaqltypes.Sequence())(guarded_repeat_sequence)
    times_spec = specs.parameter("right", int)(times_spec)
    context.register_function(specs.name("#operator_*")(times_spec))
    times_spec = specs.parameter("left", int)(guarded_repeat_sequence_reversed)
    times_spec = specs.parameter("right", yaqltypes.Sequence())(times_spec)
    context.register_function(specs.name("#operator_*")(times_spec))


def _modular_pow(base: int, exponent: int, modulus: int) -> int:
    """``pow(base, exponent, modulus)`` as a Python loop, so the step budget applies."""
    result = 1 % modulus
    base %= modulus
    while exponent:
        if exponent & 1:
            result = result * base % modulus
        base = base * base % modulus
        exponent >>= 1
    return result


@functools.lru_cache(maxsize=512)
def parse_expression(expression: str) -> Any:
    """The parsed form of ``expression``; raises YaqlError with the parser's message."""
    engine, _ = _engine()
    try:
        with _lock:  # the engine's lexer and parser keep state
            return engine(expression)
    except Exception as exc:
        raise YaqlError(_describe(exc)) from None


# -- evaluation ---------------------------------------------------------------------------------


_STOPPED = "The yaql expression was stopped: "


class _BudgetExhausted(BaseException):
    """Raised from the trace hook; a BaseException so the library cannot swallow it."""


class _Budget:
    """Counts trace events of one evaluation and stops it when a bound is passed."""

    __slots__ = ("armed", "deadline", "reason", "steps")

    def __init__(self) -> None:
        self.steps = 0
        self.deadline = time.monotonic() + MAX_EVALUATION_SECONDS
        self.reason: str | None = None
        self.armed = True

    def trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        self.steps += 1
        if self.steps % _CHECK_EVERY == 0:
            self._check()
        return self.trace

    def _check(self) -> None:
        # A generator left over from the evaluation may still carry this hook.
        if not self.armed:
            return
        if self.steps > MAX_EVALUATION_STEPS:
            self.reason = f"more than {MAX_EVALUATION_STEPS} steps"
        elif time.monotonic() > self.deadline:
            self.reason = f"more than {MAX_EVALUATION_SECONDS:g} seconds"
        if self.reason is not None:
            raise _BudgetExhausted

    def message(self) -> str:
        return f"{_STOPPED}its evaluation took {self.reason}"


def evaluate_expression(statement: Any, data: Any) -> Any:
    """Evaluate a parsed expression with ``$`` = ``{"data": data}``; plain data out.

    Raises YaqlError for every failure, including exhausted budgets.
    """
    _, root = _engine()
    budget = _Budget()
    previous = sys.gettrace()
    sys.settrace(budget.trace)
    try:
        with yaql_regex.evaluation_deadline(budget.deadline):
            raw = statement.evaluate(data={"data": data}, context=root.create_child_context())
            return _to_plain(raw, _Size())
    except _BudgetExhausted:
        raise YaqlError(budget.message()) from None
    except yaql_regex.RegexStopped as exc:
        if exc.reason is not None:
            raise YaqlError(_STOPPED + exc.reason) from None
        # The same words as the trace hook's, which may be the one to notice the deadline.
        budget.reason = f"more than {MAX_EVALUATION_SECONDS:g} seconds"
        raise YaqlError(budget.message()) from None
    except YaqlError:
        raise
    except Exception as exc:
        if budget.reason is not None:
            raise YaqlError(budget.message()) from None
        raise YaqlError(_describe(exc)) from None
    finally:
        budget.armed = False
        sys.settrace(previous)


def _describe(exc: Exception) -> str:
    from yaql.language import exceptions

    text = str(exc)
    if isinstance(exc, exceptions.YaqlException):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Size:
    """Running size of a converted result."""

    __slots__ = ("chars", "items")

    def __init__(self) -> None:
        self.items = 0
        self.chars = 0


def _to_plain(value: Any, size: _Size) -> Any:
    """yaql's result as lists, maps and scalars; sets become sorted lists when sortable."""
    size.items += 1
    if size.items > MAX_RESULT_ITEMS:
        raise YaqlError(f"The result of the yaql expression has more than {MAX_RESULT_ITEMS} items")
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value.bit_length() > _MAX_INT_BITS
    ):
        # Such a number cannot even be written out in a message or a property.
        raise YaqlError("The result of the yaql expression is a number too large to use")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        size.chars += len(value)
        if size.chars > MAX_RESULT_CHARS:
            raise YaqlError(
                f"The result of the yaql expression has more than {MAX_RESULT_CHARS} characters"
            )
        return value
    if isinstance(value, collections.abc.Mapping):
        out: dict[Any, Any] = {}
        for key, item in _limited(value.items()):
            plain_key = _to_plain(key, size)
            if isinstance(plain_key, (list, dict)):
                raise YaqlError(f"The result of the yaql expression has a map key {plain_key!r}")
            out[plain_key] = _to_plain(item, size)
        return out
    if isinstance(value, collections.abc.Set):
        items = [_to_plain(item, size) for item in _limited(value)]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(value, collections.abc.Iterable):
        return [_to_plain(item, size) for item in _limited(value)]
    raise YaqlError(
        f"The result of the yaql expression is a {type(value).__name__}, not JSON-like data"
    )


def _limited(items: collections.abc.Iterable[Any]) -> collections.abc.Iterator[Any]:
    """Iterate, failing as the library does once a collection passes LIMIT_ITERATORS."""
    too_long = f"Collection length exceeds {LIMIT_ITERATORS} elements"
    if isinstance(items, collections.abc.Sized) and len(items) > LIMIT_ITERATORS:
        raise YaqlError(too_long)
    for count, item in enumerate(items):
        if count >= LIMIT_ITERATORS:
            raise YaqlError(too_long)
        yield item


# -- the function -------------------------------------------------------------------------------


class Yaql(Function):
    """``yaql: {expression: STRING, data: ANY}``; also a condition function (2017-09-01+)."""

    _statement: Any = None

    def check(self) -> None:
        if isinstance(self.args, Function):
            return
        args = self._shaped(self.args)
        expression = args["expression"]
        if not isinstance(expression, Function):
            self._statement = self._parse(expression)

    def _shaped(self, args: Any) -> dict[Any, Any]:
        """The argument map without absent entries; raises on a bad shape."""
        if not isinstance(args, dict):
            raise self.error('Arguments to "yaql" must be a map.')
        present = {k: v for k, v in args.items() if v is not ABSENT}
        if "expression" not in present or set(present) - {"expression", "data"}:
            raise self.error(
                '"yaql" syntax should be {"yaql": {"expression": "<expression>", "data": <data>}}'
            )
        return present

    def _parse(self, expression: Any) -> Any:
        if not isinstance(expression, str):
            raise self.error('The "expression" argument to yaql must contain a string.')
        try:
            return parse_expression(expression)
        except YaqlError as exc:
            raise self.error(f"Bad expression {exc}") from None

    def result(self, ctx: FunctionContext) -> Any:
        args = self._shaped(
            resolve(self.args, ctx) if isinstance(self.args, Function) else self.args
        )
        statement = self._statement
        if statement is None:
            statement = self._parse(resolve(args["expression"], ctx))
        data = resolve(args.get("data", {}), ctx)
        try:
            return evaluate_expression(statement, data)
        except YaqlError as exc:
            raise self.error(str(exc)) from None
