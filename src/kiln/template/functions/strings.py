"""The string family of intrinsic functions (reference 2.5-2.7, 2.9, 2.14, 2.21).

``list_join``/``Fn::Join``, ``str_replace`` and its strict variants,
``Fn::Replace``, ``str_split``/``Fn::Split``, ``digest`` and ``Fn::Base64`` live
here; ``make_url`` lives in :mod:`kiln.template.functions.urls` and is re-exported
so that the function tables find every string function in this module.
Shape checks that need only literal data run at parse time; everything else runs
on resolved values, which may be null before resources exist.
Imports: stdlib, kiln.core, kiln.template.functions.base and .urls.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any, ClassVar

from kiln.template.functions.base import Function, FunctionContext, resolve
from kiln.template.functions.urls import MakeUrl

__all__ = [
    "Base64",
    "Digest",
    "FnReplace",
    "FnSplit",
    "ListJoin",
    "MakeUrl",
    "StrReplace",
    "StrReplaceStrict",
    "StrReplaceVStrict",
    "StrSplit",
    "digest_algorithms",
    "to_json",
]

_REPR_LIMIT = 200


def to_json(value: Any) -> str:
    """Heat's serialisation of lists and maps inside strings: sorted keys, ``", "``/``": "``."""
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def _short_repr(value: Any) -> str:
    return repr(value)[:_REPR_LIMIT]


class _StringFunction(Function):
    """Helpers shared by the functions of this module."""

    def _json(self, value: Any) -> str:
        try:
            return to_json(value)
        except (TypeError, ValueError) as exc:
            # e.g. a map mixing string and integer keys cannot be sorted
            raise self.error(
                f'"{self.fn_name}" cannot serialise {_short_repr(value)} as JSON: {exc}'
            ) from None


# -- list_join / Fn::Join ------------------------------------------------------------------


class ListJoin(_StringFunction):
    """``list_join: [DELIM, LIST, ...]`` and ``Fn::Join: [DELIM, LIST]``."""

    @property
    def multi(self) -> bool:
        """Variant n (2015-10-15+ ``list_join``): several lists, JSON for lists and maps."""
        return self.fn_name == "list_join" and self.version.hot_at_least("2015-10-15")

    def check(self) -> None:
        if not isinstance(self.args, Function):
            self._check_shape(self.args)

    def _check_shape(self, args: Any) -> None:
        count_ok = isinstance(args, list) and (len(args) >= 2 if self.multi else len(args) == 2)
        if not count_ok:
            more = ', ["str3", ...], ...' if self.multi else ""
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be: '
                f'{{"{self.fn_name}": ["<delimiter>", ["str1", "str2"]{more}]}}'
            )

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        self._check_shape(args)
        delim, *lists = args
        if not isinstance(delim, str):
            raise self.error(f'"{self.fn_name}" delimiter must be a string')
        items: list[Any] = []
        for strings in lists:
            if strings is None:
                continue
            if not isinstance(strings, list):
                raise self.error(f'"{self.fn_name}" must operate on a list')
            items.extend(strings)
        return delim.join(self._item_text(item) for item in items)

    def _item_text(self, item: Any) -> str:
        if item is None:
            return ""
        if isinstance(item, str):
            return item
        if self.multi:
            if isinstance(item, (list, dict)):
                return self._json(item)
            raise self.error(f"Items to join must be string, map or list not {_short_repr(item)}")
        raise self.error(f"Items to join must be strings not {_short_repr(item)}")


# -- str_replace family ----------------------------------------------------------------------


