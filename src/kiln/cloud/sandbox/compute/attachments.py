"""Ports and volumes attached to a running server (``os-interface``, ``os-volume_attachments``).

Interfaces live in Neutron (ports whose ``device_id`` is the server); Nova only remembers
which ports it created (deleted on detach) and their tags. Volume attachments are the
server's ``_volumes`` records, mirrored by Cinder's volume ``attachments``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import states, validation
from kiln.cloud.sandbox.compute.base import SERVER, SERVICE
from kiln.cloud.sandbox.compute.boot import ROOT_DEVICE, Undo, cinder_attachment_id, next_device
from kiln.cloud.sandbox.compute.servers import ServerOps

_PLUGGABLE = ("active", "stopped", "paused")
_ATTACHABLE = ("active", "stopped", "paused", "suspended", "resized")


def interface_of(port: Mapping[str, Any], tags: Mapping[str, str]) -> dict[str, Any]:
    """A Neutron port as Nova's ``interfaceAttachment``."""
    return {
        "port_id": port["id"],
        "net_id": port.get("network_id"),
        "mac_addr": port.get("mac_address"),
        "port_state": port.get("status"),
        "fixed_ips": [
            {"subnet_id": ip.get("subnet_id"), "ip_address": ip.get("ip_address")}
            for ip in port.get("fixed_ips") or []
        ],
        "tag": tags.get(port["id"]),
    }


class AttachmentOps(ServerOps):
    """Interface and volume attachment operations of the compute model."""

    def _neutron(self) -> Any:
        neutron = self.service("network")
        if neutron is None:
            raise BadRequest("Networking is not available in this cloud.")
        return neutron

    # -- interfaces ----------------------------------------------------------------------
    def list_interfaces(self, scope: CloudScope, server_id: str) -> list[dict[str, Any]]:
        self.sim.enter(scope, SERVICE, "list_server_interfaces", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            neutron = self.service("network")
            ports = neutron.ports_of_device(server_id) if neutron is not None else []
            return [interface_of(p, server["_port_tags"]) for p in ports]

    def get_interface(self, scope: CloudScope, server_id: str, port_id: str) -> dict[str, Any]:
        for interface in self.list_interfaces(scope, server_id):
            if interface["port_id"] == port_id:
                return interface
        raise NotFound(
            f"Port {port_id} is not attached to instance {server_id}", kind="itemNotFound"
        )

    def attach_interface(
        self, scope: CloudScope, server_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Bind ``port_id`` or create a port on ``net_id`` (with ``fixed_ips``) for the server."""
        self.sim.enter(scope, SERVICE, "create_server_interface", server_id)
        port_id, net_id = body.get("port_id"), body.get("net_id")
        if bool(port_id) == bool(net_id):
            raise BadRequest("Specify exactly one of port_id and net_id.")
        fixed_ips = body.get("fixed_ips") or []
        if port_id and fixed_ips:
            raise BadRequest("fixed_ips cannot be given with port_id.")
        fixed_ip = None
        if fixed_ips:
            if not isinstance(fixed_ips, list) or len(fixed_ips) != 1:
                raise validation.invalid("fixed_ips", "one address at most")
            fixed_ip = validation.ip_address(fixed_ips[0].get("ip_address"), "ip_address")
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "attach_interface", _PLUGGABLE)
            neutron = self._neutron()
            undo: Undo = []
            if port_id:
                self.bind_existing_port(server, str(port_id), undo, missing=NotFound)
            else:
                port_id = self.create_nic(scope, server, str(net_id), fixed_ip, None, undo)
            if body.get("tag"):
                server["_port_tags"][port_id] = str(body["tag"])
            server["updated"] = self.cloud.timestamp()
            self.store.put(SERVER, server)
            ports = [p for p in neutron.ports_of_device(server_id) if p["id"] == port_id]
            if not ports:
                raise NotFound(f"Port {port_id} could not be found.", kind="itemNotFound")
            return interface_of(ports[0], server["_port_tags"])

    def detach_interface(self, scope: CloudScope, server_id: str, port_id: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_server_interface", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "detach_interface", _PLUGGABLE)
            neutron = self._neutron()
            if port_id not in {p["id"] for p in neutron.ports_of_device(server_id)}:
                raise NotFound(
                    f"Port {port_id} is not attached to instance {server_id}",
                    kind="itemNotFound",
                )
            if port_id in server["_created_ports"]:
                neutron.delete_port_internal(port_id)
                server["_created_ports"].remove(port_id)
            else:
                neutron.unbind_port(port_id)
            server["_port_tags"].pop(port_id, None)
            server["updated"] = self.cloud.timestamp()
            self.store.put(SERVER, server)

    # -- volumes ---------------------------------------------------------------------------
    def list_volume_attachments(self, scope: CloudScope, server_id: str) -> list[dict[str, Any]]:
        self.sim.enter(scope, SERVICE, "list_volume_attachments", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            return [r for r in server["_volumes"] if not r["pending"]]

    def get_volume_attachment(
        self, scope: CloudScope, server_id: str, volume_id: str
    ) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "get_volume_attachment", server_id)
        with self.store.lock:
            return self._attachment(self.server_doc(scope, server_id), volume_id)

    @staticmethod
    def _attachment(server: Mapping[str, Any], volume_id: str) -> dict[str, Any]:
        for record in server["_volumes"]:
            if record["volume_id"] == volume_id and not record["pending"]:
                return dict(record)
        raise NotFound(
            f"Volume {volume_id} is not attached to instance {server['id']}",
            kind="itemNotFound",
        )

    def attach_volume(
        self, scope: CloudScope, server_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Attach ``volumeId`` (which must be available) at ``device`` or the next free one."""
        self.sim.enter(scope, SERVICE, "create_volume_attachment", server_id)
        volume_id = body.get("volumeId")
        if not isinstance(volume_id, str) or not volume_id:
            raise validation.invalid("volumeId")
        cinder = self.service("block_storage")
        if cinder is None:
            raise BadRequest("Block storage is not available in this cloud.")
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            states.require(server, "attach_volume", _ATTACHABLE)
            try:
                cinder.get_volume_internal(volume_id)
            except NotFound:
                raise NotFound(f"Volume {volume_id} could not be found.") from None
            if any(r["volume_id"] == volume_id for r in server["_volumes"]):
                raise BadRequest(f"Volume {volume_id} is already attached to {server_id}.")
            used = {r["device"] for r in server["_volumes"]} | {ROOT_DEVICE}
            device = next_device(used, body.get("device"))
            attached = cinder.attach_volume(volume_id, server_id, device)
            record = {
                "volume_id": volume_id,
                "device": device,
                "delete_on_termination": validation.boolean(
                    body.get("delete_on_termination", False), "delete_on_termination"
                ),
                "boot_index": None,
                "tag": body.get("tag"),
                "attachment_id": cinder_attachment_id(attached, server_id),
                "bdm_uuid": self.cloud.new_id(),
                "pending": False,
            }
            server["_volumes"].append(record)
            self.store.put(SERVER, server)
            return dict(record)

    def detach_volume(self, scope: CloudScope, server_id: str, volume_id: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_volume_attachment", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            record = self._attachment(server, volume_id)
            if record["boot_index"] == 0:
                raise BadRequest("Cannot detach a root device volume")
            states.require(server, "detach_volume", _ATTACHABLE)
            cinder = self.service("block_storage")
            if cinder is not None:
                cinder.detach_volume(volume_id, server_id)
            server["_volumes"] = [r for r in server["_volumes"] if r["volume_id"] != volume_id]
            self.store.put(SERVER, server)
