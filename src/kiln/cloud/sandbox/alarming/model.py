"""The simulated Aodh v2 service: alarms, their state and history, and firing.

Alarms never evaluate by themselves (no telemetry is simulated). A state change -- a
``PUT .../state``, a whole-document PUT with another state, or :meth:`AlarmingModel.fire`
called by the ``/_sim`` control endpoint -- notifies the URLs of the new state's action
list when the alarm is enabled, and again on every repeated state when
``repeat_actions`` is set. Delivery goes through two injectable callables: ``deliver(url,
body, headers)`` (default: a background POST) and ``token_for_trust(trust_id)`` (default:
no token). Notifications are sent after the store lock is released, so a receiver may
call back into the sandbox.

Each alarm is stored (kind ``alarm``) as ``{"id", "alarm", "history", "trust_id"}``:
the shown document, its change history, and the trust of the creator's scope.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kiln.cloud.api.alarming import ALARM_STATES
from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.alarming.delivery import (
    Deliver,
    TokenForTrust,
    no_trust_token,
    notification_target,
    post_in_background,
)
from kiln.cloud.sandbox.alarming.rules import ACTION_LISTS, checked_alarm
from kiln.cloud.sandbox.cloud import SandboxCloud

log = logging.getLogger(__name__)

SERVICE = "alarming"
KIND = "alarm"
Document = dict[str, Any]
Delivery = tuple[str, dict[str, Any], dict[str, str]]

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


def _comparable(value: Any, wanted: str) -> tuple[Any, Any]:
    """The stored value and the query's string, made comparable (bools, numbers)."""
    if isinstance(value, bool):
        return str(value).lower(), wanted.lower()
    if isinstance(value, int | float):
        try:
            return value, float(wanted)
        except ValueError:
            return str(value), wanted
    return ("" if value is None else str(value)), wanted


