"""The alarming client contract (Aodh v2) the OS::Aodh::Alarm plugin uses.

Bodies are Aodh's alarm documents (``{"name", "type": "threshold", "threshold_rule":
{...}, "alarm_actions": [...], ...}``). An update follows aodhclient: read the alarm,
merge the changes (the ``<type>_rule`` merged key by key), and PUT the whole document
(:func:`merge_alarm`). Deletes raise NotFound when the alarm is gone. Imports: stdlib
and kiln.cloud.api only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kiln.cloud.api.records import Record

#: alarm types Aodh knows; each carries its rule under ``<type>_rule``
ALARM_TYPES = (
    "threshold",
    "gnocchi_resources_threshold",
    "gnocchi_aggregation_by_metrics_threshold",
    "gnocchi_aggregation_by_resources_threshold",
    "event",
    "composite",
    "loadbalancer_member_health",
)
ALARM_STATES = ("ok", "alarm", "insufficient data")

#: fields the server owns: never sent back on a PUT
_SERVER_FIELDS = frozenset({"alarm_id", "timestamp", "state_timestamp"})


def rule_key(alarm_type: str) -> str:
    """The body key holding the rule of ``alarm_type`` (``threshold`` -> ``threshold_rule``)."""
    return f"{alarm_type}_rule"


def merge_alarm(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """The full document to PUT: ``current`` with ``changes`` applied, the rule key-wise."""
    merged = {k: v for k, v in current.items() if k not in _SERVER_FIELDS}
    for key, value in changes.items():
        old = merged.get(key)
        if key.endswith("_rule") and isinstance(old, Mapping) and isinstance(value, Mapping):
            merged[key] = {**old, **value}
        else:
            merged[key] = value
    return merged


class Alarm(Record):
    """An Aodh alarm; its id is ``alarm_id``."""

    @property
    def id(self) -> str:
        return str(self.raw["alarm_id"])

    @property
    def type(self) -> str | None:
        return self.raw.get("type")

    @property
    def state(self) -> str | None:
        return self.raw.get("state")

    @property
    def status(self) -> str | None:
        """Alarms have no status; their ``state`` stands in for it."""
        return self.state

    @property
    def enabled(self) -> bool:
        return bool(self.raw.get("enabled", True))

    @property
    def severity(self) -> str | None:
        return self.raw.get("severity")

    @property
    def rule(self) -> Mapping[str, Any]:
        """The ``<type>_rule`` of the alarm ({} when absent)."""
        return self.raw.get(rule_key(self.type or ""), None) or {}


class AlarmingApi(Protocol):
    """Aodh v2, as the alarm plugin uses it."""

    def create_alarm(self, body: Mapping[str, Any]) -> Alarm:
        """POST /v2/alarms."""
        ...

    def get_alarm(self, alarm_id: str) -> Alarm:
        """GET /v2/alarms/{id}."""
        ...

    def find_alarm(self, name_or_id: str) -> Alarm:
        """By id, then by name (NotFound / MultipleMatches)."""
        ...

    def list_alarms(self, **filters: Any) -> list[Alarm]:
        """GET /v2/alarms with ``q.field/q.op=eq/q.value`` per filter."""
        ...

    def update_alarm(self, alarm_id: str, changes: Mapping[str, Any]) -> Alarm:
        """GET, :func:`merge_alarm` the changes, PUT /v2/alarms/{id} the whole document."""
        ...

    def delete_alarm(self, alarm_id: str) -> None:
        """DELETE /v2/alarms/{id}."""
        ...

    def get_alarm_state(self, alarm_id: str) -> str:
        """GET /v2/alarms/{id}/state."""
        ...

    def set_alarm_state(self, alarm_id: str, state: str) -> str:
        """PUT /v2/alarms/{id}/state (fires the matching actions)."""
        ...

    def alarm_history(self, alarm_id: str) -> list[dict[str, Any]]:
        """GET /v2/alarms/{id}/history, newest first."""
        ...


# CONTRACT READY
