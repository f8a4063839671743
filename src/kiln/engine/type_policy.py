"""The ``resource_types:<Type>`` policy on creates, updates and previews (heat-api.md 6).

The API holds the policy; it works out which types the caller may not use and
sends them with the call (``Context.denied_resource_types``: names, or
``Prefix::*``). The engine checks them against the template's resources: the
type each names and the type a registry alias maps it to. A refusal is Heat's
403 ``Forbidden``, "You are not authorized to use OS::Nova::Flavor.".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from kiln.core.errors import KilnError
from kiln.template.stack import StackDefinition
from kiln.template.stack_resources import BuiltinResource


class Forbidden(KilnError):
    http_status = 403

    def __init__(self, type_name: str) -> None:
        super().__init__(f"You are not authorized to use {type_name}.")


def denied(type_name: str, patterns: Iterable[str]) -> bool:
    prefix = "::".join([*type_name.split("::")[:-1], "*"])
    return any(p in (type_name, prefix) for p in patterns)


#: group types and where their members' types are written in their properties
_MEMBER_TYPES = {
    "OS::Heat::ResourceGroup": lambda props: [(props.get("resource_def") or {}).get("type")],
    "OS::Heat::ResourceChain": lambda props: list(props.get("resources") or []),
}


def check_resource_types(definition: StackDefinition, patterns: tuple[str, ...]) -> None:
    """Raise Forbidden for the first resource whose type the caller may not use: in the
    template, in the templates of its template resources, and as a group's members
    (a nested stack is made by the engine, where the caller's policy is not known)."""
    for type_name in _types_used(definition):
        if denied(type_name, patterns):
            raise Forbidden(type_name)


def _types_used(definition: StackDefinition) -> Iterator[str]:
    for name, resource in definition.resources.items():
        yield resource.type
        typed = definition.typed.get(name)
        if isinstance(typed, BuiltinResource):
            yield typed.type.name
            members = _MEMBER_TYPES.get(typed.type.name)
            properties = resource.properties
            if members is not None and isinstance(properties, Mapping):
                yield from (t for t in _literal(members, properties) if isinstance(t, str))
        nested = getattr(typed, "nested", None)
        if isinstance(nested, StackDefinition):
            yield from _types_used(nested)


def _literal(members: Any, properties: Mapping[str, Any]) -> list[Any]:
    """The member types a group's properties name outright (a type computed by a
    function is not known before the group runs, and is not checked)."""
    try:
        return list(members(properties))
    except (AttributeError, TypeError):
        return []
