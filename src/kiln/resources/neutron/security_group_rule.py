"""OS::Neutron::SecurityGroupRule: one rule added to an existing security group.

``security_group`` and ``remote_group`` may be names or ids (resolved within the
project). At most one of ``remote_group`` and ``remote_ip_prefix``; for non-ICMP
protocols the port range must not be reversed. Nothing updates in place. A duplicate
rule is a 409 from Neutron and fails the create. Rules have no tags or names, so a create
repeated after a crash finds its rule by its identity in the group. Delete ignores 404.
Reference resource-types.md section 2, OS::Neutron::SecurityGroupRule.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import NeutronResource, custom
from kiln.resources.neutron._rules import (
    DIRECTIONS,
    ETHERTYPES,
    PROTOCOL,
    body_key,
    live_key,
    port_order_error,
    port_schema,
    rule_body,
)
from kiln.schema.properties import PropertySchema, PropertyType

_STRING = PropertyType.STRING


@resource_type("OS::Neutron::SecurityGroupRule")
class SecurityGroupRule(NeutronResource):
    """A security group rule; ``get_resource`` gives its id."""

    entity = "security_group_rule"
    plural = "security_group_rules"
    has_name = False
    polls_status = False

    properties_schema = {
        "security_group": PropertySchema(
            _STRING,
            "The security group (name or id) the rule belongs to.",
            required=True,
            constraints=custom("neutron.security_group"),
        ),
        "description": PropertySchema(_STRING, "A description of the rule."),
        "direction": PropertySchema(
            _STRING,
            "Traffic direction the rule matches.",
            default="ingress",
            constraints=(DIRECTIONS,),
        ),
        "ethertype": PropertySchema(
            _STRING, "IP version the rule matches.", default="IPv4", constraints=(ETHERTYPES,)
        ),
        "port_range_min": port_schema("Lowest port (ICMP: the type) the rule matches."),
        "port_range_max": port_schema("Highest port (ICMP: the code) the rule matches."),
        "protocol": PropertySchema(
            _STRING,
            "Protocol the rule matches (name or number).",
            default="tcp",
            constraints=(PROTOCOL,),
        ),
        "remote_group": PropertySchema(
            _STRING,
            "The remote security group (name or id).",
            constraints=custom("neutron.security_group"),
        ),
        "remote_ip_prefix": PropertySchema(
            _STRING, "The remote address prefix (CIDR).", constraints=custom("net_cidr")
        ),
    }
    attributes_schema = {}

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)
        if properties.get("remote_group") and properties.get("remote_ip_prefix"):
            errors.append(
                StackValidationFailed(
                    "Cannot define the following properties at the same time: "
                    "remote_group, remote_ip_prefix"
                )
            )
        message = port_order_error(properties)
        if message:
            errors.append(StackValidationFailed(message, path=("port_range_max",)))
        return errors

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        project = self.ctx.project_id
        group = self.network.find_security_group(props["security_group"], project_id=project)
        remote = props.get("remote_group")
        return rule_body(
            group.id,
            direction=props["direction"],
            ethertype=props["ethertype"],
            protocol=props.get("protocol"),
            port_range_min=props.get("port_range_min"),
            port_range_max=props.get("port_range_max"),
            remote_group_id=(
                self.network.find_security_group(remote, project_id=project).id if remote else None
            ),
            remote_ip_prefix=props.get("remote_ip_prefix"),
            description=props.get("description"),
        )

    def handle_create(self) -> Cookie:
        self.check_valid()
        created = self.network.create_security_group_rule(self.create_body())
        self.ctx.set_physical_id(created.id)
        return None

    def find_existing(self) -> str | None:
        """The group's rule with the same identity, when the create already happened."""
        try:
            body = self.create_body()
        except NotFound:
            return None
        wanted = body_key(body)
        for rule in self.network.list_security_group_rules(
            security_group_id=body["security_group_id"]
        ):
            if live_key(rule) == wanted:
                return rule.id
        return None

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return True  # a rule is gone once its DELETE returns
