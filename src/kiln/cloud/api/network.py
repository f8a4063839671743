"""The network (Neutron v2.0) client interface the resource plugins use, and its value types.

:class:`NetworkApi` names every Neutron call of the ``OS::Neutron::*`` plugins (and the
lookups of ``OS::Nova::Server``'s networks and the ``neutron.*`` custom constraints).
Bodies are the inside of the REST envelope in Neutron's field names
(``create_port(body)`` with ``body`` = the inside of ``{"port": {...}}``); records show
the object as ``GET /v2.0/{plural}/{id}`` returns it. ``find_*`` follows openstacksdk:
by id, then by name (0 matches: NotFound, more than one: MultipleMatches); extra
keyword filters narrow the name lookup (``find_security_group("default",
project_id=p)``). Tag calls name the REST collection (``networks``, ``subnets``,
``subnetpools``, ``ports``, ``routers``, ``floatingips``, ``security-groups``).
Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kiln.cloud.api.records import Record

#: REST collections that carry tags (``PUT /v2.0/{collection}/{id}/tags``)
TAGGED_COLLECTIONS = (
    "networks",
    "subnets",
    "subnetpools",
    "ports",
    "routers",
    "floatingips",
    "security-groups",
)


class _NeutronRecord(Record):
    """Fields every Neutron object has."""

    @property
    def project_id(self) -> str | None:
        return self.raw.get("project_id") or self.raw.get("tenant_id")

    @property
    def description(self) -> str | None:
        return self.raw.get("description")

    @property
    def tags(self) -> list[str]:
        return list(self.raw.get("tags") or [])

    @property
    def revision_number(self) -> int | None:
        return self.raw.get("revision_number")


class Network(_NeutronRecord):
    """A Neutron network (``GET /v2.0/networks/{id}``)."""

    @property
    def subnet_ids(self) -> list[str]:
        return list(self.raw.get("subnets") or [])

    @property
    def admin_state_up(self) -> bool:
        return bool(self.raw.get("admin_state_up", True))

    @property
    def shared(self) -> bool:
        return bool(self.raw.get("shared"))

    @property
    def is_external(self) -> bool:
        return bool(self.raw.get("router:external"))

    @property
    def port_security_enabled(self) -> bool:
        return bool(self.raw.get("port_security_enabled", True))

    @property
    def mtu(self) -> int | None:
        return self.raw.get("mtu")

    @property
    def qos_policy_id(self) -> str | None:
        return self.raw.get("qos_policy_id")


class Subnet(_NeutronRecord):
    """A Neutron subnet (``GET /v2.0/subnets/{id}``)."""

    @property
    def network_id(self) -> str:
        return str(self.raw["network_id"])

    @property
    def cidr(self) -> str | None:
        return self.raw.get("cidr")

    @property
    def ip_version(self) -> int:
        return int(self.raw.get("ip_version") or 4)

    @property
    def gateway_ip(self) -> str | None:
        return self.raw.get("gateway_ip")

    @property
    def enable_dhcp(self) -> bool:
        return bool(self.raw.get("enable_dhcp", True))

    @property
    def allocation_pools(self) -> list[dict[str, str]]:
        return [dict(p) for p in self.raw.get("allocation_pools") or []]

    @property
    def host_routes(self) -> list[dict[str, str]]:
        return [dict(r) for r in self.raw.get("host_routes") or []]

    @property
    def dns_nameservers(self) -> list[str]:
        return list(self.raw.get("dns_nameservers") or [])

    @property
    def segment_id(self) -> str | None:
        return self.raw.get("segment_id")

    @property
    def subnetpool_id(self) -> str | None:
        return self.raw.get("subnetpool_id")


class SubnetPool(_NeutronRecord):
    """A Neutron subnet pool (``GET /v2.0/subnetpools/{id}``)."""

    @property
    def prefixes(self) -> list[str]:
        return list(self.raw.get("prefixes") or [])

    @property
    def ip_version(self) -> int:
        return int(self.raw.get("ip_version") or 4)

    @property
    def default_prefixlen(self) -> int | None:
        value = self.raw.get("default_prefixlen")
        return None if value is None else int(value)

    @property
    def min_prefixlen(self) -> int | None:
        value = self.raw.get("min_prefixlen")
        return None if value is None else int(value)

    @property
    def max_prefixlen(self) -> int | None:
        value = self.raw.get("max_prefixlen")
        return None if value is None else int(value)

    @property
    def shared(self) -> bool:
        return bool(self.raw.get("shared"))

    @property
    def is_default(self) -> bool:
        return bool(self.raw.get("is_default"))

    @property
    def default_quota(self) -> int | None:
        return self.raw.get("default_quota")

    @property
    def address_scope_id(self) -> str | None:
        return self.raw.get("address_scope_id")


class Port(_NeutronRecord):
    """A Neutron port (``GET /v2.0/ports/{id}``)."""

    @property
    def network_id(self) -> str:
        return str(self.raw["network_id"])

    @property
    def mac_address(self) -> str | None:
        return self.raw.get("mac_address")

    @property
    def fixed_ips(self) -> list[dict[str, str]]:
        """``[{"subnet_id", "ip_address"}]``."""
        return [dict(ip) for ip in self.raw.get("fixed_ips") or []]

    @property
    def device_id(self) -> str:
        return str(self.raw.get("device_id") or "")

    @property
    def device_owner(self) -> str:
        return str(self.raw.get("device_owner") or "")

    @property
    def security_group_ids(self) -> list[str]:
        return list(self.raw.get("security_groups") or [])

    @property
    def admin_state_up(self) -> bool:
        return bool(self.raw.get("admin_state_up", True))

    @property
    def port_security_enabled(self) -> bool:
        return bool(self.raw.get("port_security_enabled", True))

    @property
    def allowed_address_pairs(self) -> list[dict[str, str]]:
        return [dict(p) for p in self.raw.get("allowed_address_pairs") or []]

    @property
    def host_id(self) -> str | None:
        return self.raw.get("binding:host_id")

    @property
    def vif_type(self) -> str | None:
        return self.raw.get("binding:vif_type")


class Router(_NeutronRecord):
    """A Neutron router (``GET /v2.0/routers/{id}``)."""

    @property
    def external_gateway_info(self) -> dict[str, Any] | None:
        info = self.raw.get("external_gateway_info")
        return dict(info) if isinstance(info, Mapping) else None

    @property
    def admin_state_up(self) -> bool:
        return bool(self.raw.get("admin_state_up", True))

    @property
    def routes(self) -> list[dict[str, str]]:
        return [dict(r) for r in self.raw.get("routes") or []]


class FloatingIp(_NeutronRecord):
    """A Neutron floating IP (``GET /v2.0/floatingips/{id}``)."""

    @property
    def name(self) -> str | None:
        return self.raw.get("floating_ip_address")

    @property
    def floating_ip_address(self) -> str | None:
        return self.raw.get("floating_ip_address")

    @property
    def floating_network_id(self) -> str:
        return str(self.raw["floating_network_id"])

    @property
    def port_id(self) -> str | None:
        return self.raw.get("port_id")

    @property
    def fixed_ip_address(self) -> str | None:
        return self.raw.get("fixed_ip_address")

    @property
    def router_id(self) -> str | None:
        return self.raw.get("router_id")


class SecurityGroupRule(_NeutronRecord):
    """A Neutron security group rule (``GET /v2.0/security-group-rules/{id}``)."""

    @property
    def security_group_id(self) -> str:
        return str(self.raw["security_group_id"])

    @property
    def direction(self) -> str:
        return str(self.raw.get("direction") or "ingress")

    @property
    def ethertype(self) -> str:
        return str(self.raw.get("ethertype") or "IPv4")

    @property
    def protocol(self) -> str | None:
        return self.raw.get("protocol")

    @property
    def port_range_min(self) -> int | None:
        return self.raw.get("port_range_min")

    @property
    def port_range_max(self) -> int | None:
        return self.raw.get("port_range_max")

    @property
    def remote_ip_prefix(self) -> str | None:
        return self.raw.get("remote_ip_prefix")

    @property
    def remote_group_id(self) -> str | None:
        return self.raw.get("remote_group_id")


class SecurityGroup(_NeutronRecord):
    """A Neutron security group with its rules (``GET /v2.0/security-groups/{id}``)."""

    @property
    def stateful(self) -> bool:
        return bool(self.raw.get("stateful", True))

    @property
    def rules(self) -> list[SecurityGroupRule]:
        return [SecurityGroupRule(r) for r in self.raw.get("security_group_rules") or []]


class NetworkApi(Protocol):
    """Neutron v2.0 as the ``OS::Neutron::*`` plugins use it."""

    # -- extensions ------------------------------------------------------------------------
    def list_extensions(self) -> list[dict[str, Any]]:
        """``GET /v2.0/extensions``: ``[{"alias", "name", "description", ...}]``."""
        ...

    def has_extension(self, alias: str) -> bool:
        """Whether the cloud lists the extension ``alias`` (``router``, ``security-group``)."""
        ...

    # -- networks --------------------------------------------------------------------------
    def create_network(self, body: Mapping[str, Any]) -> Network:
        """``POST /v2.0/networks``."""
        ...

    def get_network(self, network_id: str) -> Network:
        """``GET /v2.0/networks/{id}``; NotFound when absent."""
        ...

    def find_network(self, name_or_id: str, **filters: Any) -> Network:
        """By id, then by name; NotFound / MultipleMatches."""
        ...

    def list_networks(self, **filters: Any) -> list[Network]:
        """``GET /v2.0/networks`` with equality filters."""
        ...

    def update_network(self, network_id: str, body: Mapping[str, Any]) -> Network:
        """``PUT /v2.0/networks/{id}``."""
        ...

    def delete_network(self, network_id: str) -> None:
        """``DELETE /v2.0/networks/{id}``; Conflict while ports remain."""
        ...

    def list_segments(self, **filters: Any) -> list[Record]:
        """``GET /v2.0/segments`` (e.g. ``network_id=``)."""
        ...

    # -- subnets ---------------------------------------------------------------------------
    def create_subnet(self, body: Mapping[str, Any]) -> Subnet:
        """``POST /v2.0/subnets``."""
        ...

    def get_subnet(self, subnet_id: str) -> Subnet:
        """``GET /v2.0/subnets/{id}``; NotFound when absent."""
        ...

    def find_subnet(self, name_or_id: str, **filters: Any) -> Subnet:
        """By id, then by name; NotFound / MultipleMatches."""
        ...

    def list_subnets(self, **filters: Any) -> list[Subnet]:
        """``GET /v2.0/subnets`` with equality filters."""
        ...

    def update_subnet(self, subnet_id: str, body: Mapping[str, Any]) -> Subnet:
        """``PUT /v2.0/subnets/{id}``."""
        ...

    def delete_subnet(self, subnet_id: str) -> None:
        """``DELETE /v2.0/subnets/{id}``; Conflict while ports hold addresses on it."""
        ...

    # -- subnet pools ----------------------------------------------------------------------
    def create_subnetpool(self, body: Mapping[str, Any]) -> SubnetPool:
        """``POST /v2.0/subnetpools`` (``prefixes`` required; ``shared``/``is_default`` admin)."""
        ...

    def get_subnetpool(self, subnetpool_id: str) -> SubnetPool:
        """``GET /v2.0/subnetpools/{id}``; NotFound when absent."""
        ...

    def find_subnetpool(self, name_or_id: str, **filters: Any) -> SubnetPool:
        """By id, then by name; NotFound / MultipleMatches."""
        ...

    def list_subnetpools(self, **filters: Any) -> list[SubnetPool]:
        """``GET /v2.0/subnetpools`` with equality filters (``is_default=``, ``shared=``)."""
        ...

    def update_subnetpool(self, subnetpool_id: str, body: Mapping[str, Any]) -> SubnetPool:
        """``PUT /v2.0/subnetpools/{id}`` (prefixes may only grow)."""
        ...

    def delete_subnetpool(self, subnetpool_id: str) -> None:
        """``DELETE /v2.0/subnetpools/{id}``; BadRequest while subnets were taken from it."""
        ...

    # -- ports -----------------------------------------------------------------------------
    def create_port(self, body: Mapping[str, Any]) -> Port:
        """``POST /v2.0/ports``."""
        ...

    def get_port(self, port_id: str) -> Port:
        """``GET /v2.0/ports/{id}``; NotFound when absent."""
        ...

    def find_port(self, name_or_id: str, **filters: Any) -> Port:
        """By id, then by name; NotFound / MultipleMatches."""
        ...

    def list_ports(self, **filters: Any) -> list[Port]:
        """``GET /v2.0/ports`` with equality filters (``device_id=``, ``network_id=``)."""
        ...

    def update_port(self, port_id: str, body: Mapping[str, Any]) -> Port:
        """``PUT /v2.0/ports/{id}``."""
        ...

    def delete_port(self, port_id: str) -> None:
        """``DELETE /v2.0/ports/{id}``; Conflict for router-owned ports."""
        ...

    # -- routers ---------------------------------------------------------------------------
    def create_router(self, body: Mapping[str, Any]) -> Router:
        """``POST /v2.0/routers``."""
        ...

    def get_router(self, router_id: str) -> Router:
        """``GET /v2.0/routers/{id}``; NotFound when absent."""
        ...

    def find_router(self, name_or_id: str, **filters: Any) -> Router:
        """By id, then by name; NotFound / MultipleMatches."""
        ...

    def list_routers(self, **filters: Any) -> list[Router]:
        """``GET /v2.0/routers`` with equality filters."""
        ...

    def update_router(self, router_id: str, body: Mapping[str, Any]) -> Router:
        """``PUT /v2.0/routers/{id}`` (``external_gateway_info: None`` removes the gateway)."""
        ...

    def delete_router(self, router_id: str) -> None:
        """``DELETE /v2.0/routers/{id}``; Conflict while interfaces remain."""
        ...

    def add_router_interface(
        self, router_id: str, *, subnet_id: str | None = None, port_id: str | None = None
    ) -> dict[str, Any]:
        """``PUT .../add_router_interface``: ``{"id", "port_id", "subnet_id", ...}``."""
        ...

    def remove_router_interface(
        self, router_id: str, *, subnet_id: str | None = None, port_id: str | None = None
    ) -> dict[str, Any]:
        """``PUT .../remove_router_interface``; NotFound when not attached."""
        ...

    # -- floating IPs ----------------------------------------------------------------------
    def create_floating_ip(self, body: Mapping[str, Any]) -> FloatingIp:
        """``POST /v2.0/floatingips``."""
        ...

    def get_floating_ip(self, floating_ip_id: str) -> FloatingIp:
        """``GET /v2.0/floatingips/{id}``; NotFound when absent."""
        ...

    def list_floating_ips(self, **filters: Any) -> list[FloatingIp]:
        """``GET /v2.0/floatingips`` (``port_id=``, ``floating_ip_address=``, ...)."""
        ...

    def update_floating_ip(self, floating_ip_id: str, body: Mapping[str, Any]) -> FloatingIp:
        """``PUT /v2.0/floatingips/{id}`` (``port_id: None`` disassociates)."""
        ...

    def delete_floating_ip(self, floating_ip_id: str) -> None:
        """``DELETE /v2.0/floatingips/{id}``."""
        ...

    # -- security groups -------------------------------------------------------------------
    def create_security_group(self, body: Mapping[str, Any]) -> SecurityGroup:
        """``POST /v2.0/security-groups`` (two egress rules are added)."""
        ...

    def get_security_group(self, security_group_id: str) -> SecurityGroup:
        """``GET /v2.0/security-groups/{id}``; NotFound when absent."""
        ...

    def find_security_group(self, name_or_id: str, **filters: Any) -> SecurityGroup:
        """By id, then by name (``project_id=`` narrows); NotFound / MultipleMatches."""
        ...

    def list_security_groups(self, **filters: Any) -> list[SecurityGroup]:
        """``GET /v2.0/security-groups`` with equality filters."""
        ...

    def update_security_group(
        self, security_group_id: str, body: Mapping[str, Any]
    ) -> SecurityGroup:
        """``PUT /v2.0/security-groups/{id}`` (name, description, stateful)."""
        ...

    def delete_security_group(self, security_group_id: str) -> None:
        """``DELETE /v2.0/security-groups/{id}``; Conflict while ports use it."""
        ...

    def create_security_group_rule(self, body: Mapping[str, Any]) -> SecurityGroupRule:
        """``POST /v2.0/security-group-rules``; Conflict for a duplicate."""
        ...

    def create_security_group_rules(
        self, bodies: Sequence[Mapping[str, Any]]
    ) -> list[SecurityGroupRule]:
        """Bulk ``POST /v2.0/security-group-rules`` (all or nothing)."""
        ...

    def get_security_group_rule(self, rule_id: str) -> SecurityGroupRule:
        """``GET /v2.0/security-group-rules/{id}``; NotFound when absent."""
        ...

    def list_security_group_rules(self, **filters: Any) -> list[SecurityGroupRule]:
        """``GET /v2.0/security-group-rules`` with equality filters."""
        ...

    def delete_security_group_rule(self, rule_id: str) -> None:
        """``DELETE /v2.0/security-group-rules/{id}``."""
        ...

    # -- tags ------------------------------------------------------------------------------
    def set_tags(self, collection: str, object_id: str, tags: Sequence[str]) -> list[str]:
        """``PUT /v2.0/{collection}/{id}/tags`` (replaces all); the tags now set."""
        ...


# CONTRACT READY
