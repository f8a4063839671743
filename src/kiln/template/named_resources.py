"""Property items that name a resource of the stack and stand for one of its attributes.

Heat's Aodh alarms take, in their action lists, URLs or the *name* of a resource of
the same stack; a name stands for that resource's ``AlarmUrl`` (a scaling policy's
signal URL). Kiln makes the substitution while the definition is built: an item naming
an enabled resource, written as a string or computed from parameters alone, becomes
``get_attr: [NAME, AlarmUrl]``. From then on it is an ordinary reference: the alarm
waits for the named resource (the dependency any ``get_attr`` makes), the engine keeps
that attribute when the resource completes, the alarm is updated when it changes, and
a named resource without the attribute is a validation error at the item's path.
(Heat reads the attribute when the alarm is made, with no dependency: an alarm made
before the named resource gets a null URL.) Other items, URLs, are left as written.

The table is keyed by the resolved type, so aliases (``OS::Ceilometer::Alarm``) count.
Imports: kiln.core, kiln.template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError
from kiln.core.paths import Path
from kiln.template.functions.base import ABSENT, Function, resolve

if TYPE_CHECKING:
    from kiln.template.stack import StackDefinition

ALARM_URL = "AlarmUrl"

#: resolved type -> list property whose items may name a resource -> the attribute meant
NAMED_RESOURCE_ATTRIBUTES: Mapping[str, Mapping[str, str]] = {
    "OS::Aodh::Alarm": {
        "alarm_actions": ALARM_URL,
        "ok_actions": ALARM_URL,
        "insufficient_data_actions": ALARM_URL,
    },
}

_UNKNOWN = object()  # a value that cannot be known before resources exist


def with_named_attributes(
    type_name: str, properties: Any, stack: StackDefinition, path: Path
) -> Any:
    """``properties`` (parsed, at ``path``) with each item that names a resource of the
    stack replaced by a ``get_attr`` of the attribute it stands for."""
    rules = NAMED_RESOURCE_ATTRIBUTES.get(type_name)
    if not rules or not isinstance(properties, dict):
        return properties
    replaced = dict(properties)
    for name, attribute in rules.items():
        if name in replaced:
            replaced[name] = _items(replaced[name], attribute, stack, (*path, name))
    return replaced


def _items(value: Any, attribute: str, stack: StackDefinition, path: Path) -> Any:
    listed = _known(value, stack)
    if not isinstance(listed, list):
        return value
    items: list[Any] = []
    for index, item in enumerate(listed):
        named = _known(item, stack)
        if isinstance(named, str) and stack.has_resource(named):
            items.append(_get_attr(stack, named, attribute, (*path, index)))
        else:
            items.append(item)
    return items if items != listed else value


def _known(value: Any, stack: StackDefinition) -> Any:
    """The value itself, or a function's result when it needs no resource (parameters)."""
    if not isinstance(value, Function):
        return value
    if stack.depends_on_unknown(value):
        return _UNKNOWN
    try:
        found = resolve(value, stack)
    except KilnError:
        return _UNKNOWN  # reported where the property is validated
    return _UNKNOWN if found is ABSENT else found


def _get_attr(stack: StackDefinition, name: str, attribute: str, path: Path) -> Any:
    function = "get_attr" if stack.parser.table.get("get_attr") is not None else "Fn::GetAtt"
    return stack.parser.parse({function: [name, attribute]}, path)
