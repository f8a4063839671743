"""Constraints on values: length, range, modulo, allowed values and pattern, custom.

The same constraint objects serve resource property schemas and template
parameters. Each is a frozen dataclass that checks its own arguments when built
(raising InvalidSchemaError with Heat's wording), says which types it applies
to, and checks a value, returning the failure message or None. A constraint's
``description``, when given, replaces the default failure message. Messages
follow the reference, section 3.4. Imports: kiln.core, kiln.schema.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from kiln.core.errors import InvalidSchemaError
from kiln.schema.guarded_regex import RegexStopped, match_within
from kiln.schema.types import (
    BOOLEAN,
    INTEGER,
    LIST,
    MAP,
    NUMBER,
    STRING,
    is_number,
    parse_bool,
    str_to_num,
    type_kind,
)

if TYPE_CHECKING:
    from kiln.schema.custom import CustomConstraints


@dataclass(frozen=True)
class Constraint:
    """Base of every constraint; subclasses implement :meth:`_failure`."""

    # Heat's class name, used in "<Kind> constraint invalid for <type>".
    kind: ClassVar[str] = "Constraint"
    # The HOT key that declares it (``length``, ``range``, ...).
    key: ClassVar[str] = ""
    valid_kinds: ClassVar[frozenset[str]] = frozenset()

    description: str | None = field(default=None, kw_only=True)

    def applies_to(self, type_name: str) -> bool:
        """Whether the constraint may be declared on a value of this type."""
        return type_kind(type_name) in self.valid_kinds

    def applicability_error(self, type_name: str) -> str | None:
        """The message "<Kind> constraint invalid for <type>", or None when applicable."""
        if self.applies_to(type_name):
            return None
        return f"{self.kind} constraint invalid for {type_name}"

    def check(
        self,
        value: Any,
        custom: CustomConstraints | None = None,
        *,
        value_type: str | None = None,
    ) -> str | None:
        """The failure message for ``value``, or None when it satisfies the constraint.

        ``value_type`` (a property or parameter type name) lets ``allowed_values``
        compare in the value's type. With ``custom`` None, custom constraints pass.
        """
        message = self._failure(value, custom, type_kind(value_type) if value_type else None)
        if message is None:
            return None
        return self.description or message

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """Heat's schema form: ``{"range": {"min": 1}, "description": "..."}``."""
        out: dict[str, Any] = {self.key: self._argument()}
        if self.description:
            out["description"] = self.description
        return out

    def _argument(self) -> Any:
        raise NotImplementedError


def _bounds(low_name: str, low: Any, high_name: str, high: Any) -> dict[str, Any]:
    return {k: v for k, v in ((low_name, low), (high_name, high)) if v is not None}


@dataclass(frozen=True)
class Length(Constraint):
    """Inclusive bounds on ``len(value)``: characters, list items or map keys."""

    kind: ClassVar[str] = "Length"
    key: ClassVar[str] = "length"
    valid_kinds: ClassVar[frozenset[str]] = frozenset({STRING, LIST, MAP})

    min: int | None = None
    max: int | None = None

    def __post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise InvalidSchemaError(
                "A length constraint must have a min value and/or a max value specified."
            )
        for bound in (self.min, self.max):
            if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool)):
                raise InvalidSchemaError("min/max length must be integral")

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        try:
            length = len(value)
        except TypeError:
            return f"{value} has no length"
        if (self.min is None or length >= self.min) and (self.max is None or length <= self.max):
            return None
        return f"length ({length}) is out of range (min: {self.min}, max: {self.max})"

    def _argument(self) -> Any:
        return _bounds("min", self.min, "max", self.max)


@dataclass(frozen=True)
class Range(Constraint):
    """Inclusive numeric bounds."""

    kind: ClassVar[str] = "Range"
    key: ClassVar[str] = "range"
    valid_kinds: ClassVar[frozenset[str]] = frozenset({NUMBER, INTEGER})

    min: int | float | None = None
    max: int | float | None = None

    def __post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise InvalidSchemaError(
                "A range constraint must have a min value and/or a max value specified."
            )
        for bound in (self.min, self.max):
            if bound is not None and not is_number(bound):
                raise InvalidSchemaError("min/max must be numeric")

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        try:
            number = str_to_num(value)
        except (TypeError, ValueError) as exc:
            return str(exc)
        if (self.min is None or number >= self.min) and (self.max is None or number <= self.max):
            return None
        return f"{value} is out of range (min: {self.min}, max: {self.max})"

    def _argument(self) -> Any:
        return _bounds("min", self.min, "max", self.max)


@dataclass(frozen=True)
class Modulo(Constraint):
    """``value % step == offset``, with Python's (mathematical) modulo."""

    kind: ClassVar[str] = "Modulo"
    key: ClassVar[str] = "modulo"
    valid_kinds: ClassVar[frozenset[str]] = frozenset({NUMBER, INTEGER})

    step: int | None = None
    offset: int | None = None

    def __post_init__(self) -> None:
        step, offset = self.step, self.offset
        if step is None or offset is None:
            raise InvalidSchemaError(
                "A modulo constraint must have a step value and an offset value specified."
            )
        for bound in (step, offset):
            if not isinstance(bound, int) or isinstance(bound, bool):
                raise InvalidSchemaError("step/offset must be integer")
        if step == 0:
            raise InvalidSchemaError("step cannot be 0.")
        if abs(offset) >= abs(step):
            raise InvalidSchemaError("offset must be smaller (by absolute value) than step.")
        if step * offset < 0:
            raise InvalidSchemaError("step and offset must be both positive or both negative.")

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        try:
            number = str_to_num(value)
        except (TypeError, ValueError) as exc:
            return str(exc)
        assert self.step is not None  # checked when built
        if number % self.step == self.offset:
            return None
        return f"{value} is not a multiple of {self.step} with an offset of {self.offset}"

    def _argument(self) -> Any:
        return {"step": self.step, "offset": self.offset}


