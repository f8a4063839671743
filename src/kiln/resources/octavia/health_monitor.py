"""OS::Octavia::HealthMonitor: how a pool checks that its members are alive.

A pool has at most one monitor. Created, updated and deleted from the poll (see
kiln.resources.octavia._base). ``pool``, ``type`` and ``tenant_id`` replace it; the
timing, retries and HTTP check details update in place. The pool may be given by name or
id. Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.load_balancer import OctaviaRecord
from kiln.plugin import resource_type
from kiln.resources.octavia._base import OctaviaResource, admin_state_up, without_none
from kiln.schema.constraints import AllowedValues, CustomConstraint, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _INTEGER = PropertyType.STRING, PropertyType.INTEGER
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH")
MONITOR_TYPES = ("PING", "TCP", "HTTP", "HTTPS", "UDP-CONNECT")


@resource_type("OS::Octavia::HealthMonitor")
class HealthMonitor(OctaviaResource):
    """An Octavia health monitor; ``get_resource`` gives its id."""

    properties_schema = {
        "admin_state_up": admin_state_up(),
        "delay": PropertySchema(
            _INTEGER,
            "Seconds between two checks of a member.",
            required=True,
            update_allowed=True,
            constraints=(Range(min=0),),
        ),
        "expected_codes": PropertySchema(
            _STRING,
            "HTTP status codes of a healthy member: 200, 200,202 or 200-204.",
            update_allowed=True,
        ),
        "http_method": PropertySchema(
            _STRING,
            "HTTP method of the check.",
            update_allowed=True,
            constraints=(AllowedValues(HTTP_METHODS),),
        ),
        "max_retries": PropertySchema(
            _INTEGER,
            "Failed checks before a member is marked down.",
            required=True,
            update_allowed=True,
            constraints=(Range(1, 10),),
        ),
        "pool": PropertySchema(
            _STRING,
            "Name or id of the pool to monitor.",
            required=True,
            constraints=(CustomConstraint(name="octavia.pool"),),
        ),
        "timeout": PropertySchema(
            _INTEGER,
            "Seconds a check waits for an answer.",
            required=True,
            update_allowed=True,
            constraints=(Range(min=0),),
        ),
        "type": PropertySchema(
            _STRING,
            "How members are checked.",
            required=True,
            constraints=(AllowedValues(MONITOR_TYPES),),
        ),
        "url_path": PropertySchema(
            _STRING, "Path of the HTTP request of the check.", update_allowed=True
        ),
        "tenant_id": PropertySchema(_STRING, "Project owning the monitor (admin only)."),
    }
    attributes_schema = {
        "pools": AttributeSchema(
            "The pools the monitor checks, as [{id}].", type=PropertyType.LIST
        ),
    }

    def fetch(self, object_id: str) -> OctaviaRecord:
        return self.octavia.get_health_monitor(object_id)

    def send_create(self, body: Mapping[str, Any]) -> OctaviaRecord:
        return self.octavia.create_health_monitor(body)

    def send_update(self, object_id: str, body: Mapping[str, Any]) -> None:
        self.octavia.update_health_monitor(object_id, body)

    def send_delete(self, object_id: str) -> None:
        self.octavia.delete_health_monitor(object_id)

    def candidates(self) -> Sequence[OctaviaRecord]:
        # A pool has one monitor at most: the pool says which.
        monitor_id = self.octavia.find_pool(self.properties["pool"]).healthmonitor_id
        return [self.octavia.get_health_monitor(monitor_id)] if monitor_id else []

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        return without_none(
            {
                "pool_id": self.octavia.find_pool(props["pool"]).id,
                "type": props["type"],
                "delay": props["delay"],
                "timeout": props["timeout"],
                "max_retries": props["max_retries"],
                "admin_state_up": props["admin_state_up"],
                "http_method": props["http_method"],
                "url_path": props["url_path"],
                "expected_codes": props["expected_codes"],
                "tenant_id": props["tenant_id"],
                "tags": [self.kiln_tag()],
            }
        )
