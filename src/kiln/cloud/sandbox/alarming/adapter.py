"""The in-process :class:`~kiln.cloud.api.alarming.AlarmingApi`: the alarming model, no HTTP.

Same rules and state as the REST app; answers are deep copies wrapped in
:class:`~kiln.cloud.api.alarming.Alarm`. An update reads, merges and writes the whole
document, as aodhclient (and the OpenStack adapter) do.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.alarming import Alarm, merge_alarm
from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.alarming.model import AlarmingModel


class AlarmingAdapter:
    """AlarmingApi for one scope, in process."""

    def __init__(self, model: AlarmingModel, scope: CloudScope) -> None:
        self.model = model
        self.scope = scope

    def create_alarm(self, body: Mapping[str, Any]) -> Alarm:
        return Alarm(copy.deepcopy(self.model.create_alarm(self.scope, body)))

    def get_alarm(self, alarm_id: str) -> Alarm:
        return Alarm(copy.deepcopy(self.model.get_alarm(self.scope, alarm_id)))

    def find_alarm(self, name_or_id: str) -> Alarm:
        try:
            return self.get_alarm(name_or_id)
        except NotFound:
            pass
        matches = self.list_alarms(name=name_or_id)
        if len(matches) > 1:
            raise MultipleMatches(f"More than one alarm exists with the name '{name_or_id}'.")
        if not matches:
            raise NotFound(f"Alarm {name_or_id} not found", service="alarming")
        return matches[0]

    def list_alarms(self, **filters: Any) -> list[Alarm]:
        query = [{"field": k, "op": "eq", "value": str(v)} for k, v in filters.items()]
        return [Alarm(copy.deepcopy(a)) for a in self.model.list_alarms(self.scope, query)]

    def update_alarm(self, alarm_id: str, changes: Mapping[str, Any]) -> Alarm:
        current = self.model.get_alarm(self.scope, alarm_id)
        document = merge_alarm(copy.deepcopy(current), changes)
        return Alarm(copy.deepcopy(self.model.update_alarm(self.scope, alarm_id, document)))

    def delete_alarm(self, alarm_id: str) -> None:
        self.model.delete_alarm(self.scope, alarm_id)

    def get_alarm_state(self, alarm_id: str) -> str:
        return self.model.get_state(self.scope, alarm_id)

    def set_alarm_state(self, alarm_id: str, state: str) -> str:
        return self.model.set_state(self.scope, alarm_id, state)

    def alarm_history(self, alarm_id: str) -> list[dict[str, Any]]:
        return copy.deepcopy(self.model.history(self.scope, alarm_id))
