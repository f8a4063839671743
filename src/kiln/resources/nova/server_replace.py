"""An OS::Nova::Server being replaced, rolled back to, or restored from a stack snapshot.

``prepare_for_replace`` (reference resource-types.md, OS::Nova::Server): unless the
old server is in ERROR, every port it has (the plugin's internal ports, the user's
ports, the ones Nova made) is detached, so that the replacement can take them;
what was detached is kept in the resource data. A server in ERROR cannot let go of
its ports: its internal ports are deleted instead.

``restore_prev_rsrc`` (going back to the old server): the replacement lets go of
those ports (detached; a replacement in ERROR cannot detach, so the port is unbound
in Neutron) and of the addresses of ports Nova deleted on detach, then the old
server takes them again: a port that still exists by its id, a port Nova made by
its network and address. Both wait on the ports' bindings, as the in-place
``networks`` update does, and may run again after a crash.

``properties_from_snapshot``: a restored server is rebuilt from the image its stack
snapshot made (``snapshot_image_id``).

Functions of the plugin's context; ``Server`` calls them from its hooks.
Imports: kiln.plugin, kiln.cloud.api and the sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.compute import ComputeApi, InterfaceAttachment
from kiln.cloud.api.errors import Conflict, NotFound
from kiln.cloud.api.network import NetworkApi
from kiln.plugin.context import ResourceContext
from kiln.plugin.resource import Cookie
from kiln.resources.nova._compute import compute
from kiln.resources.nova.server_networks import ServerNetworks, network_client
from kiln.resources.nova.server_status import fetch

#: data: the ports taken off the server for its replacement,
#: ``[{"id", "network_id", "fixed_ips", "tag"}]``
REPLACED_PORTS = "replaced_ports"
#: data key of the image a stack snapshot made of the server (Server.handle_snapshot)
SNAPSHOT_IMAGE = "snapshot_image_id"


# -- prepare_for_replace -------------------------------------------------------------------
def prepare_server_for_replace(ctx: ResourceContext) -> Cookie:
    """Record the ports to detach (once: a repeated prepare keeps the first record)."""
    server_id = ctx.physical_id
    if not server_id:
        return None
    api = compute(ctx)
    try:
        server = api.get_server(server_id)
    except NotFound:
        return None
    if server.status == "ERROR":
        return {"stage": "delete_internal"}
    if ctx.data_get(REPLACED_PORTS) is None:
        ports = [_port_record(i) for i in api.list_server_interfaces(server_id)]
        ctx.data_set(REPLACED_PORTS, ports)
    return {"stage": "detach", "server": server_id}


def check_server_prepared(ctx: ResourceContext, cookie: Cookie) -> bool:
    """Detach the recorded ports; True once none is bound to the server any more."""
    if cookie is None:
        return True
    if cookie["stage"] == "delete_internal":
        ServerNetworks(ctx).delete_internal_ports()
        return True
    api, server_id = compute(ctx), str(cookie["server"])
    ports = [str(p["id"]) for p in ctx.data_get(REPLACED_PORTS) or []]
    if cookie["stage"] == "detach":
        for port_id in ports:
            try:
                api.delete_server_interface(server_id, port_id)
            except NotFound:
                pass  # detached already (a repeated step), or gone
        cookie["stage"] = "detaching"
    return not _bound(network_client(ctx), ports, server_id)


# -- restore_prev_rsrc ---------------------------------------------------------------------
def restore_server_ports(ctx: ResourceContext, replacement_id: str | None) -> Cookie:
    if not ctx.physical_id or ctx.data_get(REPLACED_PORTS) is None:
        return None
    return {"stage": "release", "replacement": replacement_id, "released": [], "attached": []}


def check_server_restored(ctx: ResourceContext, cookie: Cookie) -> bool:
    """Take the ports back from the replacement, attach them again, wait for them."""
    if cookie is None:
        return True
    api, network = compute(ctx), network_client(ctx)
    server_id = str(ctx.physical_id)
    saved: list[dict[str, Any]] = list(ctx.data_get(REPLACED_PORTS) or [])
    replacement = cookie["replacement"]
    if cookie["stage"] == "release":
        if replacement:
            cookie["released"] = _release(api, network, str(replacement), saved)
        cookie["stage"] = "releasing"
    if cookie["stage"] == "releasing":
        if replacement and _bound(network, cookie["released"], str(replacement)):
            return False
        cookie["stage"] = "attach"
    if cookie["stage"] == "attach":
        cookie["attached"] = [_attach_again(api, network, server_id, p) for p in saved]
        cookie["stage"] = "attaching"
    if not _shown(api, network, server_id, cookie["attached"]):
        return False
    ServerNetworks(ctx).record_external_ports(api, server_id)
    ctx.data_delete(REPLACED_PORTS)
    return True


def _release(
    api: ComputeApi, network: NetworkApi, replacement: str, saved: list[dict[str, Any]]
) -> list[str]:
    """Have the replacement let go of the saved ports (or their addresses); the ids of
    the ports it is letting go of."""
    try:
        interfaces = api.list_server_interfaces(replacement)
    except NotFound:
        return []
    ids = {str(p["id"]) for p in saved}
    addresses = {(p["network_id"], ip.get("ip_address")) for p in saved for ip in p["fixed_ips"]}
    released = []
    for interface in interfaces:
        port_id = interface.port_id
        holds = port_id in ids or any(
            (interface.net_id, ip.get("ip_address")) in addresses for ip in interface.fixed_ips
        )
        if not holds:
            continue
        try:
            api.delete_server_interface(replacement, port_id)
        except NotFound:
            continue
        except Conflict:  # a server in ERROR cannot detach: unbind our own port in Neutron
            if port_id not in ids:
                continue  # the replacement's own port: the attach below says why it fails
            network.update_port(port_id, {"device_id": "", "device_owner": ""})
        released.append(port_id)
    return released


def _attach_again(
    api: ComputeApi, network: NetworkApi, server_id: str, saved: Mapping[str, Any]
) -> str:
    """Attach a saved port to the server again (unless it already is); its port id."""
    body: dict[str, Any] = {}
    try:
        port = network.get_port(str(saved["id"]))
    except NotFound:  # Nova deleted the port it had made: a new one, same network and address
        for interface in api.list_server_interfaces(server_id):
            if interface.net_id == saved["network_id"] and _same_addresses(interface, saved):
                return interface.port_id
        body["net_id"] = saved["network_id"]
        if saved["fixed_ips"]:
            body["fixed_ips"] = [{"ip_address": saved["fixed_ips"][0]["ip_address"]}]
    else:
        if port.device_id == server_id:
            return port.id
        body["port_id"] = port.id
    if saved.get("tag"):
        body["tag"] = saved["tag"]
    return api.create_server_interface(server_id, body).port_id


def _same_addresses(interface: InterfaceAttachment, saved: Mapping[str, Any]) -> bool:
    wanted = {ip.get("ip_address") for ip in saved["fixed_ips"]}
    return wanted <= {ip.get("ip_address") for ip in interface.fixed_ips}


def _shown(api: ComputeApi, network: NetworkApi, server_id: str, ports: list[str]) -> bool:
    """Whether the server shows every address of those ports."""
    if not ports:
        return True
    server = fetch(api, server_id)
    if server is None:
        return False
    shown = {str(a.get("addr")) for addrs in server.addresses.values() for a in addrs}
    for port_id in ports:
        try:
            wanted = {str(ip.get("ip_address")) for ip in network.get_port(port_id).fixed_ips}
        except NotFound:
            return False
        if not wanted <= shown:
            return False
    return True


def _bound(network: NetworkApi, ports: list[str], server_id: str) -> bool:
    """Whether any of those ports (that still exist) is bound to the server."""
    for port_id in ports:
        try:
            if network.get_port(port_id).device_id == server_id:
                return True
        except NotFound:
            continue
    return False


def _port_record(interface: InterfaceAttachment) -> dict[str, Any]:
    return {
        "id": interface.port_id,
        "network_id": interface.net_id,
        "fixed_ips": [
            {"subnet_id": ip.get("subnet_id"), "ip_address": ip.get("ip_address")}
            for ip in interface.fixed_ips
        ],
        "tag": interface.raw.get("tag"),
    }


# -- stack snapshot restore ----------------------------------------------------------------
def server_properties_from_snapshot(
    properties: Mapping[str, Any], snapshot: Mapping[str, Any]
) -> dict[str, Any]:
    """The server is rebuilt from its snapshot image (an image change rebuilds by default).

    A server the template boots from a volume (no ``image``) keeps its properties.
    """
    out = dict(properties)
    image = (snapshot.get("resource_data") or {}).get(SNAPSHOT_IMAGE)
    if image and "image" in out:
        out["image"] = image
    return out
