"""The NICs of an OS::Nova::Server: building them, the ports Heat owns, floating IPs.

Each ``networks`` entry becomes one NIC of the create request:

* ``allocate_network`` -> ``"networks": "auto" | "none"`` (the only entry); no
  entries at all -> ``"auto"`` (modern Nova requires the key);
* ``port`` -> ``{"port": id}``;
* ``subnet`` or ``port_extra_properties`` -> an *internal* port the plugin creates
  first (``<resource>-port-<index>``), then ``{"port": id}``; internal ports are
  kept in the resource data and deleted with the server;
* otherwise ``{"uuid": network id, "fixed_ip": ip}``; ``tag`` is the device tag.

``floating_ip`` associates that floating IP with the entry's port: at once when
the port is known, else (a network entry) once the server is ACTIVE and Nova has
made the port. Names resolve to ids through the network client's ``find_*``.
Imports: kiln.plugin, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from kiln.cloud.api.compute import ComputeApi
from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.network import NetworkApi, Port
from kiln.plugin.context import ResourceContext

INTERNAL_PORTS = "internal_ports"  # data: [{"id", "entry"}]
EXTERNAL_PORTS = "external_ports"  # data: [{"id"}]
PENDING_FLOATING_IPS = "pending_floating_ips"  # data: entries to associate once ACTIVE

# port_extra_properties keys a port update may change, and their Neutron field.
UPDATABLE_PORT_KEYS = {
    "admin_state_up": "admin_state_up",
    "allowed_address_pairs": "allowed_address_pairs",
    "binding:vnic_type": "binding:vnic_type",
    "port_security_enabled": "port_security_enabled",
    "qos_policy": "qos_policy_id",
    "propagate_uplink_status": "propagate_uplink_status",
}


def network_client(ctx: ResourceContext) -> NetworkApi:
    return cast("NetworkApi", ctx.client("network"))


def normalized(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An entry without unset keys, the hidden ``uuid`` spelled ``network``."""
    out = {k: v for k, v in entry.items() if v is not None}
    if "uuid" in out:
        out.setdefault("network", out.pop("uuid"))
        out.pop("uuid", None)
    return out


