"""Updating an OS::Nova::Server's ``networks`` in place: detach, then attach.

Old and new entries are compared: equal entries stay; an entry whose only
change is in updatable ``port_extra_properties`` of an internal port updates
that port; other old entries have their ports detached (internal ones are then
deleted) and other new entries are attached. An empty list means Nova's
automatic network: going from it to explicit entries detaches every interface,
and going back attaches the one network the project sees. Each detach waits
until the port left the server (``device_id`` and MAC gone from ``addresses``),
each attach until the port's IPs show in ``addresses``; floating IPs of new
entries are associated last. Imports: kiln.plugin, kiln.cloud.api and siblings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.compute import ComputeApi
from kiln.cloud.api.errors import NotFound
from kiln.plugin.context import ResourceContext
from kiln.resources.nova.server_networks import (
    UPDATABLE_PORT_KEYS,
    ServerNetworks,
    entries,
    needs_internal_port,
)
from kiln.resources.nova.server_status import fetch

Step = dict[str, Any]


def _without_extra(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "port_extra_properties"}


def _only_updatable_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    before = old.get("port_extra_properties") or {}
    after = new.get("port_extra_properties") or {}
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    return changed <= set(UPDATABLE_PORT_KEYS) | {"value_specs", "no_fixed_ips"}


def _server_ips(server_addresses: Mapping[str, list[dict[str, Any]]]) -> tuple[set[str], set[str]]:
    """(IP addresses, MAC addresses) the server shows."""
    ips, macs = set(), set()
    for addresses in server_addresses.values():
        for address in addresses:
            ips.add(str(address.get("addr")))
            if address.get("OS-EXT-IPS-MAC:mac_addr"):
                macs.add(str(address["OS-EXT-IPS-MAC:mac_addr"]))
    return ips, macs


def network_steps(
    ctx: ResourceContext, old_props: Mapping[str, Any], new_props: Mapping[str, Any]
) -> list[Step]:
    """The one ``networks`` step of an update, or none when nothing is to do."""
    nets = ServerNetworks(ctx)
    api: ComputeApi = ctx.client("compute")
    old, new = entries(old_props.get("networks")), entries(new_props.get("networks"))
    server_id = str(ctx.physical_id)
    interfaces = api.list_server_interfaces(server_id)
    remaining = list(new)
    kept: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    port_updates: list[dict[str, Any]] = []
    for entry in old:
        if entry in remaining:
            remaining.remove(entry)
            kept.append(entry)
            continue
        internal = nets.internal_port_for(entry) if needs_internal_port(entry) else None
        twin = next((n for n in remaining if _without_extra(n) == _without_extra(entry)), None)
        if internal and twin is not None and _only_updatable_changes(entry, twin):
            remaining.remove(twin)
            port_updates.append({"id": internal, "old": entry, "new": twin})
            continue
        removed.append(entry)
    detach: list[str] = []
    delete: list[str] = []
    claimed = {p for e in kept for p in _entry_ports(nets, e, interfaces, set())}
    if not old or any(e.get("allocate_network") for e in old):
        detach = [i.port_id for i in interfaces if i.port_id not in claimed]
    else:
        for entry in removed:
            ports = _entry_ports(nets, entry, interfaces, claimed | set(detach))
            detach.extend(ports)
            if needs_internal_port(entry):
                delete.extend(ports)
    attach = [{"entry": e, "index": new.index(e)} for e in remaining]
    if not new and old and not any(e.get("allocate_network") for e in old):
        attach = [{"entry": {"allocate_network": "auto"}, "index": 0}]
    if not (detach or attach or port_updates):
        return []
    return [
        {
            "kind": "networks",
            "stage": "call",
            "detach": detach,
            "delete": delete,
            "port_updates": port_updates,
            "attach": attach,
            "attached": [],
            "floating_ips": [],
            "security_groups": list(new_props.get("security_groups") or []),
        }
    ]


def _entry_ports(
    nets: ServerNetworks, entry: Mapping[str, Any], interfaces: list[Any], taken: set[str]
) -> list[str]:
    """The ports of the server that belong to an (old) entry."""
    if entry.get("port"):
        try:
            return [nets.network.find_port(entry["port"]).id]
        except NotFound:
            return []
    if needs_internal_port(entry):
        found = nets.internal_port_for(entry)
        return [found] if found else []
    if not entry.get("network"):
        return []
    network_id = nets.network_id(entry["network"])
    for interface in interfaces:
        ips = {ip.get("ip_address") for ip in interface.fixed_ips}
        if interface.port_id in taken or interface.net_id != network_id:
            continue
        if not entry.get("fixed_ip") or entry["fixed_ip"] in ips:
            return [interface.port_id]
    return []


def run_network_step(ctx: ResourceContext, api: ComputeApi, server_id: str, step: Step) -> bool:
    """Advance the ``networks`` step; True when done."""
    nets = ServerNetworks(ctx)
    if step["stage"] == "call":
        for update in step["port_updates"]:
            nets.update_internal_port(update["id"], update["new"].get("port_extra_properties"))
            _replace_internal_entry(nets, update["id"], update["new"])
        for port_id in step["detach"]:
            try:
                api.delete_server_interface(server_id, port_id)
            except NotFound:
                pass
        step["stage"] = "detaching"
    if step["stage"] == "detaching":
        if not _all_detached(nets, api, server_id, step["detach"]):
            return False
        for port_id in step["delete"]:
            nets.delete_internal_port(port_id)
        step["stage"] = "attach"
    if step["stage"] == "attach":
        for item in step["attach"]:
            _attach(nets, api, server_id, item, step)
        step["stage"] = "attaching"
    if not _all_attached(nets, api, server_id, step["attached"]):
        return False
    for fip in step["floating_ips"]:
        nets.associate_floating_ip(fip["floating_ip"], fip["port"], fip.get("fixed_ip"))
    step["floating_ips"] = []
    return True


def _replace_internal_entry(nets: ServerNetworks, port_id: str, entry: Mapping[str, Any]) -> None:
    ports = nets.internal_ports()
    for port in ports:
        if port["id"] == port_id:
            port["entry"] = dict(entry)
    nets.ctx.data_set("internal_ports", ports)


def _attach(nets: ServerNetworks, api: ComputeApi, server_id: str, item: Step, step: Step) -> None:
    entry = item["entry"]
    body: dict[str, Any] = {}
    if entry.get("port"):
        body["port_id"] = nets.network.find_port(entry["port"]).id
    elif needs_internal_port(entry):
        body["port_id"] = nets.internal_port_for(entry) or nets.create_internal_port(
            entry, item["index"], step["security_groups"]
        )
    elif entry.get("network"):
        body["net_id"] = nets.network_id(entry["network"])
        if entry.get("fixed_ip"):
            body["fixed_ips"] = [{"ip_address": entry["fixed_ip"]}]
    elif entry.get("allocate_network") == "auto":
        network_id = _automatic_network(nets)
        if network_id is None:
            return
        body["net_id"] = network_id
    else:
        return  # allocate_network none: no interface
    if entry.get("tag"):
        body["tag"] = entry["tag"]
    attached = api.create_server_interface(server_id, body)
    step["attached"].append(attached.port_id)
    if entry.get("floating_ip"):
        step["floating_ips"].append(
            {
                "floating_ip": entry["floating_ip"],
                "port": attached.port_id,
                "fixed_ip": entry.get("fixed_ip"),
            }
        )


def _automatic_network(nets: ServerNetworks) -> str | None:
    """The network Nova's ``auto`` picks: the only non-external one the project sees."""
    candidates = [n for n in nets.network.list_networks() if not n.is_external]
    return candidates[0].id if len(candidates) == 1 else None


def _all_detached(nets: ServerNetworks, api: ComputeApi, server_id: str, ports: list[str]) -> bool:
    if not ports:
        return True
    server = fetch(api, server_id)
    if server is None:
        return False
    _, macs = _server_ips(server.addresses)
    for port_id in ports:
        try:
            port = nets.network.get_port(port_id)
        except NotFound:
            continue
        if port.device_id == server_id or (port.mac_address and port.mac_address in macs):
            return False
    return True


def _all_attached(nets: ServerNetworks, api: ComputeApi, server_id: str, ports: list[str]) -> bool:
    if not ports:
        return True
    server = fetch(api, server_id)
    if server is None:
        return False
    ips, _ = _server_ips(server.addresses)
    for port_id in ports:
        wanted = {ip.get("ip_address") for ip in nets.network.get_port(port_id).fixed_ips}
        if not wanted <= ips:
            return False
    return True