class _Replace(_StringFunction):
    """Placeholder substitution shared by ``str_replace*`` and ``Fn::Replace``."""

    strict: ClassVar[bool] = False
    very_strict: ClassVar[bool] = False

    @property
    def serialise(self) -> bool:
        """Variant j: list and map values become JSON (2015-10-15+ HOT)."""
        return self.version.hot_at_least("2015-10-15")

    def _split_args(self, args: Any) -> tuple[Any, Any]:
        """(template, params) from the argument; raises on a bad shape."""
        raise NotImplementedError

    def check(self) -> None:
        if isinstance(self.args, Function):
            return
        _, params = self._split_args(self.args)
        if not isinstance(params, (dict, Function)):
            raise self.error(f'"{self.fn_name}" parameters must be a mapping')

    def result(self, ctx: FunctionContext) -> Any:
        template, params = self._split_args(resolve(self.args, ctx))
        if not isinstance(template, str):
            raise self.error(f'"{self.fn_name}" template must be a string')
        if not isinstance(params, dict):
            raise self.error(f'"{self.fn_name}" params must be a map')
        return self.substitute(template, params)

    def substitute(self, template: str, params: dict[Any, Any]) -> str:
        """Replace every placeholder in one pass, longest placeholder first."""
        # Checked before sorting: mixed key types would otherwise fail inside sorted().
        if not all(isinstance(key, str) for key in params):
            raise self.error(f'"{self.fn_name}" param placeholders must be strings')
        if "" in params:
            raise self.error(f'"{self.fn_name}" param placeholders must not be empty')
        order = sorted(params, key=lambda key: (-len(key), key))
        values = [self._value_text(key, params[key]) for key in order]
        if self.strict:
            missing = [key for key in order if key not in template]
            if missing:
                raise self.error(
                    "The following params were not found in the template: " + ",".join(missing)
                )
        return _replace_in_order(template, list(zip(order, values)))

    def _value_text(self, name: str, value: Any) -> str:
        if self.very_strict and (
            value is None or (isinstance(value, (str, list, dict)) and not value)
        ):
            raise self.error(
                f"{self.fn_name} has an undefined or empty value for param {name}, "
                "must be a defined non-empty value"
            )
        if value is None:
            return ""
        if isinstance(value, str):
            return value
        if isinstance(value, (bool, int, float)):
            return str(value)
        if not self.serialise:
            raise self.error(
                f'"{self.fn_name}" params must be strings or numbers, param {name} is not valid'
            )
        if isinstance(value, (list, dict)):
            return self._json(value)
        raise self.error(
            f'"{self.fn_name}" params must be strings, numbers, list or map. '
            f"Param {name} is not valid"
        )


def _replace_in_order(template: str, replacements: list[tuple[str, str]]) -> str:
    """Split on the first placeholder present, process each piece with the later
    placeholders only, and join the pieces with the value.

    Inserted values are therefore never scanned again. Written with an explicit
    stack rather than recursion because a params map may be large.
    """
    out: list[str] = []
    # Items: (text, index of the first placeholder still to try); index -1 marks
    # finished text (a replacement value).
    stack: list[tuple[str, int]] = [(template, 0)]
    while stack:
        text, start = stack.pop()
        if start < 0 or not text:
            out.append(text)
            continue
        found = next(
            (i for i in range(start, len(replacements)) if replacements[i][0] in text), None
        )
        if found is None:
            out.append(text)
            continue
        placeholder, value = replacements[found]
        pieces = text.split(placeholder)
        items: list[tuple[str, int]] = [(pieces[0], found + 1)]
        for piece in pieces[1:]:
            items += [(value, -1), (piece, found + 1)]
        stack.extend(reversed(items))
    return "".join(out)


class StrReplace(_Replace):
    """``str_replace: {template: STRING, params: MAP}``."""

    def _split_args(self, args: Any) -> tuple[Any, Any]:
        if not isinstance(args, dict):
            raise self.error(f'Arguments to "{self.fn_name}" must be a map')
        if "template" not in args or "params" not in args:
            raise self.error(
                f'"{self.fn_name}" syntax should be {self.fn_name}:\n'
                "  template: <template>\n  params: <params>"
            )
        return args["template"], args["params"]


class StrReplaceStrict(StrReplace):
    """``str_replace_strict``: every placeholder must occur in the template."""

    strict = True


class StrReplaceVStrict(StrReplace):
    """``str_replace_vstrict``: strict, and no null or empty values."""

    strict = True
    very_strict = True


class FnReplace(_Replace):
    """``Fn::Replace: [{PLACEHOLDER: VALUE}, TEMPLATE]`` (str_replace variant s)."""

    @property
    def serialise(self) -> bool:
        return False

    def _split_args(self, args: Any) -> tuple[Any, Any]:
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be: '
                f'{{"{self.fn_name}": [{{"$var1": "foo", "%var2%": "bar"}}, "$var1 is %var2%"]}}'
            )
        params, template = args
        return template, params


# -- str_split / Fn::Split -------------------------------------------------------------------


