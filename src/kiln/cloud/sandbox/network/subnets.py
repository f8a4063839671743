"""Subnets in the simulated Neutron (reference section 4.2).

Creation checks the network (404 unknown, 403 another project's unshared network), the
CIDR (canonical, of ``ip_version``, not overlapping the network's other subnets; or taken
from a subnet pool, see :mod:`~kiln.cloud.sandbox.network.subnet_pools`), the gateway
(omitted: first host; ``null``: none) and the allocation pools (default: the host range
minus the gateway). Deleting is refused (409 ``SubnetInUse``) while ports other than DHCP
ports hold addresses on it; router interface ports count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import (
    Doc,
    bad_request,
    conflict,
    forbidden,
    neutron_error,
    not_found,
)
from kiln.cloud.sandbox.network.ipam import (
    IpamError,
    IpNetwork,
    check_gateway,
    default_gateway,
    default_pools,
    parse_address,
    parse_cidr,
    parse_pools,
)
from kiln.cloud.sandbox.network.networks import AUTO_DELETED_OWNERS
from kiln.cloud.sandbox.network.subnet_pools import SubnetPoolOps

SUBNET_UPDATE_FIELDS = frozenset(
    {
        "name",
        "description",
        "gateway_ip",
        "enable_dhcp",
        "allocation_pools",
        "host_routes",
        "dns_nameservers",
        "segment_id",
        "service_types",
    }
)
SUBNET_CREATE_FIELDS = SUBNET_UPDATE_FIELDS | {
    "network_id",
    "cidr",
    "ip_version",
    "ipv6_ra_mode",
    "ipv6_address_mode",
    "subnetpool_id",
    "prefixlen",
    "use_default_subnetpool",
    "project_id",
    "tenant_id",
    "tags",
}
_IPV6_MODES = frozenset({"dhcpv6-stateful", "dhcpv6-stateless", "slaac"})


def _ipam(call: Any, *args: Any) -> Any:
    """Run an ipam check, turning its error into Neutron's."""
    try:
        return call(*args)
    except IpamError as exc:
        raise neutron_error(exc.status, exc.kind, exc.message) from exc


