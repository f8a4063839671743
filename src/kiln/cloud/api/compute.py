"""The compute (Nova) client interface the resource plugins use, and its value types.

:class:`ComputeApi` names every Nova call of the ``OS::Nova::*`` plugins and of
``OS::Cinder::VolumeAttachment`` (attachments are made through Nova). Bodies are the
inside of the REST envelope in Nova's field names (``create_server(body)`` with ``body``
= the inside of ``{"server": {...}}``). Records show the object as Nova returns it at
the negotiated microversion (:meth:`ComputeApi.microversion`; the sandbox serves up to
2.90), so plugins gate features (server tags 2.26, server-group ``policy`` 2.64, ...) on
it. Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kiln.cloud.api.records import Record


def version_tuple(text: str) -> tuple[int, int]:
    """``"2.64"`` -> ``(2, 64)``, to compare microversions."""
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


class Server(Record):
    """A Nova server (``GET /servers/{id}``)."""

    @property
    def task_state(self) -> str | None:
        return self.raw.get("OS-EXT-STS:task_state")

    @property
    def vm_state(self) -> str | None:
        return self.raw.get("OS-EXT-STS:vm_state")

    @property
    def addresses(self) -> dict[str, list[dict[str, Any]]]:
        return dict(self.raw.get("addresses") or {})

    @property
    def flavor(self) -> dict[str, Any]:
        return dict(self.raw.get("flavor") or {})

    @property
    def image_id(self) -> str | None:
        """The boot image's id; None for a volume-booted server."""
        image = self.raw.get("image")
        return image.get("id") if isinstance(image, Mapping) else None

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self.raw.get("metadata") or {})

    @property
    def tags(self) -> list[str]:
        return list(self.raw.get("tags") or [])

    @property
    def key_name(self) -> str | None:
        return self.raw.get("key_name")

    @property
    def instance_name(self) -> str | None:
        return self.raw.get("OS-EXT-SRV-ATTR:instance_name")

    @property
    def fault(self) -> dict[str, Any]:
        """``{"code", "message", "created"}`` of an ERROR server, else empty."""
        return dict(self.raw.get("fault") or {})

    @property
    def attached_volume_ids(self) -> list[str]:
        return [v["id"] for v in self.raw.get("os-extended-volumes:volumes_attached") or []]


class Flavor(Record):
    """A Nova flavor (``GET /flavors/{id}``)."""

    @property
    def ram(self) -> int:
        return int(self.raw.get("ram") or 0)

    @property
    def vcpus(self) -> int:
        return int(self.raw.get("vcpus") or 0)

    @property
    def disk(self) -> int:
        return int(self.raw.get("disk") or 0)

    @property
    def is_public(self) -> bool:
        return bool(self.raw.get("os-flavor-access:is_public", True))

    @property
    def extra_specs(self) -> dict[str, str]:
        return dict(self.raw.get("extra_specs") or {})


class Keypair(Record):
    """A Nova keypair; its id is its name (reference section 0)."""

    @property
    def id(self) -> str:
        return str(self.raw["name"])

    @property
    def public_key(self) -> str | None:
        return self.raw.get("public_key")

    @property
    def private_key(self) -> str | None:
        """Only on the create response of a server-generated keypair."""
        return self.raw.get("private_key")

    @property
    def fingerprint(self) -> str | None:
        return self.raw.get("fingerprint")

    @property
    def type(self) -> str | None:
        return self.raw.get("type")

    @property
    def user_id(self) -> str | None:
        return self.raw.get("user_id")


class ServerGroup(Record):
    """A Nova server group (``policies`` below 2.64, ``policy`` + ``rules`` from 2.64)."""

    @property
    def policies(self) -> list[str]:
        """The policies whatever the microversion (``[policy]`` from 2.64)."""
        if self.raw.get("policies") is not None:
            return list(self.raw["policies"])
        policy = self.raw.get("policy")
        return [policy] if policy else []

    @property
    def rules(self) -> dict[str, Any]:
        return dict(self.raw.get("rules") or {})

    @property
    def members(self) -> list[str]:
        return list(self.raw.get("members") or [])


class VolumeAttachment(Record):
    """A volume attached to a server; its id is the volume id (Nova omits it from 2.89)."""

    @property
    def id(self) -> str:
        return str(self.raw.get("id") or self.raw["volumeId"])

    @property
    def server_id(self) -> str:
        return str(self.raw["serverId"])

    @property
    def volume_id(self) -> str:
        return str(self.raw["volumeId"])

    @property
    def device(self) -> str | None:
        return self.raw.get("device")

    @property
    def attachment_id(self) -> str | None:
        """The Cinder attachment id (2.89)."""
        return self.raw.get("attachment_id")


