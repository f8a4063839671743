"""OS::Neutron::Port: a port on a network.

Create rules (reference resource-types.md section 2, OS::Neutron::Port):
``network`` (hidden alias ``network_id``) is resolved to an id; ``fixed_ips`` items lose
their null keys and their ``subnet`` (hidden alias ``subnet_id``) becomes a resolved
``subnet_id``; an empty ``fixed_ips`` is left out (Neutron allocates an address) while
``no_fixed_ips: true`` sends ``[]`` (no address); ``security_groups`` left out means the
project's ``default`` group, ``[]`` means none, names are resolved within the project;
``allowed_address_pairs`` lose a null ``mac_address``; ``qos_policy`` is sent as
``qos_policy_id`` (an id).

Update: every updatable key in place; ``security_groups`` removed means back to
``default``; ``fixed_ips: []`` leaves the addresses alone; ``value_specs``'
``binding:profile`` is merged three ways with the live profile (keys someone else set
stay). ``network`` and ``mac_address`` replace; the hidden ``replacement_policy:
REPLACE_ALWAYS`` replaces on every update. :meth:`Port.prepare_for_replace` frees the
addresses for the replacement; :meth:`Port.restore_prev_rsrc` takes them back.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.core.errors import KilnError, StackValidationFailed
from kiln.plugin import resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.neutron._common import (
    NeutronResource,
    custom,
    drop_none,
    hidden,
    name_schema,
    tags_schema,
    value_specs_schema,
)
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType, SupportStatus

_STRING, _BOOLEAN, _LIST, _MAP = (
    PropertyType.STRING,
    PropertyType.BOOLEAN,
    PropertyType.LIST,
    PropertyType.MAP,
)

VNIC_TYPES = (
    "normal",
    "direct",
    "macvtap",
    "direct-physical",
    "baremetal",
    "virtio-forwarder",
    "smart-nic",
)
#: data key of the addresses taken from the port before its replacement is created
REPLACED_FIXED_IPS = "port_fip"
PROFILE = "binding:profile"


def _up(kind: PropertyType, description: str, **kw: Any) -> PropertySchema:
    return PropertySchema(kind, description, update_allowed=True, **kw)


#: the "extra properties" OS::Nova::Server's networks[].port_extra_properties reuses
EXTRA_PROPERTIES_SCHEMA: Mapping[str, PropertySchema] = {
    "value_specs": value_specs_schema(),
    "admin_state_up": _up(_BOOLEAN, "The administrative state of the port.", default=True),
    "mac_address": PropertySchema(
        _STRING,
        "The MAC address of the port (replaces on change).",
        constraints=custom("mac_addr"),
    ),
    "allowed_address_pairs": _up(
        _LIST,
        "Further addresses (and MACs) the port may send from.",
        schema={
            "mac_address": PropertySchema(
                _STRING, "A MAC address (default: the port's).", constraints=custom("mac_addr")
            ),
            "ip_address": PropertySchema(
                _STRING,
                "An IP address or CIDR.",
                required=True,
                constraints=custom("ip_or_cidr"),
            ),
        },
    ),
    "binding:vnic_type": _up(
        _STRING,
        "The VNIC type of the port.",
        default="normal",
        constraints=(AllowedValues(VNIC_TYPES),),
    ),
    "port_security_enabled": _up(_BOOLEAN, "Whether port security applies to the port."),
    "qos_policy": _up(
        _STRING, "The QoS policy id of the port.", constraints=custom("neutron.qos_policy")
    ),
    "propagate_uplink_status": _up(_BOOLEAN, "Whether the uplink status propagates to the port."),
    "no_fixed_ips": _up(_BOOLEAN, "Give the port no IP address at all.", default=False),
}


@resource_type("OS::Neutron::Port")
class Port(NeutronResource):
    """A port; ``get_resource`` gives its id."""

    entity = "port"
    collection = "ports"
    plural = "ports"
    property_aliases = {"network_id": "network"}
    item_aliases = {"fixed_ips": {"subnet_id": "subnet"}}
    body_keys = {
        "admin_state_up": "admin_state_up",
        "mac_address": "mac_address",
        "device_id": "device_id",
        "device_owner": "device_owner",
        "dns_name": "dns_name",
        "binding:vnic_type": "binding:vnic_type",
        "port_security_enabled": "port_security_enabled",
        "qos_policy": "qos_policy_id",
        "propagate_uplink_status": "propagate_uplink_status",
    }

    properties_schema = {
        "name": name_schema("port"),
        "network_id": PropertySchema(
            _STRING,
            "The network of the port (use network).",
            constraints=custom("neutron.network"),
            support_status=hidden("network"),
        ),
        "network": PropertySchema(
            _STRING,
            "The network (name or id) of the port.",
            required=True,
            constraints=custom("neutron.network"),
        ),
        "device_id": _up(_STRING, "The device (server) using the port.", default=""),
        "device_owner": _up(_STRING, "The kind of device using the port.", default=""),
        "fixed_ips": _up(
            _LIST,
            "The port's addresses, by subnet and/or address.",
            schema={
                "subnet_id": PropertySchema(
                    _STRING,
                    "The subnet of the address (use subnet).",
                    constraints=custom("neutron.subnet"),
                    support_status=hidden("subnet"),
                ),
                "subnet": PropertySchema(
                    _STRING,
                    "The subnet (name or id) of the address.",
                    constraints=custom("neutron.subnet"),
                ),
                "ip_address": PropertySchema(
                    _STRING, "The address.", constraints=custom("ip_addr")
                ),
            },
        ),
        "security_groups": _up(_LIST, "Security groups (names or ids) of the port; [] for none."),
        "replacement_policy": _up(
            _STRING,
            "REPLACE_ALWAYS replaces the port on every update.",
            default="AUTO",
            constraints=(AllowedValues(("REPLACE_ALWAYS", "AUTO")),),
            support_status=SupportStatus("HIDDEN", message="Not needed any more."),
        ),
        "dns_name": _up(_STRING, "The DNS name of the port.", constraints=custom("dns_name")),
        "tags": tags_schema("port"),
        **EXTRA_PROPERTIES_SCHEMA,
    }
    attributes_schema = {
        "admin_state_up": AttributeSchema("The administrative state.", type=_BOOLEAN),
        "device_id": AttributeSchema("The device using the port.", type=_STRING),
        "device_owner": AttributeSchema("The kind of device using the port.", type=_STRING),
        "fixed_ips": AttributeSchema("The addresses ([{subnet_id, ip_address}]).", type=_LIST),
        "mac_address": AttributeSchema("The MAC address.", type=_STRING),
        "name": AttributeSchema("The name of the port.", type=_STRING),
        "network_id": AttributeSchema("The network of the port.", type=_STRING),
        "security_groups": AttributeSchema("The security group ids.", type=_LIST),
        "status": AttributeSchema("The status of the port.", type=_STRING),
        "tenant_id": AttributeSchema("The project owning the port.", type=_STRING),
        "allowed_address_pairs": AttributeSchema("Further allowed addresses.", type=_LIST),
        "subnets": AttributeSchema("The subnets of the port's addresses, in full.", type=_LIST),
        "port_security_enabled": AttributeSchema("Whether port security applies.", type=_BOOLEAN),
        "qos_policy_id": AttributeSchema("The QoS policy id.", type=_STRING),
        "dns_assignment": AttributeSchema("The DNS names assigned to the port.", type=_LIST),
        "network": AttributeSchema("The port's network, in full.", type=_MAP),
        "propagate_uplink_status": AttributeSchema(
            "Whether the uplink status propagates.", type=_BOOLEAN
        ),
    }

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        errors = super().validate(properties)
        if properties.get("no_fixed_ips") and properties.get("fixed_ips"):
            errors.append(
                StackValidationFailed(
                    "Cannot define the following properties at the same time: "
                    "fixed_ips, no_fixed_ips"
                )
            )
        return errors

    def needs_replace(self, new_properties: Mapping[str, Any]) -> bool:
        return new_properties.get("replacement_policy") == "REPLACE_ALWAYS"

    # -- request bodies ---------------------------------------------------------------------
    def fixed_ips_body(self, items: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for item in items:
            subnet = item.get("subnet") or item.get("subnet_id")
            entry = {"ip_address": item.get("ip_address")}
            if subnet:
                entry["subnet_id"] = self.network.find_subnet(subnet).id
            out.append(drop_none(entry))
        return out

    def security_group_ids(self, groups: list[str]) -> list[str]:
        project = self.ctx.project_id
        return [self.network.find_security_group(g, project_id=project).id for g in groups]

    @staticmethod
    def address_pairs_body(pairs: list[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        return [drop_none(pair) for pair in pairs or []]

    def handle_create(self) -> Cookie:
        self.check_valid()
        props = self.properties
        body = self.base_body()
        body["network_id"] = self.network.find_network(self.prop("network")).id
        if props.get("no_fixed_ips"):
            body["fixed_ips"] = []
        elif props.get("fixed_ips"):
            body["fixed_ips"] = self.fixed_ips_body(props["fixed_ips"])
        if props.get("security_groups") is not None:
            body["security_groups"] = self.security_group_ids(props["security_groups"])
        if props.get("allowed_address_pairs") is not None:
            body["allowed_address_pairs"] = self.address_pairs_body(props["allowed_address_pairs"])
        created = self.network.create_port(body)
        self.ctx.set_physical_id(created.id)
        self.apply_tags(created.id, props.get("tags"))
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        port_id = self.ctx.physical_id or ""
        body = self.base_update_body(changed)
        if "qos_policy" in changed:
            body["qos_policy_id"] = changed["qos_policy"]  # None clears the policy
        if new_properties.get("no_fixed_ips"):
            if "no_fixed_ips" in changed:
                body["fixed_ips"] = []
        elif changed.get("fixed_ips"):  # an empty list leaves the addresses alone
            body["fixed_ips"] = self.fixed_ips_body(changed["fixed_ips"])
        if "security_groups" in changed:
            groups = changed["security_groups"]
            body["security_groups"] = self.security_group_ids(
                ["default"] if groups is None else groups
            )
        if "allowed_address_pairs" in changed:
            body["allowed_address_pairs"] = self.address_pairs_body(
                changed["allowed_address_pairs"]
            )
        if PROFILE in (new_properties.get("value_specs") or {}) and "value_specs" in changed:
            body[PROFILE] = self.merged_profile(new_properties["value_specs"][PROFILE])
        if body:
            self.network.update_port(port_id, body)
        if "tags" in changed:
            self.apply_tags(port_id, changed["tags"])
        return None

    def merged_profile(self, new: Mapping[str, Any] | None) -> dict[str, Any]:
        """The live profile minus keys the template dropped, plus the template's keys."""
        old = (self.properties.get("value_specs") or {}).get(PROFILE) or {}
        live = self.live().raw.get(PROFILE) or {}
        merged = {k: v for k, v in live.items() if k not in old}
        merged.update(new or {})
        return merged

    # -- replacement --------------------------------------------------------------------------
    def prepare_for_replace(self) -> Cookie:
        """Record the addresses, so that the check frees them for the replacement port.

        Recorded once: a repeated prepare (a resumed step, a second replacement of a
        port whose addresses are already freed) keeps what the port first had.
        """
        if not self.ctx.physical_id:
            return None
        if self.ctx.data_get(REPLACED_FIXED_IPS) is None:
            try:
                port = self.live()
            except NotFound:
                return None
            self.ctx.data_set(REPLACED_FIXED_IPS, _address_list(port.fixed_ips))
        return {"port": self.ctx.physical_id}

    def check_prepare_for_replace_complete(self, cookie: Cookie) -> bool:
        if cookie is not None and self.ctx.data_get(REPLACED_FIXED_IPS):
            try:
                self.network.update_port(cookie["port"], {"fixed_ips": []})
            except NotFound:
                pass  # gone: nothing holds the addresses
        return True

    def restore_prev_rsrc(self, replacement_id: str | None) -> Cookie:
        """Going back to this port: the replacement lets go of the addresses, this port
        takes them again (reference: rollback restores them)."""
        fixed_ips = self.ctx.data_get(REPLACED_FIXED_IPS)
        if not self.ctx.physical_id or fixed_ips is None:
            return None
        if replacement_id and replacement_id != self.ctx.physical_id:
            try:
                self.network.update_port(replacement_id, {"fixed_ips": []})
            except NotFound:
                pass
        if fixed_ips:
            self.network.update_port(self.ctx.physical_id, {"fixed_ips": fixed_ips})
        self.ctx.data_delete(REPLACED_FIXED_IPS)
        return None

    # -- attributes ---------------------------------------------------------------------------
    def get_attribute(self, name: str) -> Any:
        if name not in ("subnets", "network") or not self.ctx.physical_id:
            return super().get_attribute(name)
        try:
            port = self.live()
            if name == "network":
                return self.network.get_network(port.network_id).show()
            subnet_ids = dict.fromkeys(ip["subnet_id"] for ip in port.fixed_ips)
            return [self.network.get_subnet(s).show() for s in subnet_ids]
        except NotFound:
            return None


def _address_list(fixed_ips: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A port's addresses as a port update takes them back."""
    return [
        {"subnet_id": ip.get("subnet_id"), "ip_address": ip.get("ip_address")} for ip in fixed_ips
    ]
