"""What a new server is built from: its image, its NICs (Neutron ports) and block devices.

Called while creating a server, under the store lock. Every side effect on another
service is recorded in an undo list, so a request that fails half-way (a taken fixed IP,
a port still in use, an unknown volume) leaves no stray port or volume behind.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, CloudError, Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import validation
from kiln.cloud.sandbox.compute.base import ComputeBase, Version, at_least

Undo = list[Callable[[], None]]
DEVICE_OWNER = "compute:nova"
ROOT_DEVICE = "/dev/vda"


def next_device(used: set[str], wanted: str | None = None) -> str:
    """``wanted`` (``vdb`` or ``/dev/vdb``) when free, else the next free ``/dev/vdX``."""
    if wanted:
        device = wanted if wanted.startswith("/dev/") else f"/dev/{wanted}"
        if device not in used:
            return device
    for letter in "bcdefghijklmnopqrstuvwxyz":
        if f"/dev/vd{letter}" not in used:
            return f"/dev/vd{letter}"
    raise BadRequest("No free device name is left on this server.")


def cinder_attachment_id(volume: Mapping[str, Any], server_id: str) -> str | None:
    """The Cinder attachment of ``server_id`` on ``volume`` (as Cinder shows attachments)."""
    if volume.get("attachment_id"):
        return str(volume["attachment_id"])
    for attachment in volume.get("attachments") or []:
        if attachment.get("server_id") == server_id:
            found = attachment.get("attachment_id") or attachment.get("id")
            return str(found) if found else None
    return None


def _legacy_mappings(entries: list[Any]) -> list[dict[str, Any]]:
    """``block_device_mapping`` (v1) entries as v2 entries."""
    mapped = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise validation.invalid("block_device_mapping")
        source = "snapshot" if entry.get("snapshot_id") else "volume"
        device = str(entry.get("device_name") or "")
        mapped.append(
            {
                "source_type": source,
                "destination_type": "volume",
                "uuid": entry.get("snapshot_id") or entry.get("volume_id"),
                "volume_size": entry.get("volume_size"),
                "delete_on_termination": entry.get("delete_on_termination", False),
                "device_name": device or None,
                "boot_index": 0 if device in ("vda", ROOT_DEVICE) else None,
            }
        )
    return mapped


def block_device_mappings(body: Mapping[str, Any], version: Version) -> list[dict[str, Any]]:
    """The request's block devices, normalized to v2 entries with defaults."""
    raw_v2, raw_v1 = body.get("block_device_mapping_v2"), body.get("block_device_mapping")
    if raw_v2 is not None and raw_v1 is not None:
        raise BadRequest("Using different block_device_mapping syntaxes is not allowed.")
    if raw_v1 is not None:
        if not isinstance(raw_v1, list):
            raise validation.invalid("block_device_mapping")
        entries = _legacy_mappings(raw_v1)
    else:
        if raw_v2 is not None and not isinstance(raw_v2, list):
            raise validation.invalid("block_device_mapping_v2")
        entries = [dict(e) if isinstance(e, Mapping) else {} for e in raw_v2 or []]
    for entry in entries:
        source = entry.get("source_type") or "blank"
        if source not in ("image", "volume", "snapshot", "blank"):
            raise validation.invalid("source_type", str(source))
        default_destination = "volume" if source in ("volume", "snapshot") else "local"
        destination = entry.get("destination_type") or default_destination
        if destination not in ("volume", "local"):
            raise validation.invalid("destination_type", str(destination))
        boot_index = entry.get("boot_index")
        if boot_index in ("none", "None", "", -1, "-1"):
            boot_index = None
        if entry.get("volume_type") is not None and not at_least(version, "2.67"):
            raise BadRequest("Block device mapping volume_type needs microversion 2.67.")
        entry.update(
            source_type=source,
            destination_type=destination,
            boot_index=int(boot_index) if boot_index is not None else None,
            delete_on_termination=validation.boolean(
                entry.get("delete_on_termination", False), "delete_on_termination"
            ),
        )
        if source != "blank" and not entry.get("uuid"):
            raise BadRequest(f"Block Device Mapping is Invalid: {source} source needs a uuid.")
    if sum(1 for e in entries if e["boot_index"] == 0) > 1:
        raise BadRequest("Block Device Mapping is Invalid: more than one boot device.")
    return entries