def _as_json(value: Any) -> str:
    return json.dumps(value, default=str)


@dataclass(frozen=True)
class AllowedValues(Constraint):
    """The value (each item, for lists) must equal one of the allowed values."""

    kind: ClassVar[str] = "AllowedValues"
    key: ClassVar[str] = "allowed_values"
    valid_kinds: ClassVar[frozenset[str]] = frozenset({STRING, NUMBER, INTEGER, BOOLEAN, LIST})

    allowed: Sequence[Any] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.allowed, list | tuple):
            raise InvalidSchemaError("AllowedValues must be a list")
        object.__setattr__(self, "allowed", tuple(self.allowed))

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        if isinstance(value, list):
            # Every item must be allowed; name the first one that is not.
            as_text = {str(a) for a in self.allowed}
            for item in value:
                if not (_contains(self.allowed, item) or str(item) in as_text):
                    return self._message(item)
            return None
        return None if self._is_allowed(value, kind) else self._message(value)

    def _message(self, value: Any) -> str:
        return f"{_as_json(value)} is not an allowed value {_as_json(list(self.allowed))}"

    def _is_allowed(self, value: Any, kind: str | None) -> bool:
        converter = _CONVERTERS.get(kind) if kind else None
        if converter is None:
            return _contains(self.allowed, value)
        try:
            typed = converter(value)
        except (TypeError, ValueError):
            return False
        return any(_converts_to(converter, a, typed) for a in self.allowed)

    def _argument(self) -> Any:
        return list(self.allowed)


def _contains(allowed: Iterable[Any], value: Any) -> bool:
    return any(_loose_equal(a, value) for a in allowed)


def _loose_equal(a: Any, b: Any) -> bool:
    # Python equality, except that a bool never equals a number (True != 1 here).
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except Exception:
        return False


def _converts_to(converter: Any, allowed: Any, typed: Any) -> bool:
    try:
        return bool(converter(allowed) == typed)
    except (TypeError, ValueError):
        return False


_CONVERTERS: dict[str, Any] = {
    STRING: str,
    NUMBER: str_to_num,
    INTEGER: str_to_num,
    BOOLEAN: parse_bool,
}


@dataclass(frozen=True)
class AllowedPattern(Constraint):
    """A regular expression that must match the whole value."""

    kind: ClassVar[str] = "AllowedPattern"
    key: ClassVar[str] = "allowed_pattern"
    valid_kinds: ClassVar[frozenset[str]] = frozenset({STRING})

    pattern: str = ""
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise InvalidSchemaError("AllowedPattern must be a string")
        try:
            with warnings.catch_warnings():
                # Python's FutureWarnings about the user's pattern ("Possible nested
                # set") concern the user's text, not Kiln: the pattern still compiles.
                warnings.simplefilter("ignore", FutureWarning)
                regex = re.compile(self.pattern)
        except (re.error, OverflowError) as exc:  # OverflowError: a{99999999999}
            raise InvalidSchemaError(
                f'AllowedPattern "{self.pattern}" is not a valid regular expression: {exc}'
            ) from None
        except RecursionError:  # the compiler recurses once per nested group
            raise InvalidSchemaError(
                f'AllowedPattern "{self.pattern}" is not a valid regular expression: '
                "groups are nested too deeply"
            ) from None
        object.__setattr__(self, "_regex", regex)

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        text = value if isinstance(value, str) else str(value)
        # Heat anchors at the start and requires the first match to reach the end
        # (not re.fullmatch: "a|ab" does not accept "ab"). A catastrophic pattern
        # must not hang validation: the match runs under a deadline.
        try:
            match = match_within(self._regex, text)
        except RegexStopped as stopped:
            why = stopped.reason or "matching took too long"
            return f'"{value}" could not be matched against pattern "{self.pattern}": {why}'
        if match is not None and match.end() == len(text):
            return None
        return f'"{value}" does not match pattern "{self.pattern}"'

    def _argument(self) -> Any:
        return self.pattern


@dataclass(frozen=True)
class CustomConstraint(Constraint):
    """A named check from a :class:`~kiln.schema.custom.CustomConstraints` registry.

    List values are checked item by item. Without a registry the check passes,
    so offline schema validation can skip checks that need a cloud.
    """

    kind: ClassVar[str] = "CustomConstraint"
    key: ClassVar[str] = "custom_constraint"
    valid_kinds: ClassVar[frozenset[str]] = frozenset({STRING, NUMBER, INTEGER, BOOLEAN, LIST})

    name: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidSchemaError("CustomConstraint must be a string")

    def _failure(
        self, value: Any, custom: CustomConstraints | None, kind: str | None
    ) -> str | None:
        if custom is None:
            return None
        items = value if isinstance(value, list) else [value]
        for item in items:
            message = custom.check(self.name, item)
            if message is not None:
                return message
        return None

    def _argument(self) -> Any:
        return self.name


def first_failure(
    constraints: Iterable[Constraint],
    value: Any,
    custom: CustomConstraints | None = None,
    *,
    value_type: str | None = None,
    skip_custom: bool = False,
) -> str | None:
    """Check constraints in declaration order; the first failure message, or None."""
    for constraint in constraints:
        if skip_custom and isinstance(constraint, CustomConstraint):
            continue
        message = constraint.check(value, custom, value_type=value_type)
        if message is not None:
            return message
    return None
