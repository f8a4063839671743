"""The ``repeat`` intrinsic function (reference 2.8; variants l/m/p of 1.3).

``repeat`` resolves its template, then makes one copy per combination of the
``for_each`` values, replacing each placeholder in every string of the copy.
Lists only before 2016-10-14 (l); also maps, standing for their keys (m);
``permutations`` from 2017-09-01 (p), an ignored extra key before. Values must
be strings and ``for_each`` must not be empty (reference quirk 7).
Imports: stdlib, kiln.template.functions.base.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from kiln.template.functions.base import ABSENT, Function, FunctionContext, resolve

__all__ = ["REPEAT_LIMIT", "REPEAT_VALUE_LIMIT", "Repeat", "present"]

# Not a Heat limit: a product of long for_each lists must not exhaust memory.
REPEAT_LIMIT = 100_000
# Nor this: the copies times the size of the template (containers and scalars), so
# that a large template, or a nested repeat, repeated many times cannot either.
REPEAT_VALUE_LIMIT = 1_000_000


def present(value: Any) -> Any:
    """``value`` as resolution will see it: absent list items and map entries dropped."""
    if isinstance(value, list):
        return [v for v in value if v is not ABSENT]
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not ABSENT}
    return value


class Repeat(Function):
    """``repeat: {template: T, for_each: {PLACEHOLDER: VALUES, ...}, permutations: B}``."""

    def check(self) -> None:
        if not isinstance(self.args, Function):
            self._check_shape(present(self.args))

    @property
    def allows_maps(self) -> bool:
        """Variants m/p (2016-10-14+): a map's keys may stand for a list."""
        return self.version.hot_at_least("2016-10-14")

    @property
    def has_permutations(self) -> bool:
        """Variant p (2017-09-01+); before it ``permutations`` is an ignored extra key."""
        return self.version.hot_at_least("2017-09-01")

    def _check_shape(self, args: Any) -> None:
        if not isinstance(args, dict):
            raise self.error('Arguments to "repeat" must be a map')
        if "for_each" not in args or "template" not in args:
            raise self.error(
                '"repeat" syntax should be {"repeat": {"template": <data>, '
                '"for_each": {"<placeholder>": ["<value>", ...]}}}'
            )

    def validate(self, ctx: FunctionContext) -> None:
        args = present(self.args)
        if not isinstance(args, dict):
            return
        permutations = self._literal_permutations(args)
        for_each = args.get("for_each")
        if isinstance(for_each, Function):
            return
        self._check_for_each(present(for_each), permutations)

    def _literal_permutations(self, args: dict[Any, Any]) -> bool:
        if not self.has_permutations:
            return True
        value = args.get("permutations", True)
        if isinstance(value, Function):
            return True
        return self._check_permutations(value)

    def _check_permutations(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error('"permutations" should be boolean type for repeat function.')
        return value

    def _check_for_each(self, for_each: Any, permutations: bool) -> None:
        """Literal parts only: unresolved functions and nulls pass."""
        if not isinstance(for_each, dict):
            raise self.error('The "for_each" argument to "repeat" must contain a map')
        for placeholder, values in for_each.items():
            if not isinstance(placeholder, str):
                raise self.error(
                    f'The keys of the "for_each" argument to "repeat" must be strings, '
                    f"not {placeholder!r}"
                )
            if values is None or isinstance(values, (list, Function)):
                continue
            if isinstance(values, dict) and self.allows_maps:
                if not permutations:
                    raise self.error(
                        'The values of the "for_each" argument to "repeat" must be lists '
                        'when "permutations" is false'
                    )
                continue
            kinds = "lists or maps" if self.allows_maps else "lists"
            raise self.error(f'The values of the "for_each" argument to "repeat" must be {kinds}')

    def result(self, ctx: FunctionContext) -> Any:
        args = self.args
        if isinstance(args, Function):
            args = resolve(args, ctx)
        args = present(args)
        self._check_shape(args)
        permutations = True
        if self.has_permutations:
            permutations = self._check_permutations(resolve(args.get("permutations", True), ctx))
        for_each = resolve(args["for_each"], ctx)
        self._check_for_each(for_each, permutations)
        placeholders = list(for_each)
        if not placeholders:
            raise self.error('"repeat": for_each must not be empty')
        columns = [self._values(p, for_each[p]) for p in placeholders]
        if permutations:
            count = 1
            for column in columns:
                count *= len(column)
            combos: Iterable[tuple[str, ...]] = itertools.product(*columns)
        else:
            if len({len(column) for column in columns}) > 1:
                raise self.error(
                    "For repeat, the length of for_each values should be equal if no nested loop."
                )
            count = len(columns[0])
            combos = zip(*columns)
        if count > REPEAT_LIMIT:
            raise self.error(f'"repeat" would produce {count} items; the limit is {REPEAT_LIMIT}')
        template = resolve(args["template"], ctx)
        if template is ABSENT:
            return []
        if count * _size(template, REPEAT_VALUE_LIMIT // max(count, 1)) > REPEAT_VALUE_LIMIT:
            raise self.error(
                f'"repeat" would produce more than {REPEAT_VALUE_LIMIT} values '
                f"({count} copies of its template)"
            )
        return [_substitute(template, list(zip(placeholders, combo))) for combo in combos]

    def _values(self, placeholder: str, values: Any) -> list[str]:
        if values is None:
            return []
        items = list(values)  # a map stands for its keys, in map order
        for item in items:
            if not isinstance(item, str):
                raise self.error(
                    f'The values of the "for_each" argument to "repeat" must be strings: '
                    f"{item!r} (for {placeholder}) is of type {type(item).__name__}"
                )
        return items


def _size(value: Any, limit: int) -> int:
    """Containers, keys and scalars in ``value``; counting stops once past ``limit``."""
    count = 0
    pending = [value]
    while pending and count <= limit:
        item = pending.pop()
        count += 1
        if isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return count


def _substitute(value: Any, pairs: list[tuple[str, str]]) -> Any:
    """A deep copy of ``value`` with each placeholder replaced in every string."""
    if isinstance(value, str):
        for placeholder, replacement in pairs:
            value = value.replace(placeholder, replacement)
        return value
    if isinstance(value, dict):
        return {_substitute(k, pairs): _substitute(v, pairs) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, pairs) for v in value]
    return value