class SubnetOps(SubnetPoolOps):
    """Subnet operations."""

    def create_subnet(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_subnet", body.get("network_id"))
        with self.store.lock:
            return self._create_subnet(scope, body)

    def get_subnet(self, scope: CloudScope, subnet_id: str) -> Doc:
        self._enter(scope, "get_subnet", subnet_id)
        with self.store.lock:
            return self._get(scope, "subnet", subnet_id)

    def list_subnets(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_subnets")
        with self.store.lock:
            return self._list(scope, "subnet", filters)

    def update_subnet(self, scope: CloudScope, subnet_id: str, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "update_subnet", subnet_id)
        with self.store.lock:
            subnet = self._owned(scope, "subnet", subnet_id)
            self._check_keys(body, SUBNET_UPDATE_FIELDS, "subnet")
            network = _ipam(parse_cidr, subnet["cidr"], subnet["ip_version"])
            gateway_text = body.get("gateway_ip", subnet["gateway_ip"])
            gateway = self._gateway(network, gateway_text) if gateway_text else None
            if "allocation_pools" in body:
                pools = _ipam(parse_pools, network, body["allocation_pools"] or [], gateway)
                subnet["allocation_pools"] = [p.as_json() for p in pools]
            elif "gateway_ip" in body:
                _ipam(parse_pools, network, subnet["allocation_pools"], gateway)
            if "gateway_ip" in body:
                subnet["gateway_ip"] = str(gateway) if gateway else None
            if "segment_id" in body and subnet.get("segment_id") not in (None, body["segment_id"]):
                raise bad_request("Subnet already has a segment; it cannot be changed.")
            for key in (
                "name",
                "description",
                "enable_dhcp",
                "host_routes",
                "dns_nameservers",
                "segment_id",
                "service_types",
            ):
                if key in body:
                    subnet[key] = self._subnet_field(key, body[key])
            return self._touch("subnet", subnet)

    def delete_subnet(self, scope: CloudScope, subnet_id: str) -> None:
        self._enter(scope, "delete_subnet", subnet_id)
        with self.store.lock:
            subnet = self._owned(scope, "subnet", subnet_id)
            holders = self._ports_on_subnet(subnet["id"])
            if any(p.get("device_owner") not in AUTO_DELETED_OWNERS for p in holders):
                raise conflict(
                    "SubnetInUse",
                    f"Unable to complete operation on subnet {subnet['id']}: One or more ports "
                    "have an IP allocation from this subnet.",
                )
            network = self.store.get("network", subnet["network_id"])
            if network is not None:
                network["subnets"] = [s for s in network["subnets"] if s != subnet["id"]]
                self._touch("network", network)
            self.store.delete("subnet", subnet["id"])

    # -- internal --------------------------------------------------------------------------
    def _ports_on_subnet(self, subnet_id: str) -> list[Doc]:
        return [
            p
            for p in self.store.list("port")
            if any(ip["subnet_id"] == subnet_id for ip in p.get("fixed_ips") or [])
        ]

    @staticmethod
    def _gateway(network: IpNetwork, text: Any) -> Any:
        address = _ipam(parse_address, text, "gateway_ip")
        _ipam(check_gateway, network, address)
        return address

    @staticmethod
    def _subnet_field(key: str, value: Any) -> Any:
        if key in ("host_routes", "dns_nameservers", "service_types"):
            return list(value or [])
        if key == "enable_dhcp":
            return bool(value)
        if key in ("name", "description"):
            return str(value or "")
        return value

    def _create_subnet(self, scope: CloudScope | None, body: Mapping[str, Any]) -> Doc:
        self._check_keys(body, SUBNET_CREATE_FIELDS, "subnet")
        network_id = body.get("network_id")
        if not network_id:
            raise bad_request("Invalid input for operation: network_id is required.")
        network_doc = self.store.get("network", str(network_id))
        if network_doc is None or not self._visible(scope, "network", network_doc):
            raise not_found("network", str(network_id))
        if scope is None:
            project = network_doc["project_id"]
        else:
            project = self._project_for_create(scope, body)
            if (
                not scope.is_admin
                and network_doc["project_id"] != project
                and not network_doc.get("shared")
            ):
                raise forbidden(f"Not allowed to create a subnet on network {network_id}.")
        if body.get("cidr") and body.get("prefixlen") is not None:
            raise bad_request(
                "Bad subnets request: cidr and prefixlen must not be supplied together.",
                "BadRequest",
            )
        pool = self._subnetpool_of(scope, body)
        ip_version: int
        if pool is not None:
            network = self._allocate_from_pool(pool, project, body)
            ip_version = network.version
        else:
            if not body.get("cidr"):
                raise bad_request("A cidr must be specified in the absence of a subnet pool.")
            try:
                ip_version = int(body.get("ip_version", 4))
            except (TypeError, ValueError) as exc:
                raise bad_request(f"Invalid ip_version {body.get('ip_version')!r}.") from exc
            if ip_version not in (4, 6):
                raise bad_request(f"Invalid ip_version {ip_version}: must be 4 or 6.")
            network = _ipam(parse_cidr, body["cidr"], ip_version)
        for mode in ("ipv6_ra_mode", "ipv6_address_mode"):
            if body.get(mode) is not None and (ip_version != 6 or body[mode] not in _IPV6_MODES):
                raise bad_request(f"Invalid {mode} {body[mode]!r} for an IPv{ip_version} subnet.")
        for other in self.store.find("subnet", network_id=network_doc["id"]):
            other_net = _ipam(parse_cidr, other["cidr"], other["ip_version"])
            if other_net.version == network.version and other_net.overlaps(network):
                raise bad_request(
                    f"Invalid input for operation: Requested subnet with cidr: {network} for "
                    f"network: {network_doc['id']} overlaps with another subnet."
                )
        self._check_pool_affinity(network_doc, ip_version, pool["id"] if pool else None)
        if "gateway_ip" in body:
            gateway = self._gateway(network, body["gateway_ip"]) if body["gateway_ip"] else None
        else:
            gateway = default_gateway(network)
        if body.get("allocation_pools"):
            pools = _ipam(parse_pools, network, body["allocation_pools"], gateway)
        else:
            pools = default_pools(network, gateway)
        self._check_quota(project, "subnet")
        subnet = self._new_doc(project, body)
        subnet.update(
            {
                "network_id": network_doc["id"],
                "cidr": str(network),
                "ip_version": ip_version,
                "gateway_ip": str(gateway) if gateway else None,
                "enable_dhcp": bool(body.get("enable_dhcp", True)),
                "allocation_pools": [p.as_json() for p in pools],
                "dns_nameservers": list(body.get("dns_nameservers") or []),
                "host_routes": list(body.get("host_routes") or []),
                "ipv6_ra_mode": body.get("ipv6_ra_mode"),
                "ipv6_address_mode": body.get("ipv6_address_mode"),
                "subnetpool_id": pool["id"] if pool else None,
                "segment_id": body.get("segment_id"),
                "service_types": list(body.get("service_types") or []),
            }
        )
        self.store.put("subnet", subnet)
        network_doc["subnets"] = [*network_doc["subnets"], subnet["id"]]
        self._touch("network", network_doc)
        return subnet