def entries(networks: list[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    return [normalized(e) for e in networks or []]


def needs_internal_port(entry: Mapping[str, Any]) -> bool:
    return bool(entry.get("subnet") or entry.get("port_extra_properties")) and not entry.get("port")


def _clean_pairs(pairs: list[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if v is not None} for p in pairs or []]


def port_extra_body(extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """Neutron port fields of a ``port_extra_properties`` map."""
    extra = extra or {}
    body: dict[str, Any] = dict(extra.get("value_specs") or {})
    for key, field in UPDATABLE_PORT_KEYS.items():
        value = extra.get(key)
        if value is None:
            continue
        body[field] = _clean_pairs(value) if key == "allowed_address_pairs" else value
    if extra.get("mac_address"):
        body["mac_address"] = extra["mac_address"]
    if extra.get("no_fixed_ips"):
        body["fixed_ips"] = []
    return body


class ServerNetworks:
    """The network side of one server resource."""

    def __init__(self, ctx: ResourceContext) -> None:
        self.ctx = ctx

    @property
    def network(self) -> NetworkApi:
        return network_client(self.ctx)

    # -- lookups -----------------------------------------------------------------------
    def network_id(self, name_or_id: str) -> str:
        return self.network.find_network(name_or_id).id

    def security_group_ids(self, groups: list[str]) -> list[str]:
        api = self.network
        return [api.find_security_group(g, project_id=self.ctx.project_id).id for g in groups]

    # -- internal ports ----------------------------------------------------------------
    def internal_ports(self) -> list[dict[str, Any]]:
        return list(self.ctx.data_get(INTERNAL_PORTS) or [])

    def _remember_internal(self, port_id: str, entry: Mapping[str, Any]) -> None:
        ports = self.internal_ports()
        ports.append({"id": port_id, "entry": dict(entry)})
        self.ctx.data_set(INTERNAL_PORTS, ports)

    def forget_internal(self, port_id: str) -> None:
        ports = [p for p in self.internal_ports() if p["id"] != port_id]
        self.ctx.data_set(INTERNAL_PORTS, ports)

    def internal_port_for(self, entry: Mapping[str, Any]) -> str | None:
        for port in self.internal_ports():
            if port["entry"] == dict(entry):
                return str(port["id"])
        return None

    def create_internal_port(
        self, entry: Mapping[str, Any], index: int, security_groups: list[str]
    ) -> str:
        """Create the port of a subnet / port_extra_properties entry; its id."""
        api = self.network
        subnet = api.find_subnet(entry["subnet"]) if entry.get("subnet") else None
        if entry.get("network"):
            network_id = self.network_id(entry["network"])
        elif subnet is not None:
            network_id = subnet.network_id
        else:
            raise NotFound("A port needs a network or a subnet", service="network")
        body: dict[str, Any] = {"name": f"{self.ctx.name}-port-{index}", "network_id": network_id}
        fixed: dict[str, str] = {}
        if subnet is not None:
            fixed["subnet_id"] = subnet.id
        if entry.get("fixed_ip"):
            fixed["ip_address"] = entry["fixed_ip"]
        if fixed:
            body["fixed_ips"] = [fixed]
        if security_groups:
            body["security_groups"] = self.security_group_ids(security_groups)
        body.update(port_extra_body(entry.get("port_extra_properties")))
        port = api.create_port(body)
        self._remember_internal(port.id, entry)
        return port.id

    def delete_internal_port(self, port_id: str) -> None:
        try:
            self.network.delete_port(port_id)
        except NotFound:
            pass
        self.forget_internal(port_id)

    def delete_internal_ports(self) -> None:
        for port in self.internal_ports():
            self.delete_internal_port(str(port["id"]))

    def update_internal_port(self, port_id: str, extra: Mapping[str, Any] | None) -> None:
        body = {k: v for k, v in port_extra_body(extra).items() if k != "mac_address"}
        self.network.update_port(port_id, body)

    # -- NICs of the create request ----------------------------------------------------
    def nics(
        self, networks: list[Mapping[str, Any]] | None, security_groups: list[str], tags: bool
    ) -> str | list[dict[str, Any]]:
        """The ``networks`` value of ``POST /servers``; creates internal ports on the way."""
        items = entries(networks)
        if not items:
            return "auto"
        if items[0].get("allocate_network"):
            return str(items[0]["allocate_network"])
        nics: list[dict[str, Any]] = []
        pending: list[dict[str, Any]] = []
        for index, entry in enumerate(items):
            nic = self._nic(entry, index, security_groups)
            if entry.get("tag") and tags:
                nic["tag"] = entry["tag"]
            nics.append(nic)
            if entry.get("floating_ip"):
                if "port" in nic:
                    self.associate_floating_ip(
                        entry["floating_ip"], nic["port"], entry.get("fixed_ip")
                    )
                else:
                    pending.append(entry)
        self.ctx.data_set(PENDING_FLOATING_IPS, pending)
        return nics

    def _nic(self, entry: Mapping[str, Any], index: int, groups: list[str]) -> dict[str, Any]:
        if entry.get("port"):
            return {"port": self.network.find_port(entry["port"]).id}
        if needs_internal_port(entry):
            existing = self.internal_port_for(entry)
            return {"port": existing or self.create_internal_port(entry, index, groups)}
        nic: dict[str, Any] = {"uuid": self.network_id(entry["network"])}
        if entry.get("fixed_ip"):
            nic["fixed_ip"] = entry["fixed_ip"]
        return nic

    # -- floating IPs ------------------------------------------------------------------
    def associate_floating_ip(self, floating_ip: str, port_id: str, fixed_ip: str | None) -> None:
        body: dict[str, Any] = {"port_id": port_id}
        if fixed_ip:
            body["fixed_ip_address"] = fixed_ip
        self.network.update_floating_ip(floating_ip, body)

    def server_port(self, server_id: str, entry: Mapping[str, Any]) -> Port | None:
        """The server's port made by Nova for a network entry (matching its fixed IP)."""
        network_id = self.network_id(entry["network"])
        for port in self.network.list_ports(device_id=server_id, network_id=network_id):
            ips = {ip.get("ip_address") for ip in port.fixed_ips}
            if not entry.get("fixed_ip") or entry["fixed_ip"] in ips:
                return port
        return None

    def associate_pending_floating_ips(self, server_id: str) -> None:
        """Floating IPs of network entries, once Nova has made their ports."""
        for entry in self.ctx.data_get(PENDING_FLOATING_IPS) or []:
            port = self.server_port(server_id, entry)
            if port is not None:
                self.associate_floating_ip(entry["floating_ip"], port.id, entry.get("fixed_ip"))
        self.ctx.data_delete(PENDING_FLOATING_IPS)

    # -- ports Nova made ---------------------------------------------------------------
    def record_external_ports(self, compute: ComputeApi, server_id: str) -> None:
        internal = {str(p["id"]) for p in self.internal_ports()}
        found = [
            {"id": i.port_id}
            for i in compute.list_server_interfaces(server_id)
            if i.port_id not in internal
        ]
        self.ctx.data_set(EXTERNAL_PORTS, found)