class InterfaceAttachment(Record):
    """A port attached to a server (``os-interface``); its id is the port id."""

    @property
    def id(self) -> str:
        return str(self.raw["port_id"])

    @property
    def port_id(self) -> str:
        return str(self.raw["port_id"])

    @property
    def net_id(self) -> str | None:
        return self.raw.get("net_id")

    @property
    def mac_addr(self) -> str | None:
        return self.raw.get("mac_addr")

    @property
    def fixed_ips(self) -> list[dict[str, Any]]:
        return list(self.raw.get("fixed_ips") or [])


class ComputeApi(Protocol):
    """Nova, as the plugins use it. Missing objects raise NotFound."""

    def microversion(self) -> str:
        """The compute microversion every call uses (``"2.90"`` against the sandbox)."""
        ...

    # -- servers ------------------------------------------------------------------------
    def create_server(
        self, body: Mapping[str, Any], scheduler_hints: Mapping[str, Any] | None = None
    ) -> Server:
        """``POST /servers``; the answer is re-read with GET (status BUILD or later)."""
        ...

    def get_server(self, server_id: str) -> Server:
        """``GET /servers/{id}``."""
        ...

    def find_server(self, name_or_id: str) -> Server:
        """By id, then by exact name; NotFound or MultipleMatches."""
        ...

    def list_servers(self, **filters: Any) -> list[Server]:
        """``GET /servers/detail`` with query filters (``name``, ``status``, ...)."""
        ...

    def update_server(self, server_id: str, body: Mapping[str, Any]) -> Server:
        """``PUT /servers/{id}`` (name, description, accessIPv4/6)."""
        ...

    def delete_server(self, server_id: str) -> None:
        """``DELETE /servers/{id}`` (the server goes through task_state deleting)."""
        ...

    def force_delete_server(self, server_id: str) -> None:
        """Action ``forceDelete`` (a SOFT_DELETED server)."""
        ...

    def suspend_server(self, server_id: str) -> None:
        """Action ``suspend``."""
        ...

    def resume_server(self, server_id: str) -> None:
        """Action ``resume``."""
        ...

    def stop_server(self, server_id: str) -> None:
        """Action ``os-stop``."""
        ...

    def start_server(self, server_id: str) -> None:
        """Action ``os-start``."""
        ...

    def reboot_server(self, server_id: str, reboot_type: str = "SOFT") -> None:
        """Action ``reboot`` (SOFT or HARD)."""
        ...

    def resize_server(self, server_id: str, flavor_ref: str) -> None:
        """Action ``resize`` to the flavor id ``flavor_ref``."""
        ...

    def confirm_server_resize(self, server_id: str) -> None:
        """Action ``confirmResize``."""
        ...

    def revert_server_resize(self, server_id: str) -> None:
        """Action ``revertResize``."""
        ...

    def rebuild_server(self, server_id: str, body: Mapping[str, Any]) -> Server:
        """Action ``rebuild`` with ``body`` the inside of ``{"rebuild": {...}}``."""
        ...

    def change_server_password(self, server_id: str, admin_pass: str) -> None:
        """Action ``changePassword``."""
        ...

    def create_server_image(
        self, server_id: str, name: str, metadata: Mapping[str, str] | None = None
    ) -> str:
        """Action ``createImage``; the id of the Glance snapshot image."""
        ...

    def get_server_console_url(self, server_id: str, console_type: str) -> dict[str, Any]:
        """``POST /servers/{id}/remote-consoles`` -> ``{"protocol", "type", "url"}``."""
        ...

    # -- server metadata and tags -------------------------------------------------------
    def get_server_metadata(self, server_id: str) -> dict[str, str]:
        """``GET /servers/{id}/metadata``."""
        ...

    def set_server_metadata(self, server_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        """``POST /servers/{id}/metadata`` (merge); the whole metadata after."""
        ...

    def replace_server_metadata(
        self, server_id: str, metadata: Mapping[str, str]
    ) -> dict[str, str]:
        """``PUT /servers/{id}/metadata`` (replace all)."""
        ...

    def delete_server_metadata_item(self, server_id: str, key: str) -> None:
        """``DELETE /servers/{id}/metadata/{key}``; NotFound when absent."""
        ...

    def get_server_tags(self, server_id: str) -> list[str]:
        """``GET /servers/{id}/tags`` (2.26)."""
        ...

    def set_server_tags(self, server_id: str, tags: list[str]) -> list[str]:
        """``PUT /servers/{id}/tags`` (replace all, 2.26)."""
        ...

    # -- interfaces and volume attachments ---------------------------------------------
    def list_server_interfaces(self, server_id: str) -> list[InterfaceAttachment]:
        """``GET /servers/{id}/os-interface``."""
        ...

    def create_server_interface(
        self, server_id: str, body: Mapping[str, Any]
    ) -> InterfaceAttachment:
        """``POST /servers/{id}/os-interface`` (``port_id`` or ``net_id`` + ``fixed_ips``)."""
        ...

    def delete_server_interface(self, server_id: str, port_id: str) -> None:
        """``DELETE /servers/{id}/os-interface/{port_id}``."""
        ...

    def create_volume_attachment(
        self, server_id: str, volume_id: str, device: str | None = None
    ) -> VolumeAttachment:
        """``POST /servers/{id}/os-volume_attachments``."""
        ...

    def get_volume_attachment(self, server_id: str, volume_id: str) -> VolumeAttachment:
        """``GET /servers/{id}/os-volume_attachments/{volume_id}``."""
        ...

    def list_volume_attachments(self, server_id: str) -> list[VolumeAttachment]:
        """``GET /servers/{id}/os-volume_attachments``."""
        ...

    def delete_volume_attachment(self, server_id: str, volume_id: str) -> None:
        """``DELETE /servers/{id}/os-volume_attachments/{volume_id}``."""
        ...

    # -- limits and zones ---------------------------------------------------------------
    def get_limits(self) -> dict[str, Any]:
        """``GET /limits`` -> the ``absolute`` limits."""
        ...

    def list_availability_zones(self) -> list[str]:
        """``GET /os-availability-zone`` -> the available zone names."""
        ...

    # -- flavors ------------------------------------------------------------------------
    def create_flavor(self, body: Mapping[str, Any]) -> Flavor:
        """``POST /flavors`` (admin)."""
        ...

    def get_flavor(self, flavor_id: str) -> Flavor:
        """``GET /flavors/{id}``."""
        ...

    def find_flavor(self, name_or_id: str) -> Flavor:
        """By id, then by name among public and accessible private flavors."""
        ...

    def list_flavors(self, **filters: Any) -> list[Flavor]:
        """``GET /flavors/detail``."""
        ...

    def delete_flavor(self, flavor_id: str) -> None:
        """``DELETE /flavors/{id}`` (admin)."""
        ...

    def get_flavor_extra_specs(self, flavor_id: str) -> dict[str, str]:
        """``GET /flavors/{id}/os-extra_specs``."""
        ...

    def set_flavor_extra_specs(
        self, flavor_id: str, extra_specs: Mapping[str, str]
    ) -> dict[str, str]:
        """``POST /flavors/{id}/os-extra_specs`` (merge); all specs after."""
        ...

    def delete_flavor_extra_spec(self, flavor_id: str, key: str) -> None:
        """``DELETE /flavors/{id}/os-extra_specs/{key}``."""
        ...

    def get_flavor_access(self, flavor_id: str) -> list[str]:
        """The project ids with access to a private flavor."""
        ...

    def add_flavor_access(self, flavor_id: str, project_id: str) -> None:
        """Action ``addTenantAccess``; Conflict when present."""
        ...

    def remove_flavor_access(self, flavor_id: str, project_id: str) -> None:
        """Action ``removeTenantAccess``; NotFound when absent."""
        ...

    # -- keypairs -----------------------------------------------------------------------
    def create_keypair(self, body: Mapping[str, Any]) -> Keypair:
        """``POST /os-keypairs``; without ``public_key`` one is generated (``private_key``)."""
        ...

    def get_keypair(self, name: str, user_id: str | None = None) -> Keypair:
        """``GET /os-keypairs/{name}``."""
        ...

    def list_keypairs(self, user_id: str | None = None) -> list[Keypair]:
        """``GET /os-keypairs``."""
        ...

    def delete_keypair(self, name: str, user_id: str | None = None) -> None:
        """``DELETE /os-keypairs/{name}``."""
        ...

    # -- server groups ------------------------------------------------------------------
    def create_server_group(self, body: Mapping[str, Any]) -> ServerGroup:
        """``POST /os-server-groups`` (``policies`` below 2.64, ``policy``/``rules`` from)."""
        ...

    def get_server_group(self, group_id: str) -> ServerGroup:
        """``GET /os-server-groups/{id}``."""
        ...

    def find_server_group(self, name_or_id: str) -> ServerGroup:
        """By id, then by name."""
        ...

    def list_server_groups(self) -> list[ServerGroup]:
        """``GET /os-server-groups``."""
        ...

    def delete_server_group(self, group_id: str) -> None:
        """``DELETE /os-server-groups/{id}``."""
        ...


__all__ = [
    "ComputeApi",
    "Flavor",
    "InterfaceAttachment",
    "Keypair",
    "Server",
    "ServerGroup",
    "VolumeAttachment",
    "version_tuple",
]

# CONTRACT READY
