"""Values for every message dataclass of kiln.rpc, built from its type hints.

``sample(cls)`` gives one fixed instance, ``strategy(cls)`` a hypothesis
strategy; both read the annotations, so message modules added later are
covered without listing their classes here.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import pkgutil
import types
import typing
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

import kiln.rpc

IST = timezone(timedelta(hours=5, minutes=30))


def rpc_dataclasses() -> list[type]:
    """Every dataclass defined in a kiln.rpc module, in a stable order."""
    found: list[type] = []
    for info in sorted(pkgutil.iter_modules(kiln.rpc.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"kiln.rpc.{info.name}")
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__ == module.__name__
            ):
                found.append(obj)
    return found


def _hints(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


JSON_SAMPLE: Any = {"name": "web", "ports": [80, 443], "ratio": 0.5, "on": True, "none": None}


#: Below this many dataclass levels, optional fields are None and sequences empty,
#: so recursive messages (a preview resource's nested resources) stay finite.
MAX_DEPTH = 3


def sample(tp: Any, depth: int = 0) -> Any:
    """A fixed, non-default value of type ``tp``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return tp(**{name: sample(hint, depth + 1) for name, hint in _hints(tp).items()})
    if tp is Any or tp is object:
        return JSON_SAMPLE
    if tp is str:
        return "sample-text"
    if tp is bool:
        return True
    if tp is int:
        return 7
    if tp is float:
        return 2.5
    if tp is datetime:
        return datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=IST)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return next(iter(tp))
    if origin is typing.Literal:
        return args[0]
    if _is_union(tp):
        if type(None) in args and depth >= MAX_DEPTH:
            return None
        return sample(next(a for a in args if a is not type(None)), depth)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return (sample(args[0], depth),) if depth < MAX_DEPTH else ()
        return tuple(sample(a, depth) for a in args)
    if origin in (list, Sequence):
        items = [sample(args[0], depth)] if depth < MAX_DEPTH else []
        return tuple(items) if origin is Sequence else items
    if origin in (dict, Mapping):
        return {sample(args[0], depth): sample(args[1], depth)}
    raise NotImplementedError(f"no sample value for {tp!r}")


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def strategy(tp: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of type ``tp`` (tuples and lists both where a Sequence is declared)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        fields = {name: strategy(hint, depth + 1) for name, hint in _hints(tp).items()}
        return st.builds(tp, **fields)
    if tp is Any or tp is object:
        return _json
    if tp is datetime:
        return st.datetimes(timezones=st.sampled_from([UTC, IST])) | st.datetimes()
    if tp in (str, bool, int) or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return st.from_type(tp)
    if tp is float:
        return st.floats(allow_nan=False)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if _is_union(tp):
        if type(None) in args and depth >= MAX_DEPTH:
            return st.none()
        return st.one_of([strategy(a, depth) for a in args if a is not type(None)]) | (
            st.none() if type(None) in args else st.nothing()
        )
    deep = depth >= MAX_DEPTH  # only empty sequences: do not even build their items
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return (
                st.just(()) if deep else st.lists(strategy(args[0], depth), max_size=3).map(tuple)
            )
        return st.tuples(*(strategy(a, depth) for a in args))
    if origin in (list, Sequence):
        items = st.just([]) if deep else st.lists(strategy(args[0], depth), max_size=3)
        return items if origin is list else items | items.map(tuple)
    if origin in (dict, Mapping):
        return st.dictionaries(strategy(args[0], depth), strategy(args[1], depth), max_size=3)
    raise NotImplementedError(f"no strategy for {tp!r}")