class BootOps(ComputeBase):
    """The build side effects of a server create."""

    # -- image ---------------------------------------------------------------------------
    def boot_image(
        self, scope: CloudScope, image_ref: str, flavor: Mapping[str, Any], *, local_root: bool
    ) -> dict[str, Any] | None:
        """The active image ``image_ref`` names (400 otherwise); None without an image service."""
        glance = self.service("image")
        if glance is None:
            return None
        try:
            image: dict[str, Any] = glance.get_image_internal(scope.project_id, image_ref)
        except NotFound:
            raise BadRequest(f"Image {image_ref} could not be found.") from None
        if image.get("status") != "active":
            raise BadRequest(f"Image {image_ref} is not active.")
        if int(image.get("min_ram") or 0) > flavor["ram"]:
            raise BadRequest("Flavor's memory is too small for requested image.")
        if local_root and flavor["disk"] and int(image.get("min_disk") or 0) > flavor["disk"]:
            raise BadRequest("Flavor's disk is too small for requested image.")
        return image

    # -- networks ------------------------------------------------------------------------
    def plug_networks(
        self,
        scope: CloudScope,
        server: dict[str, Any],
        networks: Any,
        security_groups: list[str],
        undo: Undo,
    ) -> None:
        """Create or bind the server's ports (``networks`` is a list, ``auto`` or ``none``)."""
        if networks == "none" or networks == []:
            return
        neutron = self.service("network")
        if neutron is None:
            raise BadRequest("Networking is not available in this cloud.")
        group_ids: list[str] | None = None
        if security_groups:
            try:
                group_ids = neutron.security_group_ids_internal(scope.project_id, security_groups)
            except NotFound as exc:
                raise BadRequest(str(exc)) from None
        if networks == "auto" or networks is None:
            try:
                network = neutron.auto_network_internal(scope.project_id)
            except NotFound:
                if networks is None:  # before 2.37 an omitted list may mean no NIC
                    return
                raise BadRequest(
                    f"Unable to automatically allocate a network for project {scope.project_id}"
                ) from None
            networks = [{"uuid": network["id"]}]
        for entry in networks:
            if entry.get("port"):
                self.bind_existing_port(server, entry["port"], undo)
            else:
                self.create_nic(
                    scope, server, entry["uuid"], entry.get("fixed_ip"), group_ids, undo
                )
            if entry.get("tag"):
                port_id = entry.get("port") or server["_created_ports"][-1]
                server["_port_tags"][port_id] = entry["tag"]

    def bind_existing_port(
        self,
        server: dict[str, Any],
        port_id: str,
        undo: Undo,
        *,
        missing: type[CloudError] = BadRequest,
    ) -> None:
        """Bind a port the user made to the server. Nova refuses a port that already has a
        device (409 ``PortInUse``, even this server); a missing port is ``missing`` (400 on
        boot, 404 on interface attach)."""
        neutron = self.cloud.network
        try:
            port = neutron.get_port_internal(port_id)
        except NotFound:
            raise missing(f"Port id {port_id} could not be found.") from None
        if port.get("device_id"):
            raise Conflict(f"Port {port_id} is still in use.")
        neutron.bind_port(port_id, server["id"], DEVICE_OWNER)
        undo.append(lambda: neutron.unbind_port(port_id))

    def create_nic(
        self,
        scope: CloudScope,
        server: dict[str, Any],
        network_id: str,
        fixed_ip: str | None,
        group_ids: list[str] | None,
        undo: Undo,
    ) -> str:
        """A new port on ``network_id`` bound to the server; its id."""
        neutron = self.cloud.network
        try:
            network = neutron.get_network_internal(network_id)
        except NotFound:
            raise BadRequest(f"Network {network_id} could not be found.") from None
        body: dict[str, Any] = {"network_id": network["id"], "name": ""}
        if fixed_ip:
            body["fixed_ips"] = [{"ip_address": fixed_ip}]
        if group_ids is not None:
            body["security_groups"] = group_ids
        port = neutron.create_port_internal(scope.project_id, body)
        undo.append(lambda: neutron.delete_port_internal(port["id"]))
        neutron.bind_port(port["id"], server["id"], DEVICE_OWNER)
        server["_created_ports"].append(port["id"])
        return str(port["id"])

    # -- block devices -------------------------------------------------------------------
    def plan_volumes(
        self,
        scope: CloudScope,
        server: dict[str, Any],
        mappings: list[dict[str, Any]],
        flavor: Mapping[str, Any],
        undo: Undo,
    ) -> None:
        """Attach existing volumes now; create volumes from images/snapshots/blank.

        Created volumes are attached when the build ends (hook ``compute.server.built``):
        Cinder may still be creating them.
        """
        volumed = [m for m in mappings if m["destination_type"] == "volume"]
        if not volumed:
            return
        cinder = self.service("block_storage")
        if cinder is None:
            raise BadRequest("Block storage is not available in this cloud.")
        used = {ROOT_DEVICE} if not any(m["boot_index"] == 0 for m in volumed) else set()
        for mapping in sorted(volumed, key=lambda m: (m["boot_index"] is None, m["boot_index"])):
            if mapping["boot_index"] == 0:
                device = ROOT_DEVICE
            else:
                device = next_device(used, mapping.get("device_name"))
            used.add(device)
            record = {
                "volume_id": "",
                "device": device,
                "delete_on_termination": mapping["delete_on_termination"],
                "boot_index": mapping["boot_index"],
                "tag": mapping.get("tag"),
                "attachment_id": None,
                "bdm_uuid": self.cloud.new_id(),
                "pending": False,
            }
            if mapping["source_type"] == "volume":
                record["volume_id"] = mapping["uuid"]
                self._attach_existing(server, record, undo)
            else:
                record["volume_id"] = self._new_volume(scope, mapping, flavor, undo)
                record["pending"] = True
            server["_volumes"].append(record)

    def _attach_existing(self, server: dict[str, Any], record: dict[str, Any], undo: Undo) -> None:
        cinder = self.cloud.block_storage
        volume_id = record["volume_id"]
        try:
            volume = cinder.get_volume_internal(volume_id)
        except NotFound:
            raise BadRequest(f"Volume {volume_id} could not be found.") from None
        if volume.get("status") != "available":
            raise BadRequest(
                f"Invalid volume: volume {volume_id} status must be 'available', "
                f"not '{volume.get('status')}'"
            )
        attached = cinder.attach_volume(volume_id, server["id"], record["device"])
        undo.append(lambda: cinder.detach_volume(volume_id, server["id"]))
        record["attachment_id"] = cinder_attachment_id(attached, server["id"])

    def _new_volume(
        self, scope: CloudScope, mapping: Mapping[str, Any], flavor: Mapping[str, Any], undo: Undo
    ) -> str:
        cinder = self.cloud.block_storage
        body: dict[str, Any] = {"name": ""}
        size = mapping.get("volume_size")
        source = mapping["source_type"]
        if source == "image":
            image = self.boot_image(scope, mapping["uuid"], flavor, local_root=False)
            body["imageRef"] = image["id"] if image else mapping["uuid"]
            if not size:
                byte_size = int((image or {}).get("size") or 0)
                size = max(
                    1,
                    int((image or {}).get("min_disk") or 0),
                    math.ceil(byte_size / 1024**3),
                )
        elif source == "snapshot":
            body["snapshot_id"] = mapping["uuid"]
        elif not size:
            raise BadRequest("Block Device Mapping is Invalid: a blank volume needs a size.")
        if size:
            body["size"] = int(size)
        if mapping.get("volume_type"):
            body["volume_type"] = mapping["volume_type"]
        try:
            volume = cinder.create_volume_internal(scope.project_id, body)
        except NotFound as exc:
            raise BadRequest(str(exc)) from None
        undo.append(lambda: cinder.delete_volume_internal(volume["id"]))
        return str(volume["id"])

    def attach_pending_volumes(self, server: dict[str, Any]) -> str | None:
        """Attach the volumes the build created; the error message when one cannot be."""
        cinder = self.service("block_storage")
        for record in server["_volumes"]:
            if not record["pending"] or cinder is None:
                continue
            try:
                attached = cinder.attach_volume(record["volume_id"], server["id"], record["device"])
            except CloudError as exc:
                return (
                    f"Build of instance {server['id']} aborted: volume "
                    f"{record['volume_id']} did not become available ({exc})"
                )
            record["pending"] = False
            record["attachment_id"] = cinder_attachment_id(attached, server["id"])
        return None
