"""Shared helpers of the collection and yaql function tests: a parser with a small table."""

from __future__ import annotations

from typing import Any, cast

import pytest

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.template.functions.base import (
    ABSENT,
    Function,
    FunctionContext,
    FunctionSpec,
    Parser,
    resolve,
    resolve_top,
    validate_functions,
)
from kiln.template.functions.collections import (
    Contains,
    Filter,
    FindInMap,
    GetAZs,
    ListConcat,
    ListConcatUnique,
    MapMerge,
    MapReplace,
    MemberListToMap,
    Repeat,
    Select,
)
from kiln.template.functions.yaql_function import Yaql
from kiln.template.versions import HOT_KEY, get_version

PATH = ("outputs", "o", "value")
LATEST = "2021-04-16"


class Echo(Function):
    """Test stand-in for a computed value: ``{echo: X}`` resolves to X."""

    def result(self, ctx: FunctionContext) -> Any:
        return resolve(self.args, ctx)


class NotYet(Function):
    """Test stand-in for ``get_attr`` of a resource not created yet: null."""

    def result(self, ctx: FunctionContext) -> Any:
        return None


class Ctx:
    """The little of the stack these functions ask for."""

    mappings: dict[str, dict[str, dict[str, Any]]] = {
        "RegionMap": {"us-east-1": {"AMI": "ami-1", "Arch": "x86_64"}},
    }

    def availability_zones(self) -> list[str]:
        return ["nova"]

    def mapping(self, name: str, key: str, value: str) -> Any:
        try:
            return self.mappings[name][key][value]
        except KeyError:
            raise StackValidationFailed(f"No mapping {name}.{key}.{value}") from None


def stub_context() -> FunctionContext:
    """A fresh :class:`Ctx`, typed as what functions receive."""
    return cast(FunctionContext, Ctx())


TABLE = {
    "repeat": FunctionSpec.of(Repeat),
    "map_merge": FunctionSpec.of(MapMerge),
    "map_replace": FunctionSpec.of(MapReplace),
    "filter": FunctionSpec.of(Filter),
    "list_concat": FunctionSpec.of(ListConcat),
    "list_concat_unique": FunctionSpec.of(ListConcatUnique),
    "contains": FunctionSpec.of(Contains),
    "yaql": FunctionSpec.of(Yaql),
    "Fn::Select": FunctionSpec.of(Select),
    "Fn::MemberListToMap": FunctionSpec.of(MemberListToMap),
    "Fn::FindInMap": FunctionSpec.of(FindInMap),
    "Fn::GetAZs": FunctionSpec.of(GetAZs),
    "echo": FunctionSpec.of(Echo),
    "not_yet": FunctionSpec.of(NotYet),
    # what a two-argument ``if`` with a false condition leaves behind
    "absent": FunctionSpec(lambda parser, name, raw, path: ABSENT),
}


def parser(version: str = LATEST, key: str = HOT_KEY) -> Parser:
    return Parser(get_version(version, key), TABLE, {})


def parse(data: Any, version: str = LATEST, key: str = HOT_KEY) -> Any:
    return parser(version, key).parse(data, PATH)


def ev(data: Any, version: str = LATEST, key: str = HOT_KEY) -> Any:
    """Parse and resolve ``data`` as an output value."""
    return resolve_top(parse(data, version, key), stub_context())


def validate(data: Any, version: str = LATEST) -> list[KilnError]:
    return validate_functions(parse(data, version), stub_context())


def fails(data: Any, message: str, version: str = LATEST, key: str = HOT_KEY) -> KilnError:
    """Parsing succeeds and resolution raises with ``message``."""
    parsed = parse(data, version, key)
    with pytest.raises(StackValidationFailed) as info:
        resolve_top(parsed, stub_context())
    assert message in info.value.message
    return info.value


def parse_fails(data: Any, message: str, version: str = LATEST) -> KilnError:
    with pytest.raises(StackValidationFailed) as info:
        parse(data, version)
    assert message in info.value.message
    return info.value


def validate_fails(data: Any, message: str, version: str = LATEST) -> KilnError:
    errors = validate(data, version)
    assert len(errors) == 1, errors
    assert isinstance(errors[0], StackValidationFailed)
    assert message in errors[0].message
    return errors[0]
