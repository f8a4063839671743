"""OS::Octavia::Pool: the members a listener (or a load balancer) sends traffic to.

Created, updated and deleted from the poll (see kiln.resources.octavia._base). A pool
belongs to a listener, a load balancer, or both (at least one); ``listener``,
``loadbalancer`` and ``protocol`` replace it, the rest updates in place with the changed
values that are set. Session persistence by application cookie needs ``cookie_name``;
by source IP it must not have one. Imports: kiln.plugin, kiln.schema, kiln.core,
kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.load_balancer import OctaviaRecord
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import resource_type
from kiln.resources.octavia._base import (
    PROTOCOLS,
    OctaviaResource,
    admin_state_up,
    description,
    object_name,
    without_none,
)
from kiln.schema.constraints import AllowedValues, CustomConstraint
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

_STRING, _BOOLEAN, _LIST = PropertyType.STRING, PropertyType.BOOLEAN, PropertyType.LIST
APP_COOKIE, SOURCE_IP = "APP_COOKIE", "SOURCE_IP"


def session_persistence_errors(persistence: Mapping[str, Any] | None) -> list[KilnError]:
    """``cookie_name`` is required with APP_COOKIE and forbidden with SOURCE_IP."""
    if not persistence:
        return []
    kind, cookie = persistence.get("type"), persistence.get("cookie_name")
    path = ("session_persistence", "cookie_name")
    if kind == APP_COOKIE and not cookie:
        message = f"Property cookie_name is required when session_persistence type is {kind}."
        return [StackValidationFailed(message, path=path)]
    if kind == SOURCE_IP and cookie:
        message = f"Property cookie_name must not be given when session_persistence type is {kind}."
        return [StackValidationFailed(message, path=path)]
    return []


@resource_type("OS::Octavia::Pool")
class Pool(OctaviaResource):
    """An Octavia pool; ``get_resource`` gives its id."""

    properties_schema = {
        "admin_state_up": admin_state_up(),
        "description": description(),
        "session_persistence": PropertySchema(
            PropertyType.MAP,
            "How requests of one client stick to one member.",
            update_allowed=True,
            schema={
                "type": PropertySchema(
                    _STRING,
                    "The kind of session persistence.",
                    required=True,
                    constraints=(AllowedValues((SOURCE_IP, "HTTP_COOKIE", APP_COOKIE)),),
                ),
                "cookie_name": PropertySchema(
                    _STRING, "Name of the application cookie (APP_COOKIE only)."
                ),
            },
        ),
        "name": object_name(),
        "lb_algorithm": PropertySchema(
            _STRING,
            "How members are chosen.",
            required=True,
            update_allowed=True,
            constraints=(
                AllowedValues(("ROUND_ROBIN", "LEAST_CONNECTIONS", SOURCE_IP, "SOURCE_IP_PORT")),
            ),
        ),
        "listener": PropertySchema(
            _STRING,
            "Name or id of the listener whose default pool this is.",
            constraints=(CustomConstraint(name="octavia.listener"),),
        ),
        "loadbalancer": PropertySchema(
            _STRING,
            "Name or id of the load balancer of the pool.",
            constraints=(CustomConstraint(name="octavia.loadbalancer"),),
        ),
        "protocol": PropertySchema(
            _STRING, "Protocol of the members.", required=True, constraints=(PROTOCOLS,)
        ),
        "tls_enabled": PropertySchema(
            _BOOLEAN,
            "Whether traffic to the members is TLS encrypted.",
            default=False,
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "healthmonitor_id": AttributeSchema("The id of the pool's health monitor.", type=_STRING),
        "listeners": AttributeSchema("The listeners of the pool, as [{id}].", type=_LIST),
        "members": AttributeSchema("The members of the pool, as [{id}].", type=_LIST),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors: list[KilnError] = []
        if not properties.get("listener") and not properties.get("loadbalancer"):
            errors.append(
                StackValidationFailed(
                    "At least one of the following properties must be specified: "
                    "listener, loadbalancer."
                )
            )
        errors.extend(session_persistence_errors(properties.get("session_persistence")))
        return errors

    def fetch(self, object_id: str) -> OctaviaRecord:
        return self.octavia.get_pool(object_id)

    def send_create(self, body: Mapping[str, Any]) -> OctaviaRecord:
        return self.octavia.create_pool(body)

    def send_update(self, object_id: str, body: Mapping[str, Any]) -> None:
        self.octavia.update_pool(object_id, body)

    def send_delete(self, object_id: str) -> None:
        self.octavia.delete_pool(object_id)

    def candidates(self) -> Sequence[OctaviaRecord]:
        return self.octavia.list_pools(name=self.name_value(self.properties))

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        listener, loadbalancer = props["listener"], props["loadbalancer"]
        persistence = props["session_persistence"]
        return without_none(
            {
                "lb_algorithm": props["lb_algorithm"],
                "protocol": props["protocol"],
                "listener_id": self.octavia.find_listener(listener).id if listener else None,
                "loadbalancer_id": (
                    self.octavia.find_load_balancer(loadbalancer).id if loadbalancer else None
                ),
                "name": self.name_value(props),
                "description": props["description"],
                "admin_state_up": props["admin_state_up"],
                "session_persistence": without_none(persistence) if persistence else None,
                "tls_enabled": props["tls_enabled"],
                "tags": [self.kiln_tag()],
            }
        )

    def update_body(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> dict[str, Any]:
        # Heat sends only the changed values that are set.
        body = without_none(changed)
        if "name" in changed:
            body["name"] = self.name_value(new_properties)
        if isinstance(body.get("session_persistence"), Mapping):
            body["session_persistence"] = without_none(body["session_persistence"])
        return body
