"""Aodh's input rules for an alarm document: its type's rule, actions, time constraints.

A table per alarm type says which rule keys are required and what the others default
to; :func:`checked_alarm` turns a request body into the stored fields or raises 400
(reference simulated-cloud-api.md section 8).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from kiln.cloud.api.alarming import ALARM_STATES, ALARM_TYPES, rule_key
from kiln.cloud.api.errors import BadRequest

OPERATORS = ("lt", "le", "eq", "ne", "ge", "gt")
STATISTICS = ("max", "min", "avg", "sum", "count")
SEVERITIES = ("low", "moderate", "critical")
QUERY_TYPES = ("", "integer", "float", "string", "boolean", "datetime")
ACTION_SCHEMES = (
    "http",
    "https",
    "trust+http",
    "trust+https",
    "log",
    "test",
    "zaqar",
    "trust+zaqar",
)
ACTION_LISTS = {
    "alarm": "alarm_actions",
    "ok": "ok_actions",
    "insufficient data": "insufficient_data_actions",
}

_THRESHOLD = {"comparison_operator": "eq", "evaluation_periods": 1}
_GNOCCHI = {**_THRESHOLD, "aggregation_method": "mean", "granularity": 60}
#: per alarm type: the rule keys that must be given, and defaults for the others
RULES: Mapping[str, tuple[tuple[str, ...], Mapping[str, Any]]] = {
    "threshold": (
        ("meter_name", "threshold"),
        {**_THRESHOLD, "statistic": "avg", "period": 60, "query": [], "exclude_outliers": False},
    ),
    "gnocchi_resources_threshold": (
        ("metric", "resource_id", "resource_type", "threshold"),
        _GNOCCHI,
    ),
    "gnocchi_aggregation_by_metrics_threshold": (("metrics", "threshold"), _GNOCCHI),
    "gnocchi_aggregation_by_resources_threshold": (
        ("metric", "resource_type", "query", "threshold"),
        _GNOCCHI,
    ),
    "event": ((), {"event_type": "*", "query": []}),
    "composite": ((), {}),
    "loadbalancer_member_health": (
        ("pool_id", "stack_id", "autoscaling_group_id"),
        {},
    ),
}

#: fields a client may send (the rest of a shown alarm is the server's and is ignored)
_INPUT = frozenset(
    {
        "name",
        "description",
        "type",
        "enabled",
        "state",
        "state_reason",
        "severity",
        "repeat_actions",
        "time_constraints",
        "project_id",
        "user_id",
        "evaluation_periods",
        *ACTION_LISTS.values(),
        *(rule_key(t) for t in ALARM_TYPES),
    }
)
_SERVER_FIELDS = frozenset({"alarm_id", "timestamp", "state_timestamp"})


def invalid(field: str, value: Any, why: str = "") -> BadRequest:
    return BadRequest(f"Invalid input for field/attribute {field}. Value: '{value}'. {why}".strip())


def _choice(value: Any, field: str, allowed: tuple[str, ...]) -> Any:
    if value not in allowed:
        raise invalid(field, value, f"Value should be one of: {', '.join(allowed)}")
    return value


def _boolean(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise invalid(field, value, "Wrong type. Expected 'bool'")


def _query(value: Any, field: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise invalid(field, value, "Wrong type. Expected a list")
    out = []
    for item in value:
        if not isinstance(item, Mapping) or "field" not in item or "value" not in item:
            raise invalid(field, item, "A query needs a field and a value")
        op = _choice(item.get("op") or "eq", f"{field}.op", OPERATORS)
        kind = _choice(item.get("type") or "", f"{field}.type", QUERY_TYPES)
        out.append({"field": item["field"], "op": op, "value": item["value"], "type": kind})
    return out


def checked_rule(alarm_type: str, rule: Any) -> dict[str, Any]:
    """The rule of ``alarm_type`` with its defaults, or 400."""
    if not isinstance(rule, Mapping):
        raise BadRequest(f"{rule_key(alarm_type)} must be set for {alarm_type} type alarm")
    needed, defaults = RULES[alarm_type]
    for key in needed:
        if rule.get(key) is None:
            raise invalid(f"{rule_key(alarm_type)}.{key}", None, "Mandatory field missing.")
    out = {**defaults, **rule}
    if "comparison_operator" in out:
        _choice(out["comparison_operator"], "comparison_operator", OPERATORS)
    if alarm_type == "threshold":
        _choice(out["statistic"], "statistic", STATISTICS)
        out["exclude_outliers"] = _boolean(out["exclude_outliers"], "exclude_outliers")
    if "threshold" in out and (
        isinstance(out["threshold"], bool) or not isinstance(out["threshold"], int | float)
    ):
        raise invalid("threshold", out["threshold"], "Wrong type. Expected 'float'")
    for key in ("period", "evaluation_periods", "granularity"):
        value = out.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise invalid(key, value, "Value should be a positive integer")
    if "query" in out and isinstance(out["query"], list):
        out["query"] = _query(out["query"], "query")
    if alarm_type == "composite" and not ({"and", "or"} & set(out)):
        raise BadRequest("composite_rule must combine rules with 'and' or 'or'")
    return out


def _actions(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(field, value, "Wrong type. Expected a list of URLs")
    for url in value:
        if urlsplit(url).scheme not in ACTION_SCHEMES:
            raise BadRequest(f"Unsupported action {url}")
    return list(dict.fromkeys(value))


def _time_constraints(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid("time_constraints", value, "Wrong type. Expected a list")
    out: list[dict[str, Any]] = []
    for item in value:
        if not isinstance(item, Mapping):
            raise invalid("time_constraints", item)
        for key in ("name", "start", "duration"):
            if item.get(key) is None:
                raise invalid(f"time_constraints.{key}", None, "Mandatory field missing.")
        if len(str(item["start"]).split()) not in (5, 6):
            raise invalid("time_constraints.start", item["start"], "Not a cron expression")
        duration = item["duration"]
        if isinstance(duration, bool) or not isinstance(duration, int) or duration < 0:
            raise invalid("time_constraints.duration", duration, "Should be >= 0")
        out.append(
            {
                "name": item["name"],
                "start": item["start"],
                "duration": duration,
                "timezone": item.get("timezone") or "",
                "description": item.get("description") or "",
            }
        )
    names = [c["name"] for c in out]
    if len(set(names)) != len(names):
        raise BadRequest("Time constraint names must be unique for a given alarm.")
    return out


def checked_alarm(body: Any) -> dict[str, Any]:
    """The stored fields of an alarm body (create, or a whole-document PUT), or 400."""
    if not isinstance(body, Mapping):
        raise BadRequest("Malformed alarm: expected a JSON object.")
    unknown = set(body) - _INPUT - _SERVER_FIELDS
    if unknown:
        key = sorted(unknown)[0]
        raise invalid(key, body[key], "Unknown attribute.")
    if not body.get("name"):
        raise invalid("name", body.get("name"), "Mandatory field missing.")
    alarm_type = _choice(body.get("type"), "type", ALARM_TYPES)
    for other in ALARM_TYPES:
        if other != alarm_type and body.get(rule_key(other)) is not None:
            raise BadRequest(f"{rule_key(other)} cannot be set for {alarm_type} type alarm")
    fields: dict[str, Any] = {
        "name": str(body["name"]),
        "description": body.get("description") or "",
        "type": alarm_type,
        rule_key(alarm_type): checked_rule(alarm_type, body.get(rule_key(alarm_type))),
        "enabled": _boolean(body.get("enabled", True), "enabled"),
        "severity": _choice(body.get("severity") or "low", "severity", SEVERITIES),
        "repeat_actions": _boolean(body.get("repeat_actions", False), "repeat_actions"),
        "time_constraints": _time_constraints(body.get("time_constraints")),
        **{name: _actions(body.get(name), name) for name in ACTION_LISTS.values()},
    }
    if body.get("state") is not None:
        fields["state"] = _choice(body["state"], "state", ALARM_STATES)
    if body.get("state_reason") is not None:
        fields["state_reason"] = str(body["state_reason"])
    return fields
