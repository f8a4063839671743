"""The :class:`~kiln.cloud.api.compute.ComputeApi` of a real Nova (or the sandbox) over REST.

Paths are relative to openstacksdk's compute proxy (the catalog URL, ``…/compute/v2.1``).
Every call sends one microversion: the lower of the server's maximum (read once from the
version document) and 2.90, the last with server-side keypair generation, which Heat's
``OS::Nova::KeyPair`` needs when ``public_key`` is omitted.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kiln.cloud.api.compute import (
    Flavor,
    InterfaceAttachment,
    Keypair,
    Server,
    ServerGroup,
    VolumeAttachment,
    version_tuple,
)
from kiln.cloud.api.errors import CloudError, MultipleMatches, NotFound
from kiln.cloud.openstack.rest import RestClient

CLIENT_MAX = "2.90"
CONSOLE_PROTOCOLS = {
    "novnc": "vnc",
    "xvpvnc": "vnc",
    "spice-html5": "spice",
    "rdp-html5": "rdp",
    "serial": "serial",
    "webmks": "mks",
}


def _q(value: str) -> str:
    return quote(str(value), safe="")


def _one(matches: list[Any], name_or_id: str, what: str) -> Any:
    if len(matches) > 1:
        raise MultipleMatches(f"More than one {what} exists with the name '{name_or_id}'.")
    if not matches:
        raise NotFound(f"No {what} found for {name_or_id}", service="compute")
    return matches[0]


class OpenStackCompute:
    """Nova through a :class:`RestClient` over ``conn.compute``."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest
        self._version: str | None = None
        self._lock = threading.Lock()

    # -- plumbing ------------------------------------------------------------------------
    def microversion(self) -> str:
        with self._lock:
            if self._version is None:
                self._version = self._negotiate()
            return self._version

    def _negotiate(self) -> str:
        try:
            document = self.rest.get("/")
            server_max = str((document or {}).get("version", {}).get("version") or "2.1")
        except CloudError:
            return "2.1"
        return min(server_max, CLIENT_MAX, key=version_tuple)

    def _call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        query = {k: v for k, v in params.items() if v is not None}
        return self.rest.request(
            method, path, body=body, params=query or None, microversion=self.microversion()
        )

    def _action(self, server_id: str, action: str, args: Any = None) -> Any:
        return self._call("POST", f"/servers/{_q(server_id)}/action", {action: args})

    # -- servers ------------------------------------------------------------------------
    def create_server(
        self, body: Mapping[str, Any], scheduler_hints: Mapping[str, Any] | None = None
    ) -> Server:
        request: dict[str, Any] = {"server": dict(body)}
        if scheduler_hints:
            request["os:scheduler_hints"] = dict(scheduler_hints)
        created = self._call("POST", "/servers", request)["server"]
        return self.get_server(created["id"])

    def get_server(self, server_id: str) -> Server:
        return Server(self._call("GET", f"/servers/{_q(server_id)}")["server"])

    def find_server(self, name_or_id: str) -> Server:
        try:
            return self.get_server(name_or_id)
        except NotFound:
            pass
        named = [s for s in self.list_servers(name=name_or_id) if s.name == name_or_id]
        return _one(named, name_or_id, "server")  # type: ignore[no-any-return]

    def list_servers(self, **filters: Any) -> list[Server]:
        body = self._call("GET", "/servers/detail", **filters)
        return [Server(s) for s in body.get("servers", [])]

    def update_server(self, server_id: str, body: Mapping[str, Any]) -> Server:
        return Server(
            self._call("PUT", f"/servers/{_q(server_id)}", {"server": dict(body)})["server"]
        )

    def delete_server(self, server_id: str) -> None:
        self._call("DELETE", f"/servers/{_q(server_id)}")

    def force_delete_server(self, server_id: str) -> None:
        self._action(server_id, "forceDelete")

    def suspend_server(self, server_id: str) -> None:
        self._action(server_id, "suspend")

    def resume_server(self, server_id: str) -> None:
        self._action(server_id, "resume")

    def stop_server(self, server_id: str) -> None:
        self._action(server_id, "os-stop")

    def start_server(self, server_id: str) -> None:
        self._action(server_id, "os-start")

    def reboot_server(self, server_id: str, reboot_type: str = "SOFT") -> None:
        self._action(server_id, "reboot", {"type": reboot_type})

    def resize_server(self, server_id: str, flavor_ref: str) -> None:
        self._action(server_id, "resize", {"flavorRef": flavor_ref})

    def confirm_server_resize(self, server_id: str) -> None:
        self._action(server_id, "confirmResize")

    def revert_server_resize(self, server_id: str) -> None:
        self._action(server_id, "revertResize")

    def rebuild_server(self, server_id: str, body: Mapping[str, Any]) -> Server:
        answer = self._action(server_id, "rebuild", dict(body))
        if answer and "server" in answer:
            return Server(answer["server"])
        return self.get_server(server_id)

    def change_server_password(self, server_id: str, admin_pass: str) -> None:
        self._action(server_id, "changePassword", {"adminPass": admin_pass})

    def create_server_image(
        self, server_id: str, name: str, metadata: Mapping[str, str] | None = None
    ) -> str:
        args: dict[str, Any] = {"name": name}
        if metadata:
            args["metadata"] = dict(metadata)
        answer = self._action(server_id, "createImage", args)
        if answer and answer.get("image_id"):
            return str(answer["image_id"])
        # below 2.45 Nova puts the id only in a Location header, which RestClient drops
        raise CloudError("createImage answered without an image id (microversion < 2.45)")

    def get_server_console_url(self, server_id: str, console_type: str) -> dict[str, Any]:
        protocol = CONSOLE_PROTOCOLS.get(console_type, "vnc")
        body = {"remote_console": {"protocol": protocol, "type": console_type}}
        answer = self._call("POST", f"/servers/{_q(server_id)}/remote-consoles", body)
        return dict(answer["remote_console"])

    # -- metadata and tags --------------------------------------------------------------
    def get_server_metadata(self, server_id: str) -> dict[str, str]:
        return dict(self._call("GET", f"/servers/{_q(server_id)}/metadata")["metadata"])

    def set_server_metadata(self, server_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        body = {"metadata": dict(metadata)}
        return dict(self._call("POST", f"/servers/{_q(server_id)}/metadata", body)["metadata"])

    def replace_server_metadata(
        self, server_id: str, metadata: Mapping[str, str]
    ) -> dict[str, str]:
        body = {"metadata": dict(metadata)}
        return dict(self._call("PUT", f"/servers/{_q(server_id)}/metadata", body)["metadata"])

    def delete_server_metadata_item(self, server_id: str, key: str) -> None:
        self._call("DELETE", f"/servers/{_q(server_id)}/metadata/{_q(key)}")

    def get_server_tags(self, server_id: str) -> list[str]:
        return list(self._call("GET", f"/servers/{_q(server_id)}/tags")["tags"])

    def set_server_tags(self, server_id: str, tags: list[str]) -> list[str]:
        body = {"tags": list(tags)}
        return list(self._call("PUT", f"/servers/{_q(server_id)}/tags", body)["tags"])

    # -- interfaces and volume attachments ---------------------------------------------
    def list_server_interfaces(self, server_id: str) -> list[InterfaceAttachment]:
        body = self._call("GET", f"/servers/{_q(server_id)}/os-interface")
        return [InterfaceAttachment(i) for i in body.get("interfaceAttachments", [])]

    def create_server_interface(
        self, server_id: str, body: Mapping[str, Any]
    ) -> InterfaceAttachment:
        request = {"interfaceAttachment": dict(body)}
        answer = self._call("POST", f"/servers/{_q(server_id)}/os-interface", request)
        return InterfaceAttachment(answer["interfaceAttachment"])

    def delete_server_interface(self, server_id: str, port_id: str) -> None:
        self._call("DELETE", f"/servers/{_q(server_id)}/os-interface/{_q(port_id)}")

    def create_volume_attachment(
        self, server_id: str, volume_id: str, device: str | None = None
    ) -> VolumeAttachment:
        attachment: dict[str, Any] = {"volumeId": volume_id}
        if device:
            attachment["device"] = device
        answer = self._call(
            "POST",
            f"/servers/{_q(server_id)}/os-volume_attachments",
            {"volumeAttachment": attachment},
        )
        return VolumeAttachment(answer["volumeAttachment"])

    def get_volume_attachment(self, server_id: str, volume_id: str) -> VolumeAttachment:
        path = f"/servers/{_q(server_id)}/os-volume_attachments/{_q(volume_id)}"
        return VolumeAttachment(self._call("GET", path)["volumeAttachment"])

    def list_volume_attachments(self, server_id: str) -> list[VolumeAttachment]:
        body = self._call("GET", f"/servers/{_q(server_id)}/os-volume_attachments")
        return [VolumeAttachment(a) for a in body.get("volumeAttachments", [])]

    def delete_volume_attachment(self, server_id: str, volume_id: str) -> None:
        self._call("DELETE", f"/servers/{_q(server_id)}/os-volume_attachments/{_q(volume_id)}")

    # -- limits and zones ---------------------------------------------------------------
    def get_limits(self) -> dict[str, Any]:
        return dict(self._call("GET", "/limits")["limits"]["absolute"])

    def list_availability_zones(self) -> list[str]:
        zones = self._call("GET", "/os-availability-zone")["availabilityZoneInfo"]
        return [z["zoneName"] for z in zones if (z.get("zoneState") or {}).get("available")]

    # -- flavors ------------------------------------------------------------------------
    def create_flavor(self, body: Mapping[str, Any]) -> Flavor:
        return Flavor(self._call("POST", "/flavors", {"flavor": dict(body)})["flavor"])

    def get_flavor(self, flavor_id: str) -> Flavor:
        return Flavor(self._call("GET", f"/flavors/{_q(flavor_id)}")["flavor"])

    def find_flavor(self, name_or_id: str) -> Flavor:
        try:
            return self.get_flavor(name_or_id)
        except NotFound:
            pass
        named = [f for f in self.list_flavors(is_public="None") if f.name == name_or_id]
        return _one(named, name_or_id, "flavor")  # type: ignore[no-any-return]

    def list_flavors(self, **filters: Any) -> list[Flavor]:
        body = self._call("GET", "/flavors/detail", **filters)
        return [Flavor(f) for f in body.get("flavors", [])]

    def delete_flavor(self, flavor_id: str) -> None:
        self._call("DELETE", f"/flavors/{_q(flavor_id)}")

    def get_flavor_extra_specs(self, flavor_id: str) -> dict[str, str]:
        return dict(self._call("GET", f"/flavors/{_q(flavor_id)}/os-extra_specs")["extra_specs"])

    def set_flavor_extra_specs(
        self, flavor_id: str, extra_specs: Mapping[str, str]
    ) -> dict[str, str]:
        body = {"extra_specs": dict(extra_specs)}
        self._call("POST", f"/flavors/{_q(flavor_id)}/os-extra_specs", body)
        return self.get_flavor_extra_specs(flavor_id)

    def delete_flavor_extra_spec(self, flavor_id: str, key: str) -> None:
        self._call("DELETE", f"/flavors/{_q(flavor_id)}/os-extra_specs/{_q(key)}")

    def get_flavor_access(self, flavor_id: str) -> list[str]:
        body = self._call("GET", f"/flavors/{_q(flavor_id)}/os-flavor-access")
        return [a["tenant_id"] for a in body.get("flavor_access", [])]

    def add_flavor_access(self, flavor_id: str, project_id: str) -> None:
        body = {"addTenantAccess": {"tenant": project_id}}
        self._call("POST", f"/flavors/{_q(flavor_id)}/action", body)

    def remove_flavor_access(self, flavor_id: str, project_id: str) -> None:
        body = {"removeTenantAccess": {"tenant": project_id}}
        self._call("POST", f"/flavors/{_q(flavor_id)}/action", body)

    # -- keypairs -----------------------------------------------------------------------
    def create_keypair(self, body: Mapping[str, Any]) -> Keypair:
        return Keypair(self._call("POST", "/os-keypairs", {"keypair": dict(body)})["keypair"])

    def get_keypair(self, name: str, user_id: str | None = None) -> Keypair:
        body = self._call("GET", f"/os-keypairs/{_q(name)}", user_id=user_id)
        return Keypair(body["keypair"])

    def list_keypairs(self, user_id: str | None = None) -> list[Keypair]:
        body = self._call("GET", "/os-keypairs", user_id=user_id)
        return [Keypair(k["keypair"]) for k in body.get("keypairs", [])]

    def delete_keypair(self, name: str, user_id: str | None = None) -> None:
        self._call("DELETE", f"/os-keypairs/{_q(name)}", user_id=user_id)

    # -- server groups ------------------------------------------------------------------
    def create_server_group(self, body: Mapping[str, Any]) -> ServerGroup:
        answer = self._call("POST", "/os-server-groups", {"server_group": dict(body)})
        return ServerGroup(answer["server_group"])

    def get_server_group(self, group_id: str) -> ServerGroup:
        return ServerGroup(self._call("GET", f"/os-server-groups/{_q(group_id)}")["server_group"])

    def find_server_group(self, name_or_id: str) -> ServerGroup:
        try:
            return self.get_server_group(name_or_id)
        except NotFound:
            pass
        named = [g for g in self.list_server_groups() if g.name == name_or_id]
        return _one(named, name_or_id, "server group")  # type: ignore[no-any-return]

    def list_server_groups(self) -> list[ServerGroup]:
        body = self._call("GET", "/os-server-groups")
        return [ServerGroup(g) for g in body.get("server_groups", [])]

    def delete_server_group(self, group_id: str) -> None:
        self._call("DELETE", f"/os-server-groups/{_q(group_id)}")
