"""Ports in the simulated Neutron: addresses, MACs, security groups, binding (section 4.3).

A port gets its addresses from its network's subnets (omitted ``fixed_ips``: one address
from the first subnet with room, IPv4 first; ``[]``: none), a unique ``fa:16:3e`` MAC,
and the project's ``default`` security group unless told otherwise. It is ``DOWN`` until
Nova binds it to a server (``bind_port``: ``ACTIVE``) and again after unbinding. Ports
that routers and floating IPs own cannot be deleted through the port API (409).
The ``*_internal``, ``bind_port``, ``unbind_port`` and ``ports_of_device`` methods are for
the other simulated services and run under the caller's store lock without ``enter``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import (
    Doc,
    bad_request,
    conflict,
    neutron_error,
    not_found,
)
from kiln.cloud.sandbox.network.ipam import (
    IpamError,
    check_host_address,
    next_free,
    parse_address,
    parse_cidr,
    pools_of,
)
from kiln.cloud.sandbox.network.subnets import SubnetOps

PORT_UPDATE_FIELDS = frozenset(
    {
        "name",
        "description",
        "admin_state_up",
        "fixed_ips",
        "security_groups",
        "device_id",
        "device_owner",
        "allowed_address_pairs",
        "port_security_enabled",
        "binding:vnic_type",
        "binding:host_id",
        "binding:profile",
        "qos_policy_id",
        "dns_name",
        "dns_domain",
        "extra_dhcp_opts",
        "propagate_uplink_status",
        "mac_address",
    }
)
PORT_CREATE_FIELDS = PORT_UPDATE_FIELDS | {"network_id", "project_id", "tenant_id", "tags"}
#: owners whose ports only their router / floating IP may remove
L3_OWNERS = frozenset({"network:router_interface", "network:router_gateway", "network:floatingip"})
_MAC = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


class PortOps(SubnetOps):
    """Port operations, and the port calls other simulated services make."""

    def create_port(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_port", body.get("network_id"))
        with self.store.lock:
            return self._create_port(scope, body)

    def get_port(self, scope: CloudScope, port_id: str) -> Doc:
        self._enter(scope, "get_port", port_id)
        with self.store.lock:
            return self._get(scope, "port", port_id)

    def list_ports(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_ports")
        with self.store.lock:
            return self._list(scope, "port", filters)

    def update_port(self, scope: CloudScope, port_id: str, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "update_port", port_id)
        with self.store.lock:
            port = self._owned(scope, "port", port_id)
            self._check_keys(body, PORT_UPDATE_FIELDS, "port")
            if "mac_address" in body and body["mac_address"] != port["mac_address"]:
                if port.get("device_id"):
                    raise conflict("PortBound", f"Port {port_id} is bound; its MAC is fixed.")
                port["mac_address"] = self._mac(port["network_id"], body["mac_address"])
            if "fixed_ips" in body:
                port["fixed_ips"] = self._allocate(
                    port["network_id"],
                    body["fixed_ips"],
                    port_id=port["id"],
                    current=port["fixed_ips"],
                )
                self._drop_stale_associations(port)
            security = bool(body.get("port_security_enabled", port["port_security_enabled"]))
            if "security_groups" in body:
                port["security_groups"] = self._port_groups(
                    port["project_id"], body["security_groups"], security, default_if_none=True
                )
            elif not security and port["security_groups"]:
                raise bad_request(
                    "Port has security group associated. Cannot disable port security or IP "
                    "address until security group is removed.",
                    "PortSecurityPortHasSecurityGroup",
                )
            for key in PORT_UPDATE_FIELDS - {"fixed_ips", "security_groups", "mac_address"}:
                if key in body:
                    port[key] = body[key]
            port["dns_assignment"] = _dns_assignment(port)
            return self._touch("port", port)

    def delete_port(self, scope: CloudScope, port_id: str) -> None:
        self._enter(scope, "delete_port", port_id)
        with self.store.lock:
            port = self._owned(scope, "port", port_id)
            if port.get("device_owner") in L3_OWNERS:
                raise conflict(
                    "L3PortInUse",
                    f"Port {port_id} has owner {port['device_owner']} and therefore cannot be "
                    "deleted directly via the port API.",
                )
            self._remove_port(port)

    # -- for the other services --------------------------------------------------------------
    def create_port_internal(self, project_id: str, body: Mapping[str, Any]) -> Doc:
        """A port for ``project_id`` under the rules of ``create_port``."""
        with self.store.lock:
            return self._create_port(CloudScope(project_id=project_id), body)

    def get_port_internal(self, port_id: str) -> Doc:
        """The port (NotFound when absent), whoever owns it."""
        with self.store.lock:
            return self._port(port_id)

    def bind_port(
        self, port_id: str, device_id: str, device_owner: str, host: str = "sandbox"
    ) -> Doc:
        """Attach the port to a device: ``ACTIVE`` (after the ``port.bind`` delay)."""
        with self.store.lock:
            port = self._port(port_id)
            port.update(
                {
                    "device_id": device_id,
                    "device_owner": device_owner,
                    "binding:host_id": host,
                    "binding:vif_type": "ovs",
                    "binding:vif_details": {"port_filter": True, "connectivity": "l2"},
                }
            )
            delay = self.sim.delay("network", "port", "bind")
            self.store.cancel("port", port["id"])
            port["status"] = "BUILD" if delay > 0 else "ACTIVE"
            self._touch("port", port)
            if delay > 0:
                self.store.schedule("port", port["id"], delay, {"status": "ACTIVE"})
            return port

    def unbind_port(self, port_id: str) -> Doc:
        """Detach the port from its device: ``DOWN``."""
        with self.store.lock:
            port = self._port(port_id)
            self.store.cancel("port", port["id"])
            port.update(
                {
                    "device_id": "",
                    "device_owner": "",
                    "binding:host_id": "",
                    "binding:vif_type": "unbound",
                    "binding:vif_details": {},
                    "status": "DOWN",
                }
            )
            return self._touch("port", port)

    def delete_port_internal(self, port_id: str) -> None:
        """Remove the port (and its floating IP associations); NotFound when absent."""
        with self.store.lock:
            self._remove_port(self._port(port_id))

    def ports_of_device(self, device_id: str) -> list[Doc]:
        """The ports bound to ``device_id``, oldest first."""
        with self.store.lock:
            return self.store.find("port", device_id=device_id) if device_id else []

    # -- internal --------------------------------------------------------------------------
    def _port(self, port_id: str) -> Doc:
        port = self.store.get("port", port_id)
        if port is None:
            raise not_found("port", port_id)
        return port

    def _create_port(
        self, scope: CloudScope | None, body: Mapping[str, Any], *, project: str | None = None
    ) -> Doc:
        """A new port; ``scope`` None is Neutron itself (gateway and floating IP ports)."""
        self._check_keys(body, PORT_CREATE_FIELDS, "port")
        network_id = body.get("network_id")
        if not network_id:
            raise bad_request("Invalid input for operation: network_id is required.")
        network = self.store.get("network", str(network_id))
        if network is None or not self._visible(scope, "network", network):
            raise not_found("network", str(network_id))
        if project is None:
            assert scope is not None
            project = self._project_for_create(scope, body)
        self._check_quota(project, "port")
        port = self._new_doc(project, body)
        security = bool(body.get("port_security_enabled", network["port_security_enabled"]))
        port_id = port["id"]
        port.update(
            {
                "network_id": network["id"],
                "mac_address": self._mac(network["id"], body.get("mac_address")),
                "admin_state_up": bool(body.get("admin_state_up", True)),
                "status": "DOWN",
                "device_id": str(body.get("device_id") or ""),
                "device_owner": str(body.get("device_owner") or ""),
                "fixed_ips": self._allocate(network["id"], body.get("fixed_ips"), port_id=port_id),
                "security_groups": self._port_groups(
                    project, body.get("security_groups"), security, default_if_none=bool(project)
                ),
                "allowed_address_pairs": self._address_pairs(body, security),
                "port_security_enabled": security,
                "binding:vnic_type": body.get("binding:vnic_type") or "normal",
                "binding:host_id": str(body.get("binding:host_id") or ""),
                "binding:vif_type": "unbound",
                "binding:vif_details": {},
                "binding:profile": dict(body.get("binding:profile") or {}),
                "qos_policy_id": body.get("qos_policy_id"),
                "qos_network_policy_id": network.get("qos_policy_id"),
                "dns_name": str(body.get("dns_name") or ""),
                "dns_domain": str(body.get("dns_domain") or ""),
                "extra_dhcp_opts": list(body.get("extra_dhcp_opts") or []),
                "propagate_uplink_status": bool(body.get("propagate_uplink_status", False)),
            }
        )
        if port["device_owner"] in L3_OWNERS:
            port["status"] = "ACTIVE"
        port["dns_assignment"] = _dns_assignment(port)
        return self.store.put("port", port)

    def _remove_port(self, port: Doc) -> None:
        for fip in self.store.find("floatingip", port_id=port["id"]):
            disassociate(fip)
            self._touch("floatingip", fip)
        self.store.delete("router_port", port["id"])
        self.store.delete("port", port["id"])

    def _drop_stale_associations(self, port: Doc) -> None:
        """Floating IPs whose fixed address left the port are disassociated."""
        addresses = {ip["ip_address"] for ip in port["fixed_ips"]}
        for fip in self.store.find("floatingip", port_id=port["id"]):
            if fip.get("fixed_ip_address") not in addresses:
                disassociate(fip)
                self._touch("floatingip", fip)

    def _mac(self, network_id: str, wanted: Any) -> str:
        taken = {p["mac_address"] for p in self.store.find("port", network_id=network_id)}
        if wanted is not None:
            mac = str(wanted).lower()
            if not _MAC.match(mac):
                raise bad_request(f"Invalid input for mac_address: '{wanted}' is not a valid MAC.")
            if mac in taken:
                raise conflict(
                    "MacAddressInUse",
                    f"Unable to complete operation for network {network_id}. The mac address "
                    f"{mac} is in use.",
                )
            return mac
        while True:
            mac = "fa:16:3e:" + ":".join(f"{random.randrange(256):02x}" for _ in range(3))
            if mac not in taken:
                return mac

    def _used(self, subnet_id: str, port_id: str) -> set[str]:
        return {
            ip["ip_address"]
            for p in self.store.list("port")
            if p["id"] != port_id
            for ip in p.get("fixed_ips") or []
            if ip["subnet_id"] == subnet_id
        }

    def _allocate(
        self,
        network_id: str,
        requested: Any,
        *,
        port_id: str,
        current: Sequence[Mapping[str, str]] = (),
    ) -> list[dict[str, str]]:
        """The fixed IPs of a port: requested ones checked, others taken from the pools.

        On update, an entry naming only a subnet keeps the port's current address there.
        """
        subnets = self.store.find("subnet", network_id=network_id)
        if requested is None:
            for subnet in sorted(subnets, key=lambda s: s["ip_version"]):
                address = next_free(pools_of(subnet), self._used(subnet["id"], port_id))
                if address is not None:
                    return [{"subnet_id": subnet["id"], "ip_address": address}]
            if subnets:
                raise conflict(
                    "IpAddressGenerationFailure",
                    f"No more IP addresses available on network {network_id}.",
                )
            return []
        if not isinstance(requested, list):
            raise bad_request("Invalid input for fixed_ips: it must be a list.")
        chosen: list[dict[str, str]] = []
        for entry in requested:
            if not isinstance(entry, Mapping):
                raise bad_request(f"Invalid input for fixed_ips: {entry!r}.")
            subnet = self._subnet_for(subnets, entry, network_id)
            used = self._used(subnet["id"], port_id) | {c["ip_address"] for c in chosen}
            if entry.get("ip_address"):
                address = _checked_address(subnet, entry["ip_address"])
                if address in used:
                    raise conflict(
                        "IpAddressAlreadyAllocated",
                        f"IP address {address} already allocated in subnet {subnet['id']}",
                    )
            else:
                kept = [
                    ip["ip_address"]
                    for ip in current
                    if ip["subnet_id"] == subnet["id"] and ip["ip_address"] not in used
                ]
                free = kept[0] if kept else next_free(pools_of(subnet), used)
                if free is None:
                    raise conflict(
                        "IpAddressGenerationFailure",
                        f"No more IP addresses available for subnet {subnet['id']}.",
                    )
                address = free
            chosen.append({"subnet_id": subnet["id"], "ip_address": address})
        return chosen

    @staticmethod
    def _subnet_for(subnets: Sequence[Doc], entry: Mapping[str, Any], network_id: str) -> Doc:
        if entry.get("subnet_id"):
            for subnet in subnets:
                if subnet["id"] == entry["subnet_id"]:
                    return subnet
            raise bad_request(
                f"Invalid input for operation: Failed to create port on network {network_id}, "
                f"because fixed_ips included invalid subnet {entry['subnet_id']}."
            )
        if not entry.get("ip_address"):
            raise bad_request("Invalid input for fixed_ips: give subnet_id and/or ip_address.")
        address = _ipam_address(entry["ip_address"])
        for subnet in subnets:
            if address in parse_cidr(subnet["cidr"], subnet["ip_version"]):
                return subnet
        raise bad_request(
            f"IP address {address} is not a valid IP for any subnet on network {network_id}."
        )

    def _port_groups(
        self, project: str, wanted: Any, security: bool, *, default_if_none: bool
    ) -> list[str]:
        if wanted is None:
            if not security or not default_if_none:
                return []
            return [self.ensure_default_group(project)["id"]]
        if not isinstance(wanted, list):
            raise bad_request("Invalid input for security_groups: it must be a list.")
        if wanted and not security:
            raise bad_request(
                "Port security must be enabled and port must have an IP address in order to "
                "use security groups.",
                "PortSecurityAndIPRequiredForSecurityGroups",
            )
        ids: list[str] = []
        for group_id in wanted:
            group = self.store.get("security_group", str(group_id))
            if group is None or (group["project_id"] != project and not group.get("shared")):
                raise not_found("security_group", str(group_id))
            if group["id"] not in ids:
                ids.append(group["id"])
        return ids

    @staticmethod
    def _address_pairs(body: Mapping[str, Any], security: bool) -> list[dict[str, Any]]:
        pairs = list(body.get("allowed_address_pairs") or [])
        if pairs and not security:
            raise bad_request(
                "Port Security must be enabled in order to have allowed address pairs on a port.",
                "AddressPairAndPortSecurityRequired",
            )
        return [dict(p) for p in pairs]


def _ipam_address(text: Any) -> Any:
    try:
        return parse_address(text)
    except IpamError as exc:
        raise neutron_error(exc.status, exc.kind, exc.message) from exc


def _checked_address(subnet: Mapping[str, Any], text: Any) -> str:
    try:
        address = parse_address(text)
        check_host_address(parse_cidr(subnet["cidr"], subnet["ip_version"]), address, subnet["id"])
    except IpamError as exc:
        raise neutron_error(exc.status, exc.kind, exc.message) from exc
    return str(address)


def disassociate(fip: Doc) -> None:
    fip.update({"port_id": None, "fixed_ip_address": None, "router_id": None, "status": "DOWN"})


def _dns_assignment(port: Mapping[str, Any]) -> list[dict[str, str]]:
    assignments = []
    for ip in port.get("fixed_ips") or []:
        hostname = port.get("dns_name") or "host-" + re.sub(r"[.:]", "-", ip["ip_address"])
        assignments.append(
            {
                "hostname": hostname,
                "ip_address": ip["ip_address"],
                "fqdn": f"{hostname}.openstacklocal.",
            }
        )
    return assignments
