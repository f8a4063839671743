"""Test support for the Octavia model: a cloud with a load balancer model and Neutron.

:class:`SubnetPorts` stands in for the four Neutron internals Octavia calls
(``find_subnet_internal``, ``get_network_internal``, ``create_port_internal``,
``delete_port_internal``), allocating addresses from a subnet's CIDR, so these tests
isolate Octavia's rules (a taken address -> 409, the VIP port removed with the load
balancer); the contract tests run against the real network model.
"""

from __future__ import annotations

import ipaddress
import uuid
from typing import Any

from kiln.cloud.api.errors import Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.load_balancer.model import LoadBalancerModel

DEMO = CloudScope(project_id="demo-project", user_id="demo-user", roles=frozenset({"member"}))
OTHER = CloudScope(project_id="other-project", user_id="other-user", roles=frozenset({"member"}))
ADMIN = CloudScope(project_id="admin-project", user_id="admin-user", roles=frozenset({"admin"}))


class SubnetPorts:
    """Neutron's internals as Octavia calls them, over in-memory subnets."""

    def __init__(self) -> None:
        self.subnets: dict[str, dict[str, Any]] = {}
        self.networks: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, dict[str, Any]] = {}

    def seed(self) -> None:
        pass

    def add_subnet(self, project_id: str, cidr: str, name: str = "lb-subnet") -> dict[str, Any]:
        network = {"id": str(uuid.uuid4()), "project_id": project_id, "subnets": []}
        subnet = {
            "id": str(uuid.uuid4()),
            "name": name,
            "network_id": network["id"],
            "project_id": project_id,
            "cidr": cidr,
        }
        network["subnets"].append(subnet["id"])
        self.networks[network["id"]] = network
        self.subnets[subnet["id"]] = subnet
        return subnet

    def find_subnet_internal(self, project_id: str, name_or_id: str) -> dict[str, Any]:
        for subnet in self.subnets.values():
            if name_or_id in (subnet["id"], subnet["name"]) and subnet["project_id"] == project_id:
                return subnet
        raise NotFound(f"Subnet {name_or_id} could not be found.")

    def get_network_internal(self, network_id: str) -> dict[str, Any]:
        if network_id not in self.networks:
            raise NotFound(f"Network {network_id} could not be found.")
        return self.networks[network_id]

    def create_port_internal(self, project_id: str, body: dict[str, Any]) -> dict[str, Any]:
        fixed = body["fixed_ips"][0]
        subnet = self.subnets[fixed["subnet_id"]]
        taken = {p["fixed_ips"][0]["ip_address"] for p in self.ports.values()}
        address = fixed.get("ip_address")
        if address is None:
            hosts = ipaddress.ip_network(subnet["cidr"]).hosts()
            address = next(
                str(h) for h in hosts if str(h) not in taken and not str(h).endswith(".1")
            )
        elif address in taken:
            raise Conflict(
                f"IP address {address} already allocated.", kind="IpAddressAlreadyAllocated"
            )
        port = {
            "id": str(uuid.uuid4()),
            "project_id": project_id,
            "network_id": body["network_id"],
            "name": body["name"],
            "device_owner": body["device_owner"],
            "fixed_ips": [{"subnet_id": subnet["id"], "ip_address": address}],
        }
        self.ports[port["id"]] = port
        return port

    def delete_port_internal(self, port_id: str) -> None:
        if self.ports.pop(port_id, None) is None:
            raise NotFound(f"Port {port_id} could not be found.")


def octavia_cloud() -> tuple[SandboxCloud, LoadBalancerModel, SubnetPorts]:
    cloud = SandboxCloud()
    neutron = SubnetPorts()
    cloud.add("network", neutron)
    model = LoadBalancerModel(cloud)
    cloud.add("load_balancer", model)
    model.seed()
    return cloud, model, neutron
