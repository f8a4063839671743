"""OS::Neutron::SecurityGroup: a security group whose ``rules`` are kept as a set.

Neutron gives a new group two egress rules (all traffic, IPv4 and IPv6). The template's
``rules`` are the wanted set: when they name any egress rule, the two defaults are
removed; otherwise the defaults belong to the set. Create makes the group then adds the
rules in one bulk request; update reconciles the live rules with the wanted set (stale
ones deleted, missing ones added; rules compared by direction, ethertype, protocol,
ports and remote). ``remote_mode: remote_group_id`` without a group means the group
itself. ``stateful`` needs the ``stateful-security-group`` extension (``false`` fails
without it; ``true`` is then simply not sent) and cannot change while ports use the
group. Delete removes the rules, then the group (404 ignored; 409 while in use
propagates for the engine to retry). Reference resource-types.md section 2,
OS::Neutron::SecurityGroup.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import NeutronResource, custom, name_schema
from kiln.resources.neutron._rules import (
    DIRECTIONS,
    ETHERTYPES,
    PROTOCOL,
    body_key,
    default_egress_bodies,
    live_key,
    port_order_error,
    port_schema,
    rule_body,
)
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import PropertySchema, PropertyType

_STRING, _BOOLEAN, _LIST = PropertyType.STRING, PropertyType.BOOLEAN, PropertyType.LIST
STATEFUL_EXTENSION = "stateful-security-group"
REMOTE_GROUP = "remote_group_id"

RULE_SCHEMA: Mapping[str, PropertySchema] = {
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
        "Protocol the rule matches (name or number; default any).",
        constraints=(PROTOCOL,),
    ),
    "remote_mode": PropertySchema(
        _STRING,
        "Whether the remote is an address prefix or a group.",
        default="remote_ip_prefix",
        constraints=(AllowedValues(("remote_ip_prefix", "remote_group_id")),),
    ),
    "remote_group_id": PropertySchema(
        _STRING,
        "The remote group (name or id; default: this group).",
        constraints=custom("neutron.security_group"),
    ),
    "remote_ip_prefix": PropertySchema(
        _STRING, "The remote address prefix (CIDR).", constraints=custom("net_cidr")
    ),
    "description": PropertySchema(_STRING, "A description of the rule."),
}


@resource_type("OS::Neutron::SecurityGroup")
class SecurityGroup(NeutronResource):
    """A security group; ``get_resource`` gives its id."""

    entity = "security_group"
    collection = "security-groups"
    plural = "security_groups"
    polls_status = False
    body_keys = {"description": "description"}

    properties_schema = {
        "name": name_schema("security group"),
        "description": PropertySchema(
            _STRING, "A description of the security group.", update_allowed=True
        ),
        "rules": PropertySchema(
            _LIST, "The rules of the group.", default=[], update_allowed=True, schema=RULE_SCHEMA
        ),
        "stateful": PropertySchema(
            _BOOLEAN, "Whether the group tracks connections.", update_allowed=True
        ),
    }
    attributes_schema = {}

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)
        if properties.get("name") == "default":
            errors.append(
                StackValidationFailed(
                    'Security groups cannot be assigned the name "default".', path=("name",)
                )
            )
        for i, rule in enumerate(properties.get("rules") or []):
            message = port_order_error(rule)
            if message:
                errors.append(StackValidationFailed(message, path=("rules", i)))
        return errors

    # -- rules ------------------------------------------------------------------------------
    def rule_bodies(self, group_id: str, rules: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Create bodies of the template's rules, remote groups resolved."""
        bodies = []
        for rule in rules:
            remote_group = None
            if rule["remote_mode"] == REMOTE_GROUP:
                given = rule.get("remote_group_id")
                remote_group = (
                    self.network.find_security_group(given, project_id=self.ctx.project_id).id
                    if given
                    else group_id
                )
            bodies.append(
                rule_body(
                    group_id,
                    direction=rule["direction"],
                    ethertype=rule["ethertype"],
                    protocol=rule.get("protocol"),
                    port_range_min=rule.get("port_range_min"),
                    port_range_max=rule.get("port_range_max"),
                    remote_group_id=remote_group,
                    remote_ip_prefix=None if remote_group else rule.get("remote_ip_prefix"),
                    description=rule.get("description"),
                )
            )
        return bodies

    def wanted_rules(self, group_id: str, rules: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The template's rules, plus the default egress ones when it names no egress rule."""
        bodies = self.rule_bodies(group_id, rules)
        if not any(b["direction"] == "egress" for b in bodies):
            bodies += default_egress_bodies(group_id)
        return bodies

    def reconcile_rules(self, group_id: str, rules: list[Mapping[str, Any]]) -> None:
        """Delete live rules not wanted, then add the wanted ones that are missing."""
        wanted = {body_key(b): b for b in self.wanted_rules(group_id, rules)}
        live = self.network.get_security_group(group_id).rules
        for rule in live:
            if live_key(rule) not in wanted:
                self._delete_rule(rule.id)
        present = {live_key(rule) for rule in live}
        missing = [b for key, b in wanted.items() if key not in present]
        if missing:
            self.network.create_security_group_rules(missing)

    def _delete_rule(self, rule_id: str) -> None:
        try:
            self.network.delete_security_group_rule(rule_id)
        except NotFound:
            pass

    # -- actions ----------------------------------------------------------------------------
    def handle_create(self) -> Cookie:
        self.check_valid()
        body = self.base_body()
        stateful = self.properties.get("stateful")
        if stateful is not None:
            if self.network.has_extension(STATEFUL_EXTENSION):
                body["stateful"] = stateful
            elif not stateful:
                raise ResourceFailure(
                    f"stateful: false needs the {STATEFUL_EXTENSION} extension of Neutron"
                )
        created = self.network.create_security_group(body)
        self.ctx.set_physical_id(created.id)
        self.apply_tags(created.id, [])
        self.reconcile_rules(created.id, self.properties["rules"] or [])
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        group_id = self.ctx.physical_id or ""
        body = self.base_update_body(changed)
        if "description" in changed and changed["description"] is None:
            body["description"] = ""
        if "stateful" in changed and changed["stateful"] is not None:
            in_use = [p for p in self.network.list_ports() if group_id in p.security_group_ids]
            if in_use:
                raise ResourceFailure(
                    "Updating stateful of a security group that ports use is not supported"
                )
            body["stateful"] = changed["stateful"]
        if body:
            self.network.update_security_group(group_id, body)
        if "rules" in changed:
            self.reconcile_rules(group_id, changed["rules"] or [])
        return None

    def handle_delete(self) -> Cookie:
        if not self.ctx.physical_id:
            return None
        try:
            group = self.live()
        except NotFound:
            return None
        for rule in group.rules:
            self._delete_rule(rule.id)
        try:
            self.network.delete_security_group(group.id)
        except NotFound:
            pass
        return None

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return True
