"""Shared helpers of the string-function tests: a parser with a small table and stub calls."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.template.functions.base import (
    Function,
    FunctionContext,
    FunctionSpec,
    Parser,
    resolve,
    resolve_top,
    validate_functions,
)
from kiln.template.functions.strings import (
    Base64,
    Digest,
    FnReplace,
    FnSplit,
    ListJoin,
    MakeUrl,
    StrReplace,
    StrReplaceStrict,
    StrReplaceVStrict,
    StrSplit,
)
from kiln.template.versions import get_version

PATH = ("outputs", "o", "value")


class Echo(Function):
    """Test stand-in for a computed value: ``{echo: X}`` resolves to X."""

    def result(self, ctx: FunctionContext) -> Any:
        return resolve(self.args, ctx)


class NotYet(Function):
    """Test stand-in for ``get_attr`` of a resource not created yet: null."""

    def result(self, ctx: FunctionContext) -> Any:
        return None


class Ctx:
    """The string functions ask nothing of the stack."""


TABLE = {
    "list_join": FunctionSpec.of(ListJoin),
    "Fn::Join": FunctionSpec.of(ListJoin),
    "str_replace": FunctionSpec.of(StrReplace),
    "str_replace_strict": FunctionSpec.of(StrReplaceStrict),
    "str_replace_vstrict": FunctionSpec.of(StrReplaceVStrict),
    "Fn::Replace": FunctionSpec.of(FnReplace),
    "str_split": FunctionSpec.of(StrSplit),
    "Fn::Split": FunctionSpec.of(FnSplit),
    "digest": FunctionSpec.of(Digest),
    "Fn::Base64": FunctionSpec.of(Base64),
    "make_url": FunctionSpec.of(MakeUrl),
    "echo": FunctionSpec.of(Echo),
    "not_yet": FunctionSpec.of(NotYet),
}


def parse(data: Any, version: str = "2021-04-16", key: str | None = None) -> Any:
    v = get_version(version, key) if key else get_version(version)
    return Parser(v, TABLE, {}).parse(data, PATH)


def ev(data: Any, version: str = "2021-04-16", key: str | None = None) -> Any:
    return resolve_top(parse(data, version, key), Ctx())  # type: ignore[arg-type]


def fails(data: Any, message: str, version: str = "2021-04-16", key: str | None = None) -> Any:
    """Assert that parsing or resolving ``data`` fails with ``message``; return the error."""
    with pytest.raises(StackValidationFailed) as info:
        ev(data, version, key)
    assert message in info.value.message
    return info.value


def parse_fails(data: Any, message: str, version: str = "2021-04-16") -> None:
    with pytest.raises(StackValidationFailed) as info:
        parse(data, version)
    assert message in info.value.message
    assert info.value.path == (*PATH, next(iter(data)))


def validation_errors(data: Any, version: str = "2021-04-16") -> list[KilnError]:
    return validate_functions(parse(data, version), Ctx())  # type: ignore[arg-type]
