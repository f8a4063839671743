"""The :class:`~kiln.cloud.api.alarming.AlarmingApi` of a real Aodh over REST.

openstacksdk has no Aodh proxy: ``conn.alarm`` is a raw adapter whose base is the
discovered ``…/alarming/v2``, so paths here start at ``/alarms``. Updates read the
alarm, merge the changes and PUT the whole document, as aodhclient does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kiln.cloud.api.alarming import Alarm, merge_alarm
from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.openstack.rest import RestClient


def _path(alarm_id: str, tail: str = "") -> str:
    return f"/alarms/{quote(alarm_id, safe='')}{tail}"


class OpenStackAlarming:
    """Aodh v2 through a :class:`RestClient` over ``conn.alarm``."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest

    def create_alarm(self, body: Mapping[str, Any]) -> Alarm:
        return Alarm(self.rest.post("/alarms", dict(body)))

    def get_alarm(self, alarm_id: str) -> Alarm:
        return Alarm(self.rest.get(_path(alarm_id)))

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
        # Aodh's query triples; requests repeats a key given a list value
        params: dict[str, list[str]] = {"q.field": [], "q.op": [], "q.value": []}
        for field, value in filters.items():
            params["q.field"].append(field)
            params["q.op"].append("eq")
            params["q.value"].append(str(value))
        found = self.rest.get("/alarms", params=params if filters else None)
        return [Alarm(item) for item in found or []]

    def update_alarm(self, alarm_id: str, changes: Mapping[str, Any]) -> Alarm:
        document = merge_alarm(self.rest.get(_path(alarm_id)), changes)
        return Alarm(self.rest.put(_path(alarm_id), document))

    def delete_alarm(self, alarm_id: str) -> None:
        self.rest.delete(_path(alarm_id))

    def get_alarm_state(self, alarm_id: str) -> str:
        return str(self.rest.get(_path(alarm_id, "/state")))

    def set_alarm_state(self, alarm_id: str, state: str) -> str:
        return str(self.rest.put(_path(alarm_id, "/state"), state))

    def alarm_history(self, alarm_id: str) -> list[dict[str, Any]]:
        return list(self.rest.get(_path(alarm_id, "/history")) or [])
