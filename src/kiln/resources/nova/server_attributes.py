"""The attributes of an OS::Nova::Server, read from the live server and its ports.

``networks`` maps each network's name and id to the server's IPs on it (from
the server's ``addresses``); ``addresses`` gives, per network name and id, one
entry per IP built from the Neutron ports of the server (with the port, its
subnets and network) plus their floating IPs. ``console_urls`` asks Nova for
each console type and reports the reason when one is not available.
Imports: kiln.cloud.api and the sibling modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kiln.cloud.api.compute import ComputeApi, Server
from kiln.cloud.api.errors import CloudError
from kiln.cloud.api.network import NetworkApi
from kiln.resources.nova.server_tags import user_tags

CONSOLE_TYPES = ("novnc", "xvpvnc", "spice-html5", "rdp-html5", "serial", "webmks")


def networks_attribute(server: Server, network: NetworkApi) -> dict[str, list[str]]:
    """Network name and id -> the server's IP addresses on it."""
    out: dict[str, list[str]] = {}
    for name, addresses in server.addresses.items():
        ips = [str(a.get("addr")) for a in addresses]
        out[name] = ips
        try:
            found = network.find_network(name)
        except CloudError:
            continue  # a name that is not unique (or gone) keeps only its name key
        out[found.id] = ips
    return out


def first_address(server: Server) -> str:
    for addresses in server.addresses.values():
        for address in addresses:
            if address.get("addr"):
                return str(address["addr"])
    return ""


def addresses_attribute(server: Server, network: NetworkApi) -> dict[str, list[dict[str, Any]]]:
    """Per network name and id: the server's addresses with their port details."""
    out: dict[str, list[dict[str, Any]]] = {}
    for port in network.list_ports(device_id=server.id):
        net = network.get_network(port.network_id)
        floating = network.list_floating_ips(port_id=port.id)
        items = []
        for fixed in port.fixed_ips:
            ip = str(fixed.get("ip_address"))
            version = 6 if ":" in ip else 4
            common = {
                "version": version,
                "OS-EXT-IPS-MAC:mac_addr": port.mac_address,
                "port": port.id,
                "subnets": [{"id": fixed.get("subnet_id")}],
                "network": net.show(),
            }
            items.append({"addr": ip, "OS-EXT-IPS:type": "fixed", **common})
            for fip in floating:
                if fip.fixed_ip_address in (None, ip):
                    items.append(
                        {"addr": fip.floating_ip_address, "OS-EXT-IPS:type": "floating", **common}
                    )
        for key in dict.fromkeys((net.name or net.id, net.id)):
            out.setdefault(key, []).extend(items)
    return out


def console_urls(api: ComputeApi, server_id: str) -> dict[str, str]:
    """Console type -> URL (or the reason the console is not available)."""
    urls = {}
    for console_type in CONSOLE_TYPES:
        try:
            urls[console_type] = str(api.get_server_console_url(server_id, console_type)["url"])
        except CloudError as exc:
            urls[console_type] = str(exc)
    return urls


def server_attribute(name: str, server: Server, api: ComputeApi, network: NetworkApi) -> Any:
    """One cloud-backed attribute of a live server."""
    readers: dict[str, Callable[[], Any]] = {
        "name": lambda: server.name,
        "addresses": lambda: addresses_attribute(server, network),
        "networks": lambda: networks_attribute(server, network),
        "first_address": lambda: first_address(server),
        "instance_name": lambda: server.instance_name,
        "accessIPv4": lambda: server.raw.get("accessIPv4") or "",
        "accessIPv6": lambda: server.raw.get("accessIPv6") or "",
        "console_urls": lambda: console_urls(api, server.id),
        "tags": lambda: user_tags(server.tags) or None,
    }
    return readers[name]()
