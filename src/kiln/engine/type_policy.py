"""The ``resource_types:<Type>`` policy on creates, updates and previews (heat-api.md 6).

The API holds the policy; it works out which types the caller may not use and
sends them with the call (``Context.denied_resource_types``: names, or
``Prefix::*``). The engine checks them against the template's resources: the
type each names and the type a registry alias maps it to. A refusal is Heat's
403 ``Forbidden``, "You are not authorized to use OS::Nova::Flavor.".
"""

from __future__ import annotations

from collections.abc import Iterable

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


def check_resource_types(definition: StackDefinition, patterns: tuple[str, ...]) -> None:
    """Raise Forbidden for the first resource whose type the caller may not use."""
    for name, resource in definition.resources.items():
        names = [resource.type]
        typed = definition.typed.get(name)
        if isinstance(typed, BuiltinResource):
            names.append(typed.type.name)
        for type_name in names:
            if denied(type_name, patterns):
                raise Forbidden(type_name)
