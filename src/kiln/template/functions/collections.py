"""The list and map family of intrinsic functions (reference 2.8-2.16, 2.21).

``map_merge``, ``map_replace``, ``filter``, ``list_concat``, ``list_concat_unique``
and ``contains`` (also a condition function), the CFN ``Fn::Select``,
``Fn::MemberListToMap``, ``Fn::FindInMap`` and ``Fn::GetAZs``, and ``repeat``
(in :mod:`kiln.template.functions.repeat`, re-exported so the tables find every
collection function here). Shape checks that need only literal data run at parse
time (absent items are ignored, as resolution drops them); everything else runs
on resolved values, which may be null before resources exist: null stands for
"nothing". Imports: stdlib, kiln.core, kiln.template.functions.base and .repeat,
kiln.template.loader (its nesting bound).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kiln.core.errors import KilnError
from kiln.template.functions.base import Function, FunctionContext, resolve
from kiln.template.functions.repeat import REPEAT_LIMIT, Repeat, present
from kiln.template.loader import MAX_DEPTH, depth_ok

__all__ = [
    "REPEAT_LIMIT",
    "Contains",
    "Filter",
    "FindInMap",
    "GetAZs",
    "ListConcat",
    "ListConcatUnique",
    "MapMerge",
    "MapReplace",
    "MemberListToMap",
    "Repeat",
    "Select",
]


def _json(value: Any) -> str:
    return json.dumps(value, default=repr)


class _Collection(Function):
    """Shape checked on the literal argument at parse time and again once resolved."""

    def check(self) -> None:
        if not isinstance(self.args, Function):
            self._check_shape(present(self.args))

    def _check_shape(self, args: Any) -> None:
        """Raise on a bad argument shape; parts may still be unresolved functions."""

    def _args(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        self._check_shape(args)
        return args


# -- map_merge, map_replace ------------------------------------------------------------------


class MapMerge(_Collection):
    """``map_merge: [MAP, ...]``: shallow, later keys win, nulls skipped."""

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if args is None:
            return {}
        if not isinstance(args, list):
            raise self.error(
                'Incorrect arguments to "map_merge" should be: '
                '{"map_merge": [{"key1": "value1"}, {"key2": "value2"}, ...]}'
            )
        merged: dict[Any, Any] = {}
        for item in args:
            if item is None:
                continue
            if not isinstance(item, dict):
                raise self.error(
                    "Incorrect arguments: Items to merge must be maps. "
                    f"{item!r} is type {type(item)} instead of a dict"
                )
            merged.update(item)
        return merged


class MapReplace(_Collection):
    """``map_replace: [MAP, {keys: {OLD: NEW}, values: {OLD: NEW}}]``."""

    _USAGE = (
        'Incorrect arguments to "map_replace" should be: {"map_replace": '
        '[{"key": "value"}, {"keys": {"old_key": "new_key"}, "values": {"old": "new"}}]}'
    )

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(self._USAGE)
        source, spec = args
        if source is None:
            source = {}
        if not isinstance(source, dict) or not isinstance(spec, dict):
            raise self.error(
                'Incorrect arguments: to "map_replace", arguments must be a list of maps. '
                f"Found {_json(args)}"
            )
        if set(spec) - {"keys", "values"}:
            raise self.error(self._USAGE)
        keys = spec.get("keys") or {}
        values = spec.get("values") or {}
        if not isinstance(keys, dict) or not isinstance(values, dict):
            raise self.error(
                'Incorrect arguments: "keys" and "values" of "map_replace" must be maps'
            )
        out: dict[Any, Any] = {}
        for key, value in source.items():
            new_key = keys.get(key, key)
            if isinstance(new_key, (list, dict)):
                raise self.error(f"key replacement {_json(new_key)} must be a string or a number")
            if new_key != key and new_key in source:
                raise self.error(f"key replacement {new_key} collides with a key in the input map")
            if new_key in out:
                raise self.error(f"key replacement {new_key} collides with a key in the output map")
            out[new_key] = _replaced(value, values)
        return out


def _replaced(value: Any, replacements: dict[Any, Any]) -> Any:
    """The replacement of ``value`` found by hash lookup; unhashable values never match."""
    try:
        return replacements.get(value, value)
    except TypeError:
        return value


# -- filter, list_concat, contains ---------------------------------------------------------------


class Filter(_Collection):
    """``filter: [VALUES, LIST]``: LIST without the items equal to one of VALUES."""

    def _check_shape(self, args: Any) -> None:
        if not isinstance(args, list):
            raise self.error('Argument to "filter" must be a list')
        if len(args) != 2:
            raise self.error(
                '"filter" expected 2 arguments of the form [values, sequence] '
                f"but got {len(args)} arguments instead"
            )

    def result(self, ctx: FunctionContext) -> Any:
        values, sequence = self._args(ctx)
        if not sequence:
            return sequence
        if not isinstance(sequence, list):
            raise self.error('"filter" only works with lists')
        if not values:
            return sequence
        if not isinstance(values, list):
            raise self.error('"filter" filters a list of values')
        return [item for item in sequence if item not in values]


class ListConcat(_Collection):
    """``list_concat: [LIST, ...]``: the lists one after the other, nulls skipped."""

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if args is None:
            return []
        if not isinstance(args, list):
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be: '
                f'{{"{self.fn_name}": [["item1", "item2"], ["item3"], ...]}}'
            )
        out: list[Any] = []
        for item in args:
            if item is None:
                continue
            if not isinstance(item, list):
                raise self.error(
                    "Incorrect arguments: Items to concat must be lists. "
                    f"{_json(args)} contains an item that is not a list: {_json(item)}"
                )
            out.extend(item)
        return self._finish(out)

    def _finish(self, items: list[Any]) -> list[Any]:
        return items


class ListConcatUnique(ListConcat):
    """``list_concat_unique``: ``list_concat`` keeping only the first of equal items."""

    def _finish(self, items: list[Any]) -> list[Any]:
        unique: list[Any] = []
        for item in items:
            # Deep equality with lists: maps and lists are not hashable.
            if item not in unique:
                unique.append(item)
        return unique


class Contains(_Collection):
    """``contains: [VALUE, SEQUENCE]``: list membership or substring test."""

    def _check_shape(self, args: Any) -> None:
        if not isinstance(args, list) or not args:
            raise self.error(
                'Incorrect arguments to "contains" should be: '
                '{"contains": ["value", ["value1", "value2"]]}'
            )
        if len(args) != 2:
            raise self.error(
                'Arguments to "contains" must be of the form: [value1, [value1, value2]]'
            )

    def result(self, ctx: FunctionContext) -> Any:
        value, sequence = self._args(ctx)
        if sequence is None:
            return False
        if isinstance(sequence, str):
            if not isinstance(value, str):
                raise self.error(
                    'The first argument to "contains" must be a string when the second is one, '
                    f"not {value!r}"
                )
            return value in sequence
        if not isinstance(sequence, list):
            raise self.error('Second argument to "contains" should be a sequence.')
        return value in sequence


# -- CFN: Fn::Select, Fn::MemberListToMap, Fn::FindInMap, Fn::GetAZs --------------------------


class Select(_Collection):
    """``Fn::Select: [INDEX, COLLECTION]``; misses give ``""``."""

    def _check_shape(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form: [index, collection]'
            )

    def result(self, ctx: FunctionContext) -> Any:
        index, collection = self._args(ctx)
        if collection is None or collection == "" or index is None:
            return ""
        if isinstance(collection, str):
            collection = self._load_json(collection)
        if isinstance(collection, dict):
            if not isinstance(index, str):
                raise self.error(
                    f'"{self.fn_name}": the index must be a string to select from a map, '
                    f"not {index!r}"
                )
            return collection.get(index, "")
        if isinstance(collection, list):
            try:
                position = int(index)
            except (TypeError, ValueError, OverflowError):  # OverflowError: infinity
                raise self.error(
                    f'"{self.fn_name}": the index must be an integer to select from a list, '
                    f"not {index!r}"
                ) from None
            try:
                return collection[position]
            except IndexError:
                return ""
        raise self.error(
            f'"{self.fn_name}": the collection must be a list, a map or a JSON string, '
            f"not {collection!r}"
        )

    def _load_json(self, text: str) -> Any:
        try:
            loaded = json.loads(text)
            too_deep = not depth_ok(loaded)
        except ValueError as exc:
            raise self.error(f'"{self.fn_name}": {exc}') from None
        except RecursionError:  # nested past what the decoder can recurse into
            too_deep = True
        if too_deep:
            # The loader's bound on nesting: no deeper value reaches other functions.
            raise self.error(
                f'"{self.fn_name}": the JSON text nests deeper than the maximum allowed '
                f"depth ({MAX_DEPTH})"
            )
        return loaded


# ``<prefix>.member.<N>.<name>=<value>``, as AWS query parameters spell list members.
_MEMBER = re.compile(r"[^=]*?\.member\.(\d+)\.([^=]+)=(.*)", re.DOTALL)


class MemberListToMap(_Collection):
    """``Fn::MemberListToMap: [KEYNAME, VALUENAME, [".member.N.KEYNAME=k", ...]]``."""

    def _usage(self) -> KilnError:
        return self.error(
            f'Arguments to "{self.fn_name}" must be of the form: [key_name, value_name, '
            '[".member.0.<key_name>=key", ".member.0.<value_name>=value", ...]]'
        )

    def _check_shape(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 3:
            raise self._usage()
        key_name, value_name, members = args
        for part in (key_name, value_name):
            if not isinstance(part, (str, Function)):
                raise self._usage()
        if not isinstance(members, (list, Function)) and members is not None:
            raise self._usage()

    def result(self, ctx: FunctionContext) -> Any:
        key_name, value_name, members = self._args(ctx)
        if not isinstance(key_name, str) or not isinstance(value_name, str):
            raise self._usage()
        entries: dict[int, dict[str, str]] = {}
        for item in members or []:
            if not isinstance(item, str):
                raise self.error(f'"{self.fn_name}": members must be strings, not {item!r}')
            # Strings that are not members are not ours to interpret: skip them.
            match = _MEMBER.fullmatch(item)
            if match is not None:
                number, name, value = match.groups()
                entries.setdefault(self._member_number(number), {})[name] = value
        return {
            entry[key_name]: entry.get(value_name)
            for _, entry in sorted(entries.items())
            if key_name in entry
        }

    def _member_number(self, digits: str) -> int:
        try:
            return int(digits)
        except ValueError:  # longer than Python's int_max_str_digits
            raise self.error(
                f'"{self.fn_name}": member number {digits[:20]}... is too large'
            ) from None


class FindInMap(_Collection):
    """``Fn::FindInMap: [MAP, KEY, VALUE]`` over the CFN ``Mappings`` section."""

    def _check_shape(self, args: Any) -> None:
        if not isinstance(args, list) or len(args) != 3:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form: [map_name, key, value]'
            )

    def result(self, ctx: FunctionContext) -> Any:
        name, key, value = self._args(ctx)
        for part in (name, key, value):
            if not isinstance(part, str):
                raise self.error(f'Arguments to "{self.fn_name}" must be strings, not {part!r}')
        try:
            return ctx.mapping(name, key, value)
        except KilnError as err:
            if not err.path:
                err.path = self.path
            raise


class GetAZs(Function):
    """``Fn::GetAZs: REGION``: the compute service's zones; the region is ignored."""

    def result(self, ctx: FunctionContext) -> Any:
        return list(ctx.availability_zones())