class AlarmingModel:
    """Aodh: alarms CRUD, state, history, and notifications on state changes."""

    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud
        self.store = cloud.store
        self.sim = cloud.sim
        self.deliver: Deliver = post_in_background
        self.token_for_trust: TokenForTrust = no_trust_token
        #: notifications to ``log://`` and ``test://`` URLs, newest last (url, body)
        self.recorded: list[tuple[str, dict[str, Any]]] = []

    def seed(self) -> None:
        """Nothing to add: a cloud starts without alarms."""

    # -- alarms ---------------------------------------------------------------------------
    def create_alarm(self, scope: CloudScope, body: Mapping[str, Any]) -> Document:
        self.sim.enter(scope, SERVICE, "create_alarm")
        fields = checked_alarm(body)
        project = self._owner(scope, body)
        with self.store.lock:
            self._check_name(project, fields["name"], None)
            used = sum(1 for w in self.store.list(KIND) if w["alarm"]["project_id"] == project)
            self.sim.check_quota(project, "alarms", used)
            now = self.cloud.timestamp()
            alarm_id = self.cloud.new_id()
            alarm: Document = {
                "alarm_id": alarm_id,
                "state": "insufficient data",
                "state_reason": "Not evaluated yet",
                **fields,
                "project_id": project,
                "user_id": body.get("user_id") or scope.user_id,
                "timestamp": now,
                "state_timestamp": now,
            }
            wrapper: Document = {
                "id": alarm_id,
                "alarm": alarm,
                "history": [],
                "trust_id": scope.trust_id,
            }
            self._record(wrapper, scope, "creation", alarm)
            self.store.put(KIND, wrapper)
            return alarm

    def get_alarm(self, scope: CloudScope, alarm_id: str) -> Document:
        self.sim.enter(scope, SERVICE, "get_alarm", alarm_id)
        with self.store.lock:
            return self._wrapper(scope, alarm_id)["alarm"]  # type: ignore[no-any-return]

    def list_alarms(
        self, scope: CloudScope, query: Sequence[Mapping[str, Any]] | None = None
    ) -> list[Document]:
        """Alarms matching every ``{"field", "op", "value"}`` of ``query``."""
        self.sim.enter(scope, SERVICE, "list_alarms")
        conditions = []
        for item in query or []:
            op = item.get("op") or "eq"
            if op not in _COMPARE:
                raise BadRequest(f"Invalid input for field/attribute op. Value: '{op}'.")
            field = "alarm_id" if item["field"] == "id" else str(item["field"])
            conditions.append((field, _COMPARE[op], str(item.get("value", ""))))
        with self.store.lock:
            alarms = [w["alarm"] for w in self.store.list(KIND)]
        found = []
        for alarm in alarms:
            if not (scope.is_admin or alarm["project_id"] == scope.project_id):
                continue
            if all(compare(*_comparable(alarm.get(f), v)) for f, compare, v in conditions):
                found.append(alarm)
        return found

    def update_alarm(self, scope: CloudScope, alarm_id: str, body: Mapping[str, Any]) -> Document:
        """A whole-document PUT (aodhclient merges and sends everything)."""
        self.sim.enter(scope, SERVICE, "update_alarm", alarm_id)
        fields = checked_alarm(body)
        with self.store.lock:
            wrapper = self._wrapper(scope, alarm_id)
            alarm = wrapper["alarm"]
            self._check_name(alarm["project_id"], fields["name"], alarm_id)
            new_state = fields.pop("state", alarm["state"])
            reason = fields.pop("state_reason", "Manually set via API")
            for key in [k for k in alarm if k.endswith("_rule")]:
                del alarm[key]
            alarm.update(fields)
            alarm["timestamp"] = self.cloud.timestamp()
            self._record(wrapper, scope, "rule change", fields)
            deliveries = self._transition(wrapper, scope, new_state, reason, {})
            self.store.put(KIND, wrapper)
        self._send(deliveries)
        return alarm  # type: ignore[no-any-return]

    def delete_alarm(self, scope: CloudScope, alarm_id: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_alarm", alarm_id)
        with self.store.lock:
            self._wrapper(scope, alarm_id)
            self.store.delete(KIND, alarm_id)

    # -- state ----------------------------------------------------------------------------
    def get_state(self, scope: CloudScope, alarm_id: str) -> str:
        self.sim.enter(scope, SERVICE, "get_alarm_state", alarm_id)
        with self.store.lock:
            return str(self._wrapper(scope, alarm_id)["alarm"]["state"])

    def set_state(self, scope: CloudScope, alarm_id: str, state: Any) -> str:
        """``PUT .../state``: the new state, notifying the matching actions."""
        self.sim.enter(scope, SERVICE, "set_alarm_state", alarm_id)
        if state not in ALARM_STATES:
            raise BadRequest(f"state invalid: {state!r} is not one of {', '.join(ALARM_STATES)}")
        with self.store.lock:
            wrapper = self._wrapper(scope, alarm_id)
            deliveries = self._transition(wrapper, scope, state, "Manually set via API", {})
            self.store.put(KIND, wrapper)
        self._send(deliveries)
        return str(state)

    def fire(self, alarm_id: str, state: str = "alarm") -> Document:
        """The control endpoint's trigger: as if the evaluator moved the alarm to ``state``."""
        self.sim.enter(None, SERVICE, "fire_alarm", alarm_id)
        if state not in ALARM_STATES:
            raise BadRequest(f"state invalid: {state!r}")
        with self.store.lock:
            wrapper = self.store.get(KIND, alarm_id)
            if wrapper is None:
                raise NotFound(f"Alarm {alarm_id} not found", service=SERVICE)
            reason = f"Transition to {state} forced by the simulator"
            data = {"type": "simulated", "state": state}
            deliveries = self._transition(wrapper, None, state, reason, data)
            self.store.put(KIND, wrapper)
        self._send(deliveries)
        return wrapper["alarm"]  # type: ignore[no-any-return]

    def history(self, scope: CloudScope, alarm_id: str) -> list[Document]:
        """The alarm's changes, newest first."""
        self.sim.enter(scope, SERVICE, "get_alarm_history", alarm_id)
        with self.store.lock:
            return list(reversed(self._wrapper(scope, alarm_id)["history"]))

    # -- helpers --------------------------------------------------------------------------
    def _wrapper(self, scope: CloudScope, alarm_id: str) -> Document:
        wrapper = self.store.get(KIND, alarm_id)
        if wrapper is None or not (
            scope.is_admin or wrapper["alarm"]["project_id"] == scope.project_id
        ):
            raise NotFound(f"Alarm {alarm_id} not found", service=SERVICE)
        return wrapper

    @staticmethod
    def _owner(scope: CloudScope, body: Mapping[str, Any]) -> str:
        project = body.get("project_id") or scope.project_id
        if project != scope.project_id and not scope.is_admin:
            raise Forbidden("Not Authorized to access project " + str(project))
        return str(project)

    def _check_name(self, project: str, name: str, alarm_id: str | None) -> None:
        for wrapper in self.store.list(KIND):
            alarm = wrapper["alarm"]
            if (
                alarm["project_id"] == project
                and alarm["name"] == name
                and alarm["alarm_id"] != alarm_id
            ):
                raise Conflict(f"Alarm with name='{name}' exists", service=SERVICE)

    def _record(
        self, wrapper: Document, scope: CloudScope | None, kind: str, detail: Mapping[str, Any]
    ) -> None:
        alarm = wrapper["alarm"]
        wrapper["history"].append(
            {
                "event_id": self.cloud.new_id(),
                "alarm_id": alarm["alarm_id"],
                "type": kind,
                "detail": json.dumps(detail),
                "timestamp": self.cloud.timestamp(),
                "on_behalf_of": alarm["project_id"],
                "project_id": scope.project_id if scope else None,
                "user_id": scope.user_id if scope else None,
                "severity": alarm["severity"],
            }
        )

    def _transition(
        self,
        wrapper: Document,
        scope: CloudScope | None,
        state: str,
        reason: str,
        reason_data: Mapping[str, Any],
    ) -> list[Delivery]:
        """Set the state (recording a real change); the notifications it calls for."""
        alarm = wrapper["alarm"]
        previous = alarm["state"]
        if state != previous:
            alarm.update(state=state, state_reason=reason, state_timestamp=self.cloud.timestamp())
            self._record(wrapper, scope, "state transition", {"state": state})
        elif not alarm["repeat_actions"]:
            return []
        if not alarm["enabled"]:
            return []
        body = {
            "alarm_id": alarm["alarm_id"],
            "alarm_name": alarm["name"],
            "severity": alarm["severity"],
            "previous": previous,
            "current": state,
            "reason": reason,
            "reason_data": dict(reason_data),
        }
        deliveries: list[Delivery] = []
        for url in alarm[ACTION_LISTS[state]]:
            target = notification_target(url, wrapper.get("trust_id"))
            if target is None:
                log.info("alarm %s notification to %s: %s", alarm["alarm_id"], url, body)
                self.recorded.append((url, dict(body)))
                continue
            headers = {"Content-Type": "application/json"}
            if target.authenticated and target.trust_id:
                token = self.token_for_trust(target.trust_id)
                if token:
                    headers["X-Auth-Token"] = token
            deliveries.append((target.url, dict(body), headers))
        return deliveries

    def _send(self, deliveries: list[Delivery]) -> None:
        for url, body, headers in deliveries:
            try:
                self.deliver(url, body, headers)
            except Exception as exc:  # a failed delivery is logged, never retried
                log.warning("alarm notification to %s failed: %s", url, exc)