class StrSplit(_StringFunction):
    """``str_split: [DELIM, STRING]`` or ``[DELIM, STRING, INDEX]`` (2015-10-15+)."""

    def _usage(self) -> str:
        return (
            f'Incorrect arguments to "{self.fn_name}" should be: '
            f'{{"{self.fn_name}": [",", "str1,str2"]}} or '
            f'{{"{self.fn_name}": [",", "str1,str2", <index>]}}'
        )

    def check(self) -> None:
        # Only these shapes are rejected while parsing; short lists fail on resolution.
        if isinstance(self.args, (str, dict)):
            raise self.error(self._usage())

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if not isinstance(args, list) or not 2 <= len(args) <= 3:
            raise self.error(self._usage())
        delim, text = args[0], args[1]
        if text is None:
            return None
        parts = _split(self, delim, text, allow_null_delim=True)
        if len(args) == 2:
            return parts
        index = self._index(args[2])
        if not -len(parts) <= index < len(parts):
            raise self.error(
                f'Incorrect index to "{self.fn_name}" should be between 0 and {len(parts) - 1}'
            )
        return parts[index]

    def _index(self, raw: Any) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        if isinstance(raw, str):
            try:
                return int(raw)
            except ValueError:
                pass
        raise self.error(
            f'Incorrect index to "{self.fn_name}" should be: '
            f'{{"{self.fn_name}": [",", "str1,str2", <index>]}}'
        )


class FnSplit(_StringFunction):
    """``Fn::Split: [DELIM, STRING]``; DELIM must be a literal string."""

    def check(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be: '
                f'{{"{self.fn_name}": [",", "str1,str2"]}}'
            )
        if not isinstance(self.args[0], str):
            raise self.error(f'Delimiter for "{self.fn_name}" must be a literal string')
        if not self.args[0]:
            raise self.error(f'Incorrect delimiter to "{self.fn_name}": empty separator')

    def result(self, ctx: FunctionContext) -> Any:
        text = resolve(self.args[1], ctx)
        if text is None:
            return []
        return _split(self, self.args[0], text, allow_null_delim=False)


def _split(fn: Function, delim: Any, text: Any, *, allow_null_delim: bool) -> list[str]:
    if not isinstance(text, str):
        raise fn.error(
            f'"{fn.fn_name}" can only split a string, not {type(text).__name__} {_short_repr(text)}'
        )
    if delim is None and allow_null_delim:
        return text.split()  # null delimiter: runs of whitespace, as Python does
    if not isinstance(delim, str):
        raise fn.error(f'"{fn.fn_name}" delimiter must be a string')
    if not delim:
        raise fn.error(f'Incorrect delimiter to "{fn.fn_name}": empty separator')
    return text.split(delim)


# -- digest, Fn::Base64 ----------------------------------------------------------------------


@cache
def digest_algorithms() -> frozenset[str]:
    """Lower-case names of the fixed-length hashes this host can compute."""
    usable: set[str] = set()
    for name in hashlib.algorithms_available:
        lowered = name.lower()
        try:
            digest_size = hashlib.new(lowered).digest_size
        except ValueError:  # listed by OpenSSL but disabled (e.g. legacy provider off)
            continue
        # shake_* report size 0: their output length is a caller's choice, not usable here.
        if digest_size > 0:
            usable.add(lowered)
    return frozenset(usable)


def _digest_bytes(value: str) -> bytes:
    """Latin-1 as Heat does; UTF-8 for text Latin-1 cannot encode (Appendix B #8)."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode("utf-8")


class Digest(_StringFunction):
    """``digest: [ALGORITHM, VALUE]``: lower-case hex digest (2015-04-30+)."""

    def result(self, ctx: FunctionContext) -> Any:
        args = resolve(self.args, ctx)
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise self.error(f'Argument to function "{self.fn_name}" must be a list of strings')
        if len(args) != 2:
            raise self.error(f'Function "{self.fn_name}" usage: ["<algorithm>", "<value>"]')
        algorithm, value = args[0].lower(), args[1]
        algorithms = digest_algorithms()
        if algorithm not in algorithms:
            raise self.error(f"Algorithm must be one of {{{', '.join(sorted(algorithms))}}}")
        return hashlib.new(algorithm, _digest_bytes(value)).hexdigest()


class Base64(_StringFunction):
    """``Fn::Base64: STRING``: the string itself (Heat never encoded it)."""

    def result(self, ctx: FunctionContext) -> Any:
        value = resolve(self.args, ctx)
        if value is None:  # an attribute of a resource not created yet
            return None
        if not isinstance(value, str):
            raise self.error(f'"{self.fn_name}" argument must be a string')
        return value
