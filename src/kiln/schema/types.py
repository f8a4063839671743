"""Value types shared by property schemas and template parameters.

Two vocabularies name the same few kinds of value: property types (``String``,
``Integer``, ``Number``, ``Boolean``, ``List``, ``Map``, ``Any``) and parameter
types (``string``, ``number``, ``comma_delimited_list``, ``json``, ``boolean``,
or their CFN spellings). :func:`type_kind` maps every spelling to one kind so
constraints can say what they apply to once. Also here: the ``NO_DEFAULT``
sentinel and Heat's lenient number and boolean parsing. Imports: stdlib only.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar, Final


class _NoDefault:
    """Marks a schema without a default (``None`` is "not set", not a default)."""

    _instance: ClassVar[_NoDefault | None] = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final[Any] = _NoDefault()

# Kinds of value, independent of who names them.
STRING = "string"
INTEGER = "integer"
NUMBER = "number"
BOOLEAN = "boolean"
LIST = "list"
MAP = "map"
ANY = "any"

_KINDS: Final[dict[str, str]] = {
    # property types
    "String": STRING,
    "Integer": INTEGER,
    "Number": NUMBER,
    "Boolean": BOOLEAN,
    "List": LIST,
    "Map": MAP,
    "Any": ANY,
    # HOT parameter types
    "string": STRING,
    "number": NUMBER,
    "boolean": BOOLEAN,
    "comma_delimited_list": LIST,
    "json": MAP,
    # CFN parameter types
    "CommaDelimitedList": LIST,
    "Json": MAP,
}


def type_kind(type_name: str) -> str | None:
    """The kind of a property or parameter type name; None when unknown."""
    return _KINDS.get(str(type_name))


TRUE_STRINGS: Final = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS: Final = ("0", "f", "false", "off", "n", "no")
_ACCEPTED = ", ".join(f"'{s}'" for s in sorted(TRUE_STRINGS + FALSE_STRINGS))


def parse_bool(value: Any) -> bool:
    """A bool from a bool, or from a string/number spelled like one of the accepted words.

    Raises ValueError "Unrecognized value 'X', acceptable values are: ..." otherwise.
    """
    if isinstance(value, bool):
        return value
    text = str(value)
    lowered = text.strip().lower()
    if lowered in TRUE_STRINGS:
        return True
    if lowered in FALSE_STRINGS:
        return False
    raise ValueError(f"Unrecognized value '{text}', acceptable values are: {_ACCEPTED}")


def str_to_num(value: Any) -> int | float:
    """A number from a number, or from a string that parses as int, else as float.

    Raises ValueError/TypeError with Python's own message (e.g. "could not convert
    string to float: 'abc'") otherwise.
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value  # type: ignore[return-value]  # int or float in practice
    if isinstance(value, bool):
        value = str(value)
    try:
        return int(value)
    except (ValueError, TypeError):
        return float(value)


def is_number(value: Any) -> bool:
    """True for int and float values, but not for bools."""
    return isinstance(value, int | float) and not isinstance(value, bool)
