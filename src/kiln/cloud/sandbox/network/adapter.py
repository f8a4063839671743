"""The in-process NetworkApi: plugins call the simulated Neutron model directly.

Each call goes to :class:`~kiln.cloud.sandbox.network.model.NetworkModel` with the
adapter's scope and wraps a deep copy of the returned document in the record type, so
the caller never holds the store's live objects. ``find_*`` follows openstacksdk: by id,
then by name among the visible objects.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.network import (
    FloatingIp,
    Network,
    Port,
    Router,
    SecurityGroup,
    SecurityGroupRule,
    Subnet,
    SubnetPool,
)
from kiln.cloud.api.records import Record
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.model import NetworkModel

R = TypeVar("R", bound=Record)


class NetworkAdapter:
    """NetworkApi over the sandbox model, acting for one scope."""

    def __init__(self, model: NetworkModel, scope: CloudScope) -> None:
        self.model = model
        self.scope = scope

    # -- helpers ---------------------------------------------------------------------------
    @staticmethod
    def _wrap(record: type[R], doc: Mapping[str, Any]) -> R:
        return record(copy.deepcopy(dict(doc)))

    def _find(
        self,
        record: type[R],
        get: Callable[[CloudScope, str], Any],
        listing: Callable[..., list[Any]],
        label: str,
        name_or_id: str,
        filters: Mapping[str, Any],
    ) -> R:
        try:
            return self._wrap(record, get(self.scope, name_or_id))
        except NotFound:
            pass
        found = listing(self.scope, **{**filters, "name": name_or_id})
        if not found:
            raise NotFound(f"No {label} found for {name_or_id}", service="network")
        if len(found) > 1:
            raise MultipleMatches(
                f"More than one {label} exists with the name '{name_or_id}'.", service="network"
            )
        return self._wrap(record, found[0])

    # -- extensions ------------------------------------------------------------------------
    def list_extensions(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.model.list_extensions(self.scope))

    def has_extension(self, alias: str) -> bool:
        return any(e["alias"] == alias for e in self.model.list_extensions(self.scope))

    # -- networks --------------------------------------------------------------------------
    def create_network(self, body: Mapping[str, Any]) -> Network:
        return self._wrap(Network, self.model.create_network(self.scope, body))

    def get_network(self, network_id: str) -> Network:
        return self._wrap(Network, self.model.get_network(self.scope, network_id))

    def find_network(self, name_or_id: str, **filters: Any) -> Network:
        m = self.model
        return self._find(Network, m.get_network, m.list_networks, "network", name_or_id, filters)

    def list_networks(self, **filters: Any) -> list[Network]:
        return [self._wrap(Network, d) for d in self.model.list_networks(self.scope, **filters)]

    def update_network(self, network_id: str, body: Mapping[str, Any]) -> Network:
        return self._wrap(Network, self.model.update_network(self.scope, network_id, body))

    def delete_network(self, network_id: str) -> None:
        self.model.delete_network(self.scope, network_id)

    def list_segments(self, **filters: Any) -> list[Record]:
        return [Record(copy.deepcopy(d)) for d in self.model.list_segments(self.scope, **filters)]

    # -- subnets ---------------------------------------------------------------------------
    def create_subnet(self, body: Mapping[str, Any]) -> Subnet:
        return self._wrap(Subnet, self.model.create_subnet(self.scope, body))

    def get_subnet(self, subnet_id: str) -> Subnet:
        return self._wrap(Subnet, self.model.get_subnet(self.scope, subnet_id))

    def find_subnet(self, name_or_id: str, **filters: Any) -> Subnet:
        m = self.model
        return self._find(Subnet, m.get_subnet, m.list_subnets, "subnet", name_or_id, filters)

    def list_subnets(self, **filters: Any) -> list[Subnet]:
        return [self._wrap(Subnet, d) for d in self.model.list_subnets(self.scope, **filters)]

    def update_subnet(self, subnet_id: str, body: Mapping[str, Any]) -> Subnet:
        return self._wrap(Subnet, self.model.update_subnet(self.scope, subnet_id, body))

    def delete_subnet(self, subnet_id: str) -> None:
        self.model.delete_subnet(self.scope, subnet_id)

    # -- subnet pools ----------------------------------------------------------------------
    def create_subnetpool(self, body: Mapping[str, Any]) -> SubnetPool:
        return self._wrap(SubnetPool, self.model.create_subnetpool(self.scope, body))

    def get_subnetpool(self, subnetpool_id: str) -> SubnetPool:
        return self._wrap(SubnetPool, self.model.get_subnetpool(self.scope, subnetpool_id))

    def find_subnetpool(self, name_or_id: str, **filters: Any) -> SubnetPool:
        m = self.model
        return self._find(
            SubnetPool, m.get_subnetpool, m.list_subnetpools, "subnetpool", name_or_id, filters
        )

    def list_subnetpools(self, **filters: Any) -> list[SubnetPool]:
        docs = self.model.list_subnetpools(self.scope, **filters)
        return [self._wrap(SubnetPool, d) for d in docs]

    def update_subnetpool(self, subnetpool_id: str, body: Mapping[str, Any]) -> SubnetPool:
        doc = self.model.update_subnetpool(self.scope, subnetpool_id, body)
        return self._wrap(SubnetPool, doc)

    def delete_subnetpool(self, subnetpool_id: str) -> None:
        self.model.delete_subnetpool(self.scope, subnetpool_id)

    # -- ports -----------------------------------------------------------------------------
    def create_port(self, body: Mapping[str, Any]) -> Port:
        return self._wrap(Port, self.model.create_port(self.scope, body))

    def get_port(self, port_id: str) -> Port:
        return self._wrap(Port, self.model.get_port(self.scope, port_id))

    def find_port(self, name_or_id: str, **filters: Any) -> Port:
        m = self.model
        return self._find(Port, m.get_port, m.list_ports, "port", name_or_id, filters)

    def list_ports(self, **filters: Any) -> list[Port]:
        return [self._wrap(Port, d) for d in self.model.list_ports(self.scope, **filters)]

    def update_port(self, port_id: str, body: Mapping[str, Any]) -> Port:
        return self._wrap(Port, self.model.update_port(self.scope, port_id, body))

    def delete_port(self, port_id: str) -> None:
        self.model.delete_port(self.scope, port_id)

    # -- routers ---------------------------------------------------------------------------
    def create_router(self, body: Mapping[str, Any]) -> Router:
        return self._wrap(Router, self.model.create_router(self.scope, body))

    def get_router(self, router_id: str) -> Router:
        return self._wrap(Router, self.model.get_router(self.scope, router_id))

    def find_router(self, name_or_id: str, **filters: Any) -> Router:
        m = self.model
        return self._find(Router, m.get_router, m.list_routers, "router", name_or_id, filters)

    def list_routers(self, **filters: Any) -> list[Router]:
        return [self._wrap(Router, d) for d in self.model.list_routers(self.scope, **filters)]

    def update_router(self, router_id: str, body: Mapping[str, Any]) -> Router:
        return self._wrap(Router, self.model.update_router(self.scope, router_id, body))

    def delete_router(self, router_id: str) -> None:
        self.model.delete_router(self.scope, router_id)

    def add_router_interface(
        self, router_id: str, *, subnet_id: str | None = None, port_id: str | None = None
    ) -> dict[str, Any]:
        body = _interface_body(subnet_id, port_id)
        return copy.deepcopy(self.model.add_router_interface(self.scope, router_id, body))

    def remove_router_interface(
        self, router_id: str, *, subnet_id: str | None = None, port_id: str | None = None
    ) -> dict[str, Any]:
        body = _interface_body(subnet_id, port_id)
        return copy.deepcopy(self.model.remove_router_interface(self.scope, router_id, body))

    # -- floating IPs ----------------------------------------------------------------------
    def create_floating_ip(self, body: Mapping[str, Any]) -> FloatingIp:
        return self._wrap(FloatingIp, self.model.create_floating_ip(self.scope, body))

    def get_floating_ip(self, floating_ip_id: str) -> FloatingIp:
        return self._wrap(FloatingIp, self.model.get_floating_ip(self.scope, floating_ip_id))

    def list_floating_ips(self, **filters: Any) -> list[FloatingIp]:
        docs = self.model.list_floating_ips(self.scope, **filters)
        return [self._wrap(FloatingIp, d) for d in docs]

    def update_floating_ip(self, floating_ip_id: str, body: Mapping[str, Any]) -> FloatingIp:
        doc = self.model.update_floating_ip(self.scope, floating_ip_id, body)
        return self._wrap(FloatingIp, doc)

    def delete_floating_ip(self, floating_ip_id: str) -> None:
        self.model.delete_floating_ip(self.scope, floating_ip_id)

    # -- security groups -------------------------------------------------------------------
    def create_security_group(self, body: Mapping[str, Any]) -> SecurityGroup:
        return self._wrap(SecurityGroup, self.model.create_security_group(self.scope, body))

    def get_security_group(self, security_group_id: str) -> SecurityGroup:
        doc = self.model.get_security_group(self.scope, security_group_id)
        return self._wrap(SecurityGroup, doc)

    def find_security_group(self, name_or_id: str, **filters: Any) -> SecurityGroup:
        m = self.model
        return self._find(
            SecurityGroup,
            m.get_security_group,
            m.list_security_groups,
            "security group",
            name_or_id,
            filters,
        )

    def list_security_groups(self, **filters: Any) -> list[SecurityGroup]:
        docs = self.model.list_security_groups(self.scope, **filters)
        return [self._wrap(SecurityGroup, d) for d in docs]

    def update_security_group(
        self, security_group_id: str, body: Mapping[str, Any]
    ) -> SecurityGroup:
        doc = self.model.update_security_group(self.scope, security_group_id, body)
        return self._wrap(SecurityGroup, doc)

    def delete_security_group(self, security_group_id: str) -> None:
        self.model.delete_security_group(self.scope, security_group_id)

    def create_security_group_rule(self, body: Mapping[str, Any]) -> SecurityGroupRule:
        doc = self.model.create_security_group_rule(self.scope, body)
        return self._wrap(SecurityGroupRule, doc)

    def create_security_group_rules(
        self, bodies: Sequence[Mapping[str, Any]]
    ) -> list[SecurityGroupRule]:
        docs = self.model.create_security_group_rules(self.scope, bodies)
        return [self._wrap(SecurityGroupRule, d) for d in docs]

    def get_security_group_rule(self, rule_id: str) -> SecurityGroupRule:
        return self._wrap(
            SecurityGroupRule, self.model.get_security_group_rule(self.scope, rule_id)
        )

    def list_security_group_rules(self, **filters: Any) -> list[SecurityGroupRule]:
        docs = self.model.list_security_group_rules(self.scope, **filters)
        return [self._wrap(SecurityGroupRule, d) for d in docs]

    def delete_security_group_rule(self, rule_id: str) -> None:
        self.model.delete_security_group_rule(self.scope, rule_id)

    # -- tags ------------------------------------------------------------------------------
    def set_tags(self, collection: str, object_id: str, tags: Sequence[str]) -> list[str]:
        return self.model.set_tags(self.scope, collection, object_id, list(tags))


def _interface_body(subnet_id: str | None, port_id: str | None) -> dict[str, str]:
    body = {}
    if subnet_id is not None:
        body["subnet_id"] = subnet_id
    if port_id is not None:
        body["port_id"] = port_id
    return body
