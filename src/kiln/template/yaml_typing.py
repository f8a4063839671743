"""How YAML 1.1 tags and plain scalars become Python values (reference 8.2).

Plain scalars are typed with PyYAML's own implicit-resolution table and its
safe constructors, so ``yes``/``off`` are booleans, ``017`` is 15, ``0x1F`` is
31, ``1_000`` is 1000, ``~`` is null, ``.inf`` a float, exactly as PyYAML's
safe loader does; the one difference is that timestamps stay the original
text. Which standard tags may sit on which kind of node is decided here too.
Problems are raised as :class:`TagError` (a message only; the caller knows the
position). Imports: PyYAML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

_P = "tag:yaml.org,2002:"
STR, NULL, BOOL, INT, FLOAT = _P + "str", _P + "null", _P + "bool", _P + "int", _P + "float"
BINARY, TIMESTAMP, MERGE = _P + "binary", _P + "timestamp", _P + "merge"
SEQ, OMAP, PAIRS, MAP, SET = _P + "seq", _P + "omap", _P + "pairs", _P + "map", _P + "set"
SEQUENCE_TAGS = frozenset({SEQ, OMAP, PAIRS})
MAPPING_TAGS = frozenset({MAP, SET})
_SCALAR_TAGS = frozenset({STR, NULL, BOOL, INT, FLOAT, BINARY, TIMESTAMP})
_NODE_KIND = {
    **dict.fromkeys(_SCALAR_TAGS, "scalar"),
    **dict.fromkeys(SEQUENCE_TAGS, "sequence"),
    **dict.fromkeys(MAPPING_TAGS, "mapping"),
}

RESOLVERS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    first: list(entries)
    for first, entries in Resolver.yaml_implicit_resolvers.items()
    if isinstance(first, str)
}
"""PyYAML's implicit-typing table: first character -> [(tag, regexp)].

Snapshotted at import so that code registering resolvers globally cannot change
how templates load. A plain scalar whose first character is not a key here is
always a string. The table's "value" and "yaml" tags have no constructor, so
such scalars fail exactly as in PyYAML.
"""

_SAFE = SafeConstructor()
_CONSTRUCTORS: dict[str, Callable[[ScalarNode], Any]] = {
    BOOL: _SAFE.construct_yaml_bool,
    INT: _SAFE.construct_yaml_int,
    FLOAT: _SAFE.construct_yaml_float,
    BINARY: _SAFE.construct_yaml_binary,
}


class TagError(Exception):
    """A tag that cannot be used, or a value its tag cannot construct."""


def resolve(value: str) -> str:
    """The implicit tag of a plain scalar."""
    resolvers = RESOLVERS.get(value[0] if value else "")
    if resolvers:
        for tag, regexp in resolvers:
            if regexp.match(value):
                return tag
    return STR


def scalar_value(tag: str, value: str) -> Any:
    """The Python value of a scalar with a known tag other than merge."""
    if tag in (STR, TIMESTAMP):
        return value  # timestamps stay text (reference 8.2)
    if tag == NULL:
        return None
    construct = _CONSTRUCTORS.get(tag)
    if construct is None:
        raise TagError(wrong_node(tag, "scalar"))
    try:
        result = construct(ScalarNode(tag, value, None, None))
        if tag == INT:
            # Hexadecimal, octal or binary text can make an int too long for decimal text,
            # which Python refuses to write (int_max_str_digits): as invalid as 5000 digits.
            str(result)
        return result
    except yaml.MarkedYAMLError as exc:
        raise TagError(exc.problem or f"invalid value for the tag {tag!r}") from None
    except Exception:  # int() of 5000 digits, bool of "maybe", ...
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise TagError(f"invalid value {shown!r} for the tag {tag!r}") from None


def container_tag(tag: str | None, is_map: bool) -> str:
    """The tag a mapping or sequence node is built as; TagError if it cannot have ``tag``."""
    if tag is None or tag == "!":
        return MAP if is_map else SEQ
    if tag in (MAPPING_TAGS if is_map else SEQUENCE_TAGS):
        return tag
    raise TagError(wrong_node(tag, "mapping" if is_map else "sequence"))


def wrong_node(tag: str, found: str) -> str:
    """The message for ``tag`` on a node of kind ``found`` it does not fit."""
    kind = _NODE_KIND.get(tag)
    if kind is None:
        return f"could not determine a constructor for the tag {tag!r}"
    return f"expected a {kind} node, but found {found}"
