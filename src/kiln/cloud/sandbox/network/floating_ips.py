"""Floating IPs in the simulated Neutron: allocation and association rules (section 4.5).

A floating IP takes an address on an external network through a ``network:floatingip``
port Neutron owns. Associating it with a port needs an IPv4 fixed address of that port
(named when there are several) and a router with an interface on that address's subnet
and a gateway on the floating network; otherwise 404
``ExternalGatewayForFloatingIPNotFound`` (what templates that forget a RouterInterface
dependency run into). A fixed address has at most one floating IP (409). Associated: the
router is recorded and the status becomes ``ACTIVE`` (after the
``network.floatingip.associate`` delay); disassociated: ``DOWN``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import (
    Doc,
    bad_request,
    conflict,
    forbidden,
    neutron_error,
)
from kiln.cloud.sandbox.network.ports import disassociate
from kiln.cloud.sandbox.network.routers import RouterOps

FIP_CREATE_FIELDS = frozenset(
    {
        "floating_network_id",
        "subnet_id",
        "floating_ip_address",
        "port_id",
        "fixed_ip_address",
        "dns_name",
        "dns_domain",
        "description",
        "qos_policy_id",
        "project_id",
        "tenant_id",
        "tags",
    }
)
FIP_UPDATE_FIELDS = frozenset({"port_id", "fixed_ip_address", "description", "qos_policy_id"})
FIP_OWNER = "network:floatingip"


class FloatingIpOps(RouterOps):
    """Floating IP operations."""

    def create_floating_ip(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_floating_ip", body.get("floating_network_id"))
        with self.store.lock:
            self._check_keys(body, FIP_CREATE_FIELDS, "floatingip")
            network_id = body.get("floating_network_id")
            if not network_id:
                raise bad_request("Invalid input: floating_network_id is required.")
            network = self._get(scope, "network", str(network_id))
            if not network.get("router:external"):
                raise bad_request(
                    f"Bad floatingip request: Network {network['id']} is not a valid external "
                    "network.",
                    "BadRequest",
                )
            if body.get("floating_ip_address") and not scope.is_admin:
                raise forbidden("Setting floating_ip_address requires admin privileges.")
            project = self._project_for_create(scope, body)
            self._check_quota(project, "floatingip")
            fip = self._new_doc(project, body)
            del fip["name"]
            association = None
            if body.get("port_id"):
                association = self._association(
                    scope, fip, network["id"], str(body["port_id"]), body.get("fixed_ip_address")
                )
            wanted: dict[str, Any] = {}
            if body.get("subnet_id"):
                wanted["subnet_id"] = body["subnet_id"]
            if body.get("floating_ip_address"):
                wanted["ip_address"] = body["floating_ip_address"]
            port = self._create_port(
                None,
                {
                    "network_id": network["id"],
                    "fixed_ips": [wanted] if wanted else None,
                    "device_id": fip["id"],
                    "device_owner": FIP_OWNER,
                    "security_groups": [],
                },
                project="",
            )
            if not port["fixed_ips"]:
                self.store.delete("port", port["id"])
                raise conflict(
                    "IpAddressGenerationFailure",
                    f"No more IP addresses available on network {network['id']}.",
                )
            fip.update(
                {
                    "floating_ip_address": port["fixed_ips"][0]["ip_address"],
                    "floating_network_id": network["id"],
                    "router_id": None,
                    "port_id": None,
                    "fixed_ip_address": None,
                    "status": "DOWN",
                    "dns_name": str(body.get("dns_name") or ""),
                    "dns_domain": str(body.get("dns_domain") or ""),
                    "qos_policy_id": body.get("qos_policy_id"),
                    "port_details": None,
                    "port_forwardings": [],
                }
            )
            self.store.put("floatingip", fip)
            if association is not None:
                self._associate(fip, *association)
            return fip

    def get_floating_ip(self, scope: CloudScope, fip_id: str) -> Doc:
        self._enter(scope, "get_floating_ip", fip_id)
        with self.store.lock:
            return self._get(scope, "floatingip", fip_id)

    def list_floating_ips(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_floating_ips")
        with self.store.lock:
            return self._list(scope, "floatingip", filters)

    def update_floating_ip(self, scope: CloudScope, fip_id: str, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "update_floating_ip", fip_id)
        with self.store.lock:
            fip = self._owned(scope, "floatingip", fip_id)
            self._check_keys(body, FIP_UPDATE_FIELDS, "floatingip")
            if "port_id" in body or "fixed_ip_address" in body:
                port_id = body["port_id"] if "port_id" in body else fip.get("port_id")
                if port_id:
                    association = self._association(
                        scope,
                        fip,
                        fip["floating_network_id"],
                        str(port_id),
                        body.get("fixed_ip_address"),
                    )
                    self._associate(fip, *association)
                else:
                    self.store.cancel("floatingip", fip["id"])
                    disassociate(fip)
            for key in ("description", "qos_policy_id"):
                if key in body:
                    fip[key] = body[key]
            return self._touch("floatingip", fip)

    def delete_floating_ip(self, scope: CloudScope, fip_id: str) -> None:
        self._enter(scope, "delete_floating_ip", fip_id)
        with self.store.lock:
            fip = self._owned(scope, "floatingip", fip_id)
            for port in self.store.find("port", device_id=fip["id"]):
                if port.get("device_owner") == FIP_OWNER:
                    self.store.delete("port", port["id"])
            self.store.delete("floatingip", fip["id"])

    # -- internal --------------------------------------------------------------------------
    def _association(
        self,
        scope: CloudScope,
        fip: Doc,
        network_id: str,
        port_id: str,
        fixed_ip: Any,
    ) -> tuple[Doc, str, str]:
        """The port, fixed address and router of an association, or Neutron's refusal."""
        port = self._get(scope, "port", port_id)
        v4 = [ip for ip in port["fixed_ips"] if ipaddress.ip_address(ip["ip_address"]).version == 4]
        if not v4:
            raise bad_request(
                f"Bad floatingip request: Port {port_id} does not have any IPv4 address.",
                "BadRequest",
            )
        if fixed_ip:
            chosen = [ip for ip in v4 if ip["ip_address"] == str(fixed_ip)]
            if not chosen:
                raise bad_request(
                    f"Bad floatingip request: Port {port_id} does not have fixed ip {fixed_ip}.",
                    "BadRequest",
                )
        elif len(v4) > 1:
            raise bad_request(
                f"Bad floatingip request: Port {port_id} has multiple fixed IPv4 addresses. "
                "Must provide a specific IPv4 address when assigning a floating IP.",
                "BadRequest",
            )
        else:
            chosen = v4
        address, subnet_id = chosen[0]["ip_address"], chosen[0]["subnet_id"]
        for other in self.store.find("floatingip", port_id=port["id"]):
            if other["id"] != fip["id"] and other.get("fixed_ip_address") == address:
                raise conflict(
                    "FloatingIPPortAlreadyAssociated",
                    f"Cannot associate floating IP {fip.get('floating_ip_address')} "
                    f"({fip['id']}) with port {port['id']} using fixed IP {address}, as that "
                    f"fixed IP already has a floating IP on external network "
                    f"{other['floating_network_id']}.",
                )
        router_id = self._router_between(subnet_id, network_id, port.get("project_id"))
        if router_id is None:
            raise neutron_error(
                404,
                "ExternalGatewayForFloatingIPNotFound",
                f"External network {network_id} is not reachable from subnet {subnet_id}.  "
                f"Therefore, cannot associate Port {port['id']} with a Floating IP.",
            )
        return port, address, router_id

    def _router_between(self, subnet_id: str, network_id: str, project: Any) -> str | None:
        """A router with an interface on the subnet and a gateway on the external network."""
        candidates = []
        for router in self.store.list("router"):
            gateway = router.get("external_gateway_info") or {}
            if gateway.get("network_id") != network_id:
                continue
            for port in self._interfaces(router["id"]):
                if any(ip["subnet_id"] == subnet_id for ip in port["fixed_ips"]):
                    candidates.append(router)
        # The port owner's router first, as Neutron prefers.
        candidates.sort(key=lambda r: r["project_id"] != project)
        return candidates[0]["id"] if candidates else None

    def _associate(self, fip: Doc, port: Doc, address: str, router_id: str) -> None:
        self.store.cancel("floatingip", fip["id"])
        fip.update({"port_id": port["id"], "fixed_ip_address": address, "router_id": router_id})
        delay = self.sim.delay("network", "floatingip", "associate")
        if delay > 0:
            fip["status"] = "DOWN"
            self.store.put("floatingip", fip)
            self.store.schedule("floatingip", fip["id"], delay, {"status": "ACTIVE"})
        else:
            fip["status"] = "ACTIVE"
            self.store.put("floatingip", fip)
