"""OS::Aodh::Alarm: Aodh's (deprecated) threshold alarm on a Ceilometer meter.

The alarm document is built by kiln.resources.aodh.alarm_body; its name is always the
physical resource name. Create is one POST (nothing to wait for). Every property updates
in place except ``meter_name`` and ``time_constraints``: the whole document is rebuilt from
the new properties and sent as an update (the client reads the alarm, merges the rule key
by key and PUTs the whole alarm). Suspend and resume disable and enable the alarm; check
reads it. ``get_resource`` gives the alarm id. An action item naming a resource of the
stack reaches the plugin already resolved to that resource's ``AlarmUrl``: the template
layer turns it into a ``get_attr`` (kiln.template.named_resources), since a plugin cannot
read another resource's attributes. Kiln's global environment maps
``OS::Ceilometer::Alarm`` and ``OS::Metering::Alarm`` to this type.
Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.alarming import AlarmingApi
from kiln.cloud.api.errors import NotFound
from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.aodh.alarm_body import alarm_body
from kiln.schema.constraints import AllowedValues, CustomConstraint, Range
from kiln.schema.properties import PropertySchema, PropertyType

_STRING, _INTEGER, _NUMBER = PropertyType.STRING, PropertyType.INTEGER, PropertyType.NUMBER
_BOOLEAN, _LIST, _MAP = PropertyType.BOOLEAN, PropertyType.LIST, PropertyType.MAP
_OPERATORS = AllowedValues(("le", "ge", "eq", "lt", "gt", "ne"))


def _updatable(kind: PropertyType, description: str, **kw: Any) -> PropertySchema:
    return PropertySchema(kind, description, update_allowed=True, **kw)


def _queues(state: str) -> PropertySchema:
    return _updatable(
        _LIST,
        f"Zaqar queues notified when the alarm goes to state {state}.",
        default=[],
        schema=PropertySchema(
            _STRING, "A Zaqar queue name.", constraints=(CustomConstraint(name="zaqar.queue"),)
        ),
    )


_QUERY_ITEM = {
    "field": PropertySchema(_STRING, "Name of the field to filter on."),
    "type": PropertySchema(
        _STRING,
        "Type of the value.",
        default="string",
        constraints=(AllowedValues(("integer", "float", "string", "boolean", "datetime")),),
    ),
    "op": PropertySchema(_STRING, "Comparison operator.", constraints=(_OPERATORS,)),
    "value": PropertySchema(_STRING, "Value to compare with."),
}
_TIME_CONSTRAINT = {
    "name": PropertySchema(_STRING, "Name of the time constraint.", required=True),
    "start": PropertySchema(
        _STRING,
        "Cron expression of when the constraint starts.",
        required=True,
        constraints=(CustomConstraint(name="cron_expression"),),
    ),
    "description": PropertySchema(_STRING, "Description of the time constraint."),
    "duration": PropertySchema(
        _INTEGER,
        "Seconds the constraint lasts from each start.",
        required=True,
        constraints=(Range(min=0),),
    ),
    "timezone": PropertySchema(
        _STRING,
        "Time zone of the start (default: UTC).",
        constraints=(CustomConstraint(name="timezone"),),
    ),
}


@resource_type("OS::Aodh::Alarm")
class Alarm(Resource):
    """An Aodh threshold alarm; ``get_resource`` gives its id."""

    properties_schema = {
        "comparison_operator": _updatable(
            _STRING, "How the statistic is compared with the threshold.", constraints=(_OPERATORS,)
        ),
        "evaluation_periods": _updatable(_INTEGER, "Periods to evaluate over."),
        "meter_name": PropertySchema(_STRING, "Meter the alarm watches.", required=True),
        "period": _updatable(_INTEGER, "Seconds of one evaluation period."),
        "statistic": _updatable(
            _STRING,
            "Statistic of the meter compared with the threshold.",
            constraints=(AllowedValues(("count", "avg", "sum", "min", "max")),),
        ),
        "threshold": _updatable(
            _NUMBER, "Threshold the statistic is compared with.", required=True
        ),
        "matching_metadata": _updatable(
            _MAP,
            "Resource metadata the samples must match (turned into query equalities).",
            default={},
        ),
        "query": _updatable(
            _LIST, "Filters of the samples the statistic is computed on.", schema=_QUERY_ITEM
        ),
        "description": _updatable(_STRING, "Description of the alarm."),
        "enabled": _updatable(_BOOLEAN, "Whether the alarm is evaluated.", default="true"),
        "alarm_actions": _updatable(
            _LIST, "URLs (or resource names) to call when the alarm goes to state alarm."
        ),
        "ok_actions": _updatable(
            _LIST, "URLs (or resource names) to call when the alarm goes to state ok."
        ),
        "insufficient_data_actions": _updatable(
            _LIST,
            "URLs (or resource names) to call when the alarm goes to state insufficient data.",
        ),
        "alarm_queues": _queues("alarm"),
        "ok_queues": _queues("ok"),
        "insufficient_data_queues": _queues("insufficient data"),
        "repeat_actions": _updatable(
            _BOOLEAN,
            "Call the actions on every evaluation while the state lasts, not once.",
            default="true",
        ),
        "severity": _updatable(
            _STRING,
            "Severity of the alarm.",
            default="low",
            constraints=(AllowedValues(("low", "moderate", "critical")),),
        ),
        "time_constraints": PropertySchema(
            _LIST,
            "Times when the alarm is evaluated (default: always).",
            default=[],
            schema=_TIME_CONSTRAINT,
        ),
    }

    @property
    def aodh(self) -> AlarmingApi:
        client: AlarmingApi = self.ctx.client("alarming")
        return client

    def _body(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return alarm_body(properties, self.ctx.physical_resource_name())

    # -- create ------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        # Alarm names are unique per project, and ours is the physical name.
        found = self.aodh.list_alarms(name=self.ctx.physical_resource_name())
        return found[0].id if len(found) == 1 else None

    def handle_create(self) -> Cookie:
        alarm = self.aodh.create_alarm(self._body(self.properties))
        self.ctx.set_physical_id(alarm.id)
        return None

    # -- update, suspend, resume -------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if changed and self.ctx.physical_id:
            self.aodh.update_alarm(self.ctx.physical_id, self._body(new_properties))
        return None

    def _set_enabled(self, enabled: bool) -> None:
        if self.ctx.physical_id:
            self.aodh.update_alarm(self.ctx.physical_id, {"enabled": enabled})

    def handle_suspend(self) -> Cookie:
        self._set_enabled(False)
        return None

    def handle_resume(self) -> Cookie:
        self._set_enabled(True)
        return None

    # -- check, delete, attributes -------------------------------------------------------
    def handle_check(self) -> Cookie:
        # A missing alarm fails the check with the cloud's NotFound.
        if self.ctx.physical_id:
            self.aodh.get_alarm(self.ctx.physical_id)
        return None

    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id:
            try:
                self.aodh.delete_alarm(self.ctx.physical_id)
            except NotFound:
                pass  # already gone: deleted
        return None

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return self.aodh.get_alarm(self.ctx.physical_id).show()
        except NotFound:
            return None
