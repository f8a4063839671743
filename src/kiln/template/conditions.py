"""The conditions section and condition expressions (reference 4.4).

Conditions are evaluated lazily and memoised; a cycle between definitions is
an error naming the condition. ``validate_all`` evaluates every definition so
that an unreferenced condition cannot hide an error (quirk 13, Rec).
Imports: kiln.core, kiln.template.functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.core.paths import Path
from kiln.template.functions.base import (
    FunctionContext,
    Parser,
    resolve_top,
    validate_functions,
)
from kiln.template.functions.conditions import condition_value, python_repr

CATEGORY = "Condition validation error"

_IN_PROGRESS = object()


class Conditions:
    """Named conditions of one template, evaluated on demand."""

    def __init__(
        self,
        definitions: dict[str, Any],
        parser: Parser,
        ctx_factory: Callable[[], FunctionContext],
        section: str = "conditions",
    ) -> None:
        self._definitions = definitions
        self._parser = parser
        self._ctx_factory = ctx_factory
        self._section = section
        self._values: dict[str, object] = {}

    @property
    def names(self) -> list[str]:
        return list(self._definitions)

    def __contains__(self, name: object) -> bool:
        return name in self._definitions

    def value(self, name: str, used_at: Path = ()) -> bool:
        """The boolean value of condition ``name``."""
        if not isinstance(name, str) or name not in self._definitions:
            raise StackValidationFailed(f'Invalid condition "{name}"', path=used_at)
        cached = self._values.get(name)
        if cached is _IN_PROGRESS:
            raise StackValidationFailed(
                f'Circular definition for condition "{name}"',
                path=(self._section, name),
                category=CATEGORY,
            )
        if isinstance(cached, bool):
            return cached
        self._values[name] = _IN_PROGRESS
        try:
            result = self._evaluate_definition(name)
        except BaseException:
            del self._values[name]
            raise
        self._values[name] = result
        return result

    def _evaluate_definition(self, name: str) -> bool:
        path = (self._section, name)
        raw = self._definitions[name]
        if isinstance(raw, bool):
            return raw
        ctx = self._ctx_factory()
        parsed = self._parser.in_condition_context().parse(raw, path)
        errors = validate_functions(parsed, ctx)
        if errors:
            raise errors[0]
        result = resolve_top(parsed, ctx)
        if not isinstance(result, bool):
            raise StackValidationFailed(
                f'The definition of condition "{name}" is invalid: {_show(result)}',
                path=path,
                category=CATEGORY,
            )
        return result

    def evaluate(self, raw: Any, path: Path) -> bool:
        """Evaluate a condition *use*: a resource/output ``condition`` or an ``if``."""
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str):
            return self.value(raw, path)
        ctx = self._ctx_factory()
        parsed = self._parser.in_condition_context().parse(raw, path)
        errors = validate_functions(parsed, ctx)
        if errors:
            raise errors[0]
        return condition_value(resolve_top(parsed, ctx), ctx, path)

    def validate_all(self) -> list[KilnError]:
        """Evaluate every definition, collecting the errors."""
        errors: list[KilnError] = []
        for name in self._definitions:
            try:
                self.value(name)
            except KilnError as err:
                errors.append(err.with_category(CATEGORY))
        return errors


def _show(value: Any) -> str:
    return value if isinstance(value, str) else python_repr(value)
