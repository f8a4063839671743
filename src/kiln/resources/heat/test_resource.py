"""OS::Heat::TestResource: a resource that waits, fails or asks to be replaced on demand.

Used to test the engine. Every knob updates in place except
``update_replace_value``. An action "waits" by returning a cookie with a
deadline computed from ``ctx.now()``; each ``check_*_complete`` poll before the
deadline returns False (the engine waits between polls, the plugin never
sleeps). A negative wait never ends. Two of Heat's knobs sleep inside Heat and
cannot here:

* ``attr_wait_secs``: attribute ``output`` is returned at once. An attribute is
  resolved synchronously by the engine, so a wait there would block a worker.
* ``constraint_prop_secs``: the ``test_constr`` custom constraint (registered
  by :func:`register_constraints` at the composition root) passes at once, for
  the same reason: validation runs synchronously.

Imports: kiln.plugin, kiln.schema, kiln.core.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kiln.plugin import Resource, ResourceFailure, UpdateReplace, resource_type
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import CustomConstraint
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_NUMBER, _STRING, _BOOLEAN = PropertyType.NUMBER, PropertyType.STRING, PropertyType.BOOLEAN


def _wait(action: str) -> PropertySchema:
    return PropertySchema(
        _NUMBER, f"Seconds {action} waits (overrides wait_secs; -1: forever).", update_allowed=True
    )


def wait_seconds(properties: Mapping[str, Any], action: str) -> float:
    """``action_wait_secs.<action>`` when set, else ``wait_secs``; negative = forever."""
    per_action = properties.get("action_wait_secs") or {}
    seconds = per_action.get(action)
    return float(properties["wait_secs"] if seconds is None else seconds)


def check_test_constr(value: Any) -> str | None:
    """The ``test_constr`` checker: Heat sleeps ``value`` seconds, then passes; we just pass."""
    return None


def register_constraints(custom: CustomConstraints) -> None:
    """Add the custom constraints this module's type uses (called by the composition root)."""
    custom.register("test_constr", check_test_constr)


@resource_type("OS::Heat::TestResource")
class TestResource(Resource):
    """Stores ``value``; waits, fails or asks for replacement as its properties say."""

    properties_schema = {
        "constraint_prop_secs": PropertySchema(
            _NUMBER,
            "Seconds the validation of this property takes in Heat (passes at once here).",
            default=0,
            update_allowed=True,
            constraints=(CustomConstraint(name="test_constr"),),
        ),
        "attr_wait_secs": PropertySchema(
            _NUMBER,
            "Seconds resolving attribute output takes in Heat (returned at once here).",
            default=0,
            update_allowed=True,
        ),
        "value": PropertySchema(
            _STRING,
            "The string to store; attribute output gives it back.",
            default="test_string",
            update_allowed=True,
        ),
        "update_replace_value": PropertySchema(
            _STRING, "Any change of this value replaces the resource."
        ),
        "fail": PropertySchema(
            _BOOLEAN,
            "Fail create and update once their wait is over (delete never fails).",
            default=False,
            update_allowed=True,
        ),
        "update_replace": PropertySchema(
            _BOOLEAN,
            "Replace the resource, instead of updating it, when value changes.",
            default=False,
            update_allowed=True,
        ),
        "wait_secs": PropertySchema(
            _NUMBER,
            "Seconds each action waits before completing (-1: forever).",
            default=0,
            update_allowed=True,
        ),
        "action_wait_secs": PropertySchema(
            PropertyType.MAP,
            "Seconds to wait per action, overriding wait_secs.",
            update_allowed=True,
            schema={
                "create": _wait("create"),
                "update": _wait("update"),
                "delete": _wait("delete"),
            },
        ),
        "client_name": PropertySchema(
            _STRING,
            "Client to poll while waiting (with entity_name), to simulate cloud traffic.",
            default="",
            update_allowed=True,
        ),
        "entity_name": PropertySchema(
            _STRING,
            "Entity of client_name whose get() is called on each poll while waiting.",
            default="",
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "output": AttributeSchema(
            "The stored value (returned at once: attr_wait_secs is not slept).",
            type=PropertyType.STRING,
        ),
    }

    def get_attribute(self, name: str) -> Any:
        if name == "output":
            return self.ctx.data_get("value")
        return super().get_attribute(name)

    # -- waiting ------------------------------------------------------------------------
    def _wait_cookie(self, seconds: float, fail: bool, properties: Mapping[str, Any]) -> Cookie:
        until = None if seconds < 0 else (self.ctx.now() + timedelta(seconds=seconds)).isoformat()
        return {
            "until": until,
            "fail": fail,
            "client_name": properties["client_name"],
            "entity_name": properties["entity_name"],
        }

    def _poll(self, cookie: Cookie) -> bool:
        until = cookie["until"]
        if until is not None and self.ctx.now() >= datetime.fromisoformat(until):
            if cookie["fail"]:
                raise ResourceFailure(f"Test Resource failed {self.ctx.name}")
            return True
        self._simulated_traffic(cookie["client_name"], cookie["entity_name"])
        return False

    def poll_after(self, cookie: Cookie) -> float | None:
        # Poll right when the wait ends, not on the engine's backoff schedule.
        if not isinstance(cookie, dict) or cookie.get("until") is None:
            return None
        if cookie.get("client_name") and cookie.get("entity_name"):
            return 1.0  # simulated traffic: one call a second, as Heat does
        remaining = datetime.fromisoformat(cookie["until"]) - self.ctx.now()
        return max(0.0, remaining.total_seconds())

    def _simulated_traffic(self, client_name: str, entity_name: str) -> None:
        if not (client_name and entity_name):
            return
        entity_id = self.ctx.data_get("value") or self.ctx.physical_id
        try:
            getattr(self.ctx.client(client_name), entity_name).get(entity_id)
        except Exception:  # any failure is part of the simulation, not of the action
            pass

    # -- actions --------------------------------------------------------------------------
    def handle_create(self) -> Cookie:
        props = self.properties
        if not props["fail"]:
            self.ctx.data_set("value", props["value"])
            self.ctx.set_physical_id(self.ctx.physical_resource_name())
        return self._wait_cookie(wait_seconds(props, "create"), props["fail"], props)

    def check_create_complete(self, cookie: Cookie) -> bool:
        return self._poll(cookie)

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        fail = new_properties["fail"]
        if "value" not in changed:
            return self._wait_cookie(0, fail, new_properties)
        if new_properties["update_replace"]:
            raise UpdateReplace(f"{self.ctx.name}: value changed with update_replace set")
        if not fail:
            self.ctx.data_set("value", new_properties["value"])
        return self._wait_cookie(wait_seconds(new_properties, "update"), fail, new_properties)

    def check_update_complete(self, cookie: Cookie) -> bool:
        return self._poll(cookie)

    def handle_delete(self) -> Cookie:
        props = self.properties
        return self._wait_cookie(wait_seconds(props, "delete"), False, props)

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return self._poll(cookie)

    def handle_check(self) -> Cookie:
        if not self.ctx.physical_id:
            raise ResourceFailure(f"Test Resource {self.ctx.name} has no physical resource id")
        return None
