"""Routers in the simulated Neutron: external gateways and interfaces (section 4.4).

A gateway must be on an external network and gets a ``network:router_gateway`` port
there (Neutron owns it: no project). An interface added by subnet is a new
``network:router_interface`` port holding the subnet's gateway address, and goes away
with the interface; one added by port takes over an unbound single-address port and
gives it back on removal. Which way each interface came is kept in ``router_port``
documents (internal, never shown). A router with interfaces cannot be deleted (409
``RouterInUse``); an interface or gateway floating IPs rely on cannot be removed (409).
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
    not_found,
)
from kiln.cloud.sandbox.network.ports import PortOps

ROUTER_UPDATE_FIELDS = frozenset(
    {
        "name",
        "description",
        "admin_state_up",
        "external_gateway_info",
        "routes",
        "availability_zone_hints",
        "distributed",
        "ha",
    }
)
ROUTER_CREATE_FIELDS = (ROUTER_UPDATE_FIELDS - {"routes"}) | {
    "project_id",
    "tenant_id",
    "tags",
    "flavor_id",
}
INTERFACE_OWNER = "network:router_interface"
GATEWAY_OWNER = "network:router_gateway"


class RouterOps(PortOps):
    """Router operations."""

    def create_router(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_router")
        with self.store.lock:
            self._check_keys(body, ROUTER_CREATE_FIELDS, "router")
            project = self._project_for_create(scope, body)
            self._check_quota(project, "router")
            router = self._new_doc(project, body)
            router.update(
                {
                    "admin_state_up": bool(body.get("admin_state_up", True)),
                    "status": "ACTIVE",
                    "external_gateway_info": None,
                    "routes": [],
                    "distributed": bool(body.get("distributed", False)),
                    "ha": bool(body.get("ha", False)),
                    "availability_zone_hints": list(body.get("availability_zone_hints") or []),
                    "availability_zones": ["nova"],
                    "flavor_id": body.get("flavor_id"),
                }
            )
            info = body.get("external_gateway_info")
            if info:
                self._check_gateway_info(scope, info)
            self.store.put("router", router)
            if info:
                self._set_gateway(router, info)
            return router

    def get_router(self, scope: CloudScope, router_id: str) -> Doc:
        self._enter(scope, "get_router", router_id)
        with self.store.lock:
            return self._get(scope, "router", router_id)

    def list_routers(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_routers")
        with self.store.lock:
            return self._list(scope, "router", filters)

    def update_router(self, scope: CloudScope, router_id: str, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "update_router", router_id)
        with self.store.lock:
            router = self._owned(scope, "router", router_id)
            self._check_keys(body, ROUTER_UPDATE_FIELDS, "router")
            if "external_gateway_info" in body:
                info = body["external_gateway_info"]
                if info:
                    self._check_gateway_info(scope, info)
                self._replace_gateway(router, info or None)
            for key in ("name", "description"):
                if key in body:
                    router[key] = str(body[key] or "")
            for key in ("admin_state_up", "distributed", "ha"):
                if key in body:
                    router[key] = bool(body[key])
            for key in ("routes", "availability_zone_hints"):
                if key in body:
                    router[key] = list(body[key] or [])
            return self._touch("router", router)

    def delete_router(self, scope: CloudScope, router_id: str) -> None:
        self._enter(scope, "delete_router", router_id)
        with self.store.lock:
            router = self._owned(scope, "router", router_id)
            if self._interfaces(router["id"]):
                raise conflict("RouterInUse", f"Router {router['id']} still has ports")
            self._replace_gateway(router, None)
            self.store.delete("router", router["id"])

    # -- interfaces ------------------------------------------------------------------------
    def add_router_interface(
        self, scope: CloudScope, router_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        self._enter(scope, "add_router_interface", router_id)
        with self.store.lock:
            router = self._owned(scope, "router", router_id)
            subnet_id, port_id = _interface_keys(body)
            if port_id is not None:
                port = self._owned(scope, "port", port_id)
                if port.get("device_id") or port.get("device_owner"):
                    raise conflict("PortInUse", f"Port {port_id} is in use.")
                if len(port["fixed_ips"]) != 1:
                    raise bad_request(
                        f"Bad router request: Router port {port_id} must have exactly one "
                        "fixed IP.",
                        "BadRequest",
                    )
                self._check_new_subnet(router, port["fixed_ips"][0]["subnet_id"])
                port.update(
                    {"device_id": router["id"], "device_owner": INTERFACE_OWNER, "status": "ACTIVE"}
                )
                self._touch("port", port)
                added_by = "port"
            else:
                assert subnet_id is not None
                subnet = self._get(scope, "subnet", subnet_id)
                if not subnet.get("gateway_ip"):
                    raise bad_request(
                        f"Bad router request: Subnet {subnet_id} does not have a gateway IP.",
                        "BadRequest",
                    )
                self._check_new_subnet(router, subnet["id"])
                if subnet["gateway_ip"] in self._used(subnet["id"], ""):
                    raise bad_request(
                        f"Bad router request: the gateway IP {subnet['gateway_ip']} of subnet "
                        f"{subnet_id} is already allocated.",
                        "BadRequest",
                    )
                port = self._create_port(
                    None,
                    {
                        "network_id": subnet["network_id"],
                        "fixed_ips": [
                            {"subnet_id": subnet["id"], "ip_address": subnet["gateway_ip"]}
                        ],
                        "device_id": router["id"],
                        "device_owner": INTERFACE_OWNER,
                        "security_groups": [],
                    },
                    project=router["project_id"],
                )
                added_by = "subnet"
            self.store.put(
                "router_port", {"id": port["id"], "router_id": router["id"], "added_by": added_by}
            )
            self._touch("router", router)
            return _interface_info(router, port)

    def remove_router_interface(
        self, scope: CloudScope, router_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        self._enter(scope, "remove_router_interface", router_id)
        with self.store.lock:
            router = self._owned(scope, "router", router_id)
            subnet_id, port_id = _interface_keys(body)
            interfaces = self._interfaces(router["id"])
            if port_id is not None:
                found = [p for p in interfaces if p["id"] == port_id]
                if not found:
                    raise neutron_error(
                        404,
                        "RouterInterfaceNotFound",
                        f"Router {router['id']} does not have an interface with id {port_id}",
                    )
            else:
                found = [
                    p
                    for p in interfaces
                    if any(ip["subnet_id"] == subnet_id for ip in p["fixed_ips"])
                ]
                if not found:
                    raise neutron_error(
                        404,
                        "RouterInterfaceNotFoundForSubnet",
                        f"Router {router['id']} has no interface on subnet {subnet_id}",
                    )
            port = found[0]
            for ip in port["fixed_ips"]:
                if self._fips_through(router["id"], ip["subnet_id"]):
                    raise conflict(
                        "RouterInterfaceInUseByFloatingIP",
                        f"Router interface for subnet {ip['subnet_id']} on router "
                        f"{router['id']} cannot be deleted, as it is required by one or more "
                        "floating IPs.",
                    )
            info = _interface_info(router, port)
            origin = self.store.delete("router_port", port["id"])
            if origin is not None and origin.get("added_by") == "port":
                port.update({"device_id": "", "device_owner": "", "status": "DOWN"})
                self._touch("port", port)
            else:
                self.store.delete("port", port["id"])
            self._touch("router", router)
            return info

    # -- internal --------------------------------------------------------------------------
    def _interfaces(self, router_id: str) -> list[Doc]:
        return [
            p
            for p in self.store.find("port", device_id=router_id)
            if p.get("device_owner") == INTERFACE_OWNER
        ]

    def _fips_through(self, router_id: str, subnet_id: str) -> list[Doc]:
        """Floating IPs routed by ``router_id`` to a fixed address on ``subnet_id``."""
        found = []
        for fip in self.store.find("floatingip", router_id=router_id):
            port = self.store.get("port", fip.get("port_id") or "")
            if port is not None and any(
                ip["subnet_id"] == subnet_id and ip["ip_address"] == fip["fixed_ip_address"]
                for ip in port["fixed_ips"]
            ):
                found.append(fip)
        return found

    def _check_new_subnet(self, router: Doc, subnet_id: str) -> None:
        """400 when the router already reaches the subnet or an overlapping one."""
        subnet = self.store.get("subnet", subnet_id)
        if subnet is None:
            raise not_found("subnet", subnet_id)
        cidr = ipaddress.ip_network(subnet["cidr"])
        for port in self._interfaces(router["id"]):
            for ip in port["fixed_ips"]:
                if ip["subnet_id"] == subnet_id:
                    raise bad_request(
                        f"Bad router request: Router already has a port on subnet {subnet_id}.",
                        "BadRequest",
                    )
                other = self.store.get("subnet", ip["subnet_id"])
                if other is not None:
                    other_cidr = ipaddress.ip_network(other["cidr"])
                    if other_cidr.version == cidr.version and other_cidr.overlaps(cidr):
                        raise bad_request(
                            f"Bad router request: Cidr {cidr} of subnet {subnet_id} overlaps "
                            f"with cidr {other_cidr} of subnet {other['id']}.",
                            "BadRequest",
                        )

    def _check_gateway_info(self, scope: CloudScope, info: Any) -> None:
        if not isinstance(info, Mapping) or not info.get("network_id"):
            raise bad_request("Invalid input for external_gateway_info: network_id is required.")
        network = self._get(scope, "network", str(info["network_id"]))
        if not network.get("router:external"):
            raise bad_request(
                f"Bad router request: Network {network['id']} is not an external network.",
                "BadRequest",
            )
        if "enable_snat" in info and not scope.is_admin:
            raise forbidden("Setting external_gateway_info:enable_snat requires admin privileges.")

    def _replace_gateway(self, router: Doc, info: Mapping[str, Any] | None) -> None:
        current: dict[str, Any] = router.get("external_gateway_info") or {}
        leaving = current and (info is None or info["network_id"] != current["network_id"])
        if leaving and self.store.find("floatingip", router_id=router["id"]):
            raise conflict(
                "RouterExternalGatewayInUseByFloatingIp",
                f"Gateway cannot be updated for router {router['id']}, since a gateway to "
                f"external network {current['network_id']} is required by one or more "
                "floating IPs.",
            )
        if current and info is not None and info["network_id"] == current["network_id"]:
            current["enable_snat"] = bool(info.get("enable_snat", current["enable_snat"]))
            if info.get("external_fixed_ips"):
                gateway = self._gateway_port(router["id"])
                if gateway is not None:
                    gateway["fixed_ips"] = self._allocate(
                        gateway["network_id"],
                        list(info["external_fixed_ips"]),
                        port_id=gateway["id"],
                        current=gateway["fixed_ips"],
                    )
                    self._touch("port", gateway)
                    current["external_fixed_ips"] = [dict(ip) for ip in gateway["fixed_ips"]]
            return
        gateway = self._gateway_port(router["id"])
        if gateway is not None:
            self.store.delete("port", gateway["id"])
        router["external_gateway_info"] = None
        if info is not None:
            self._set_gateway(router, info)

    def _set_gateway(self, router: Doc, info: Mapping[str, Any]) -> None:
        fixed = info.get("external_fixed_ips")
        port = self._create_port(
            None,
            {
                "network_id": info["network_id"],
                "fixed_ips": list(fixed) if fixed else None,
                "device_id": router["id"],
                "device_owner": GATEWAY_OWNER,
                "security_groups": [],
            },
            project="",
        )
        router["external_gateway_info"] = {
            "network_id": info["network_id"],
            "enable_snat": bool(info.get("enable_snat", True)),
            "external_fixed_ips": [dict(ip) for ip in port["fixed_ips"]],
        }
        self.store.put("router", router)

    def _gateway_port(self, router_id: str) -> Doc | None:
        for port in self.store.find("port", device_id=router_id):
            if port.get("device_owner") == GATEWAY_OWNER:
                return port
        return None


def _interface_keys(body: Mapping[str, Any]) -> tuple[str | None, str | None]:
    subnet_id, port_id = body.get("subnet_id"), body.get("port_id")
    if bool(subnet_id) == bool(port_id):
        raise bad_request(
            "Bad router request: Either subnet_id or port_id must be specified, not both.",
            "BadRequest",
        )
    return (str(subnet_id) if subnet_id else None), (str(port_id) if port_id else None)


def _interface_info(router: Mapping[str, Any], port: Mapping[str, Any]) -> dict[str, Any]:
    subnet_ids = [ip["subnet_id"] for ip in port["fixed_ips"]]
    return {
        "id": router["id"],
        "tenant_id": router["project_id"],
        "project_id": router["project_id"],
        "port_id": port["id"],
        "subnet_id": subnet_ids[0] if subnet_ids else None,
        "subnet_ids": subnet_ids,
        "network_id": port["network_id"],
    }
