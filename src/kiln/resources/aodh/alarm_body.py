"""The Aodh document of an OS::Aodh::Alarm, built from its properties (pure functions).

Reference resource-types 6: the alarm is a ``threshold`` alarm whose rule holds the meter,
statistic, period and threshold; ``matching_metadata`` is old syntax for equality queries
on resource metadata, turned into ``query`` entries here; the ``*_queues`` properties are
Zaqar queues, appended to the matching action list as ``trust+zaqar://`` URLs.
Imports: stdlib only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ALARM_TYPE = "threshold"
RULE_KEY = "threshold_rule"
#: the action list each queue list adds to
QUEUE_ACTIONS = {
    "alarm_queues": "alarm_actions",
    "ok_queues": "ok_actions",
    "insufficient_data_queues": "insufficient_data_actions",
}
#: properties that form the threshold rule (the query is built apart)
RULE_PROPERTIES = (
    "meter_name",
    "period",
    "evaluation_periods",
    "threshold",
    "statistic",
    "comparison_operator",
)
#: top-level alarm fields copied from the properties as they are
PLAIN_PROPERTIES = ("description", "enabled", "repeat_actions", "severity")

# Meters Ceilometer's Nova pollsters publish: their metadata is the server's user
# metadata, so matching_metadata keys of these meters go under ``user_metadata.``.
_NOVA_METERS = frozenset({"instance", "cpu", "cpu.delta", "cpu_util", "vcpus"})
_NOVA_METER_FAMILIES = ("memory", "disk.", "network.")
_METADATA_PREFIXES = ("metering.", "user_metadata.")


def is_nova_meter(meter_name: str) -> bool:
    return meter_name in _NOVA_METERS or meter_name.startswith(_NOVA_METER_FAMILIES)


def metadata_field(meter_name: str, key: str) -> str:
    """``metadata.<prefix><key>``; a prefix already in ``key`` is replaced by the right one."""
    key = key.removeprefix("metadata.")
    for given in _METADATA_PREFIXES:
        if key.startswith(given):
            key = key[len(given) :]
            break
    prefix = "user_metadata." if is_nova_meter(meter_name) else "metering."
    return f"metadata.{prefix}{key}"


def alarm_query(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rule's query: the ``query`` items, then one equality per matching_metadata key."""
    query = [
        {key: value for key, value in item.items() if value is not None}
        for item in properties.get("query") or []
    ]
    meter = properties["meter_name"]
    for key, value in (properties.get("matching_metadata") or {}).items():
        # Aodh compares strings: metadata values of any type are sent as text.
        query.append({"field": metadata_field(meter, key), "op": "eq", "value": str(value)})
    return query


def queue_url(queue: str) -> str:
    return f"trust+zaqar://?queue_name={queue}"


def action_lists(properties: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Each action list with its queues appended as Zaqar URLs (unset lists stay out)."""
    lists: dict[str, list[Any]] = {}
    for queues, actions in QUEUE_ACTIONS.items():
        urls = [queue_url(q) for q in properties.get(queues) or []]
        given = properties.get(actions)
        if given is not None or urls:
            lists[actions] = [*(given or []), *urls]
    return lists


def time_constraints(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {key: value for key, value in item.items() if value is not None}
        for item in properties.get("time_constraints") or []
    ]


def alarm_body(properties: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The whole alarm document Aodh is sent on create and update."""
    rule = {key: properties[key] for key in RULE_PROPERTIES if properties.get(key) is not None}
    rule["query"] = alarm_query(properties)
    body: dict[str, Any] = {"name": name, "type": ALARM_TYPE}
    body.update(
        {key: properties[key] for key in PLAIN_PROPERTIES if properties.get(key) is not None}
    )
    body["time_constraints"] = time_constraints(properties)
    body.update(action_lists(properties))
    body[RULE_KEY] = rule
    return body
