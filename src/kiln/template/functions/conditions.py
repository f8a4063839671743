"""Condition functions and the ``if`` macro (reference 1.5, 2.17, 2.18).

``equals``, ``not``, ``and``, ``or`` (and their ``Fn::`` spellings) exist only in
condition contexts. ``if`` is a macro: it evaluates its condition while the
template is parsed and parses only the branch it selects.
Imports: kiln.core and the framework beside this module.
"""

from __future__ import annotations

from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.core.paths import Path
from kiln.template.functions.base import ABSENT, Function, FunctionContext, Parser, resolve


def python_repr(value: Any) -> str:
    """Render a value the way Heat's messages show it (Python literal syntax)."""
    return repr(value)


def condition_value(value: Any, ctx: FunctionContext, path: Path) -> bool:
    """A resolved condition operand: a boolean, or else the name of a condition."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return ctx.condition(value)
        except KilnError as err:
            if not err.path:
                err.path = path  # say where the unknown name was used
            raise
    raise StackValidationFailed(f'Invalid condition "{python_repr(value)}"', path=path)


class Equals(Function):
    """``equals: [A, B]``: deep equality of the resolved values (Python's ``==``)."""

    def check(self) -> None:
        # The argument itself must be a list (a call returning one is not accepted).
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form: [value_1, value_2]'
            )

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form: [value_1, value_2]'
            )
        return bool(args[0] == args[1])


class Not(Function):
    """``not: CONDITION``."""

    def check(self) -> None:
        if self.args is None:
            raise self.error(f'Argument to "{self.fn_name}" must be a condition')

    def _operand(self) -> Any:
        return self.args

    def validate(self, ctx: FunctionContext) -> None:
        condition_value(resolve(self._operand(), ctx), ctx, self.path)

    def result(self, ctx: FunctionContext) -> Any:
        return not condition_value(resolve(self._operand(), ctx), ctx, self.path)


class FnNot(Not):
    """``Fn::Not: [CONDITION]`` takes a one-element list."""

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 1:
            raise self.error('Arguments to "Fn::Not" must be of the form: [condition]')

    def _operand(self) -> Any:
        return self.args[0] if isinstance(self.args, list) else self.args


class _Combination(Function):
    """Shared shape of ``and``/``or``: a list of at least two conditions."""

    def check(self) -> None:
        if not isinstance(self.args, list):
            raise self.error(f'Arguments to "{self.fn_name}" must be a list of conditions')
        if len(self.args) < 2:
            raise self.error(f'The minimum number of condition arguments to "{self.fn_name}" is 2.')

    def _operands(self, ctx: FunctionContext) -> list[Any]:
        args = self.args
        if isinstance(args, Function):
            args = resolve(args, ctx)
        if not isinstance(args, list):
            raise self.error(f'Arguments to "{self.fn_name}" must be a list of conditions')
        return args

    def validate(self, ctx: FunctionContext) -> None:
        # Every operand is checked, not only those evaluation reaches (quirk 13).
        for i, item in enumerate(self._operands(ctx)):
            condition_value(resolve(item, ctx), ctx, (*self.path, i))


class And(_Combination):
    """``and: [C1, C2, ...]``, short-circuiting left to right."""

    def result(self, ctx: FunctionContext) -> Any:
        for i, item in enumerate(self._operands(ctx)):
            if not condition_value(resolve(item, ctx), ctx, (*self.path, i)):
                return False
        return True


class Or(_Combination):
    """``or: [C1, C2, ...]``, short-circuiting left to right."""

    def result(self, ctx: FunctionContext) -> Any:
        for i, item in enumerate(self._operands(ctx)):
            if condition_value(resolve(item, ctx), ctx, (*self.path, i)):
                return True
        return False


def build_if(parser: Parser, name: str, raw: Any, path: Path) -> Any:
    """The ``if`` / ``Fn::If`` macro: choose a branch now and parse only that one."""
    two_allowed = name == "if" and parser.version.hot_at_least("2021-04-16")
    lengths = (2, 3) if two_allowed else (3,)
    if not isinstance(raw, list) or len(raw) not in lengths:
        raise StackValidationFailed(
            f'Arguments to "{name}" must be of the form: '
            "[condition_name, value_if_true, value_if_false]",
            path=path,
        )
    chosen = 1 if parser.evaluate_condition(raw[0], path) else 2
    if chosen >= len(raw):
        return ABSENT
    return parser.parse(raw[chosen], (*path, chosen))
