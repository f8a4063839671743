"""The compute client in-process: :class:`ComputeApi` straight over the sandbox model.

Speaks the newest microversion the sandbox serves (2.90), like the openstacksdk adapter
against the sandbox, and returns deep copies of the model's documents shaped by
``views``, so a plugin sees the same records either way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.compute import (
    Flavor,
    InterfaceAttachment,
    Keypair,
    Server,
    ServerGroup,
    VolumeAttachment,
)
from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import views
from kiln.cloud.sandbox.compute.base import MAX_VERSION
from kiln.cloud.sandbox.compute.model import ComputeModel


def _one(matches: list[Any], name_or_id: str, what: str) -> Any:
    if len(matches) > 1:
        raise MultipleMatches(f"More than one {what} exists with the name '{name_or_id}'.")
    if not matches:
        raise NotFound(f"No {what} found for {name_or_id}")
    return matches[0]


class ComputeAdapter:
    """:class:`kiln.cloud.api.compute.ComputeApi` for one scope, in-process."""

    def __init__(self, model: ComputeModel, scope: CloudScope) -> None:
        self.model = model
        self.scope = scope
        self.version = MAX_VERSION

    @property
    def _base(self) -> str:
        return str(self.model.cloud.public_urls.get("compute", ""))

    def microversion(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    def _server(self, document: dict[str, Any]) -> Server:
        shown = self.model.present_server(self.scope, document, self.version, self._base)
        return Server(copy.deepcopy(shown))

    # -- servers ------------------------------------------------------------------------
    def create_server(
        self, body: Mapping[str, Any], scheduler_hints: Mapping[str, Any] | None = None
    ) -> Server:
        created = self.model.create_server(self.scope, body, scheduler_hints, self.version)
        return self.get_server(created["id"])

    def get_server(self, server_id: str) -> Server:
        return self._server(self.model.get_server(self.scope, server_id))

    def find_server(self, name_or_id: str) -> Server:
        try:
            return self.get_server(name_or_id)
        except NotFound:
            pass
        named = [s for s in self.model.list_servers(self.scope) if s["name"] == name_or_id]
        return self._server(_one(named, name_or_id, "server"))

    def list_servers(self, **filters: Any) -> list[Server]:
        wanted = {k: str(v) for k, v in filters.items()}
        return [self._server(s) for s in self.model.list_servers(self.scope, wanted)]

    def update_server(self, server_id: str, body: Mapping[str, Any]) -> Server:
        return self._server(self.model.update_server(self.scope, server_id, body, self.version))

    def delete_server(self, server_id: str) -> None:
        self.model.delete_server(self.scope, server_id)

    def force_delete_server(self, server_id: str) -> None:
        self.model.force_delete_server(self.scope, server_id)

    def suspend_server(self, server_id: str) -> None:
        self.model.suspend_server(self.scope, server_id)

    def resume_server(self, server_id: str) -> None:
        self.model.resume_server(self.scope, server_id)

    def stop_server(self, server_id: str) -> None:
        self.model.stop_server(self.scope, server_id)

    def start_server(self, server_id: str) -> None:
        self.model.start_server(self.scope, server_id)

    def reboot_server(self, server_id: str, reboot_type: str = "SOFT") -> None:
        self.model.reboot_server(self.scope, server_id, reboot_type)

    def resize_server(self, server_id: str, flavor_ref: str) -> None:
        self.model.resize_server(self.scope, server_id, flavor_ref)

    def confirm_server_resize(self, server_id: str) -> None:
        self.model.confirm_server_resize(self.scope, server_id)

    def revert_server_resize(self, server_id: str) -> None:
        self.model.revert_server_resize(self.scope, server_id)

    def rebuild_server(self, server_id: str, body: Mapping[str, Any]) -> Server:
        return self._server(self.model.rebuild_server(self.scope, server_id, body, self.version))

    def change_server_password(self, server_id: str, admin_pass: str) -> None:
        self.model.change_server_password(self.scope, server_id, admin_pass)

    def create_server_image(
        self, server_id: str, name: str, metadata: Mapping[str, str] | None = None
    ) -> str:
        image = self.model.create_server_image(self.scope, server_id, name, metadata)
        return str(image["id"])

    def get_server_console_url(self, server_id: str, console_type: str) -> dict[str, Any]:
        protocol = next(
            (p for p, types in CONSOLE_PROTOCOLS.items() if console_type in types), "vnc"
        )
        return self.model.remote_console(self.scope, server_id, protocol, console_type)

    # -- metadata and tags --------------------------------------------------------------
    def get_server_metadata(self, server_id: str) -> dict[str, str]:
        return dict(self.model.get_metadata(self.scope, server_id))

    def set_server_metadata(self, server_id: str, metadata: Mapping[str, str]) -> dict[str, str]:
        return dict(self.model.set_metadata(self.scope, server_id, dict(metadata)))

    def replace_server_metadata(
        self, server_id: str, metadata: Mapping[str, str]
    ) -> dict[str, str]:
        return dict(self.model.set_metadata(self.scope, server_id, dict(metadata), replace=True))

    def delete_server_metadata_item(self, server_id: str, key: str) -> None:
        self.model.delete_metadata_item(self.scope, server_id, key)

    def get_server_tags(self, server_id: str) -> list[str]:
        return self.model.get_tags(self.scope, server_id)

    def set_server_tags(self, server_id: str, tags: list[str]) -> list[str]:
        return self.model.set_tags(self.scope, server_id, list(tags))

    # -- interfaces and volume attachments ---------------------------------------------
    def list_server_interfaces(self, server_id: str) -> list[InterfaceAttachment]:
        return [
            InterfaceAttachment(copy.deepcopy(views.interface_view(i, self.version)))
            for i in self.model.list_interfaces(self.scope, server_id)
        ]

    def create_server_interface(
        self, server_id: str, body: Mapping[str, Any]
    ) -> InterfaceAttachment:
        made = self.model.attach_interface(self.scope, server_id, body)
        return InterfaceAttachment(copy.deepcopy(views.interface_view(made, self.version)))

    def delete_server_interface(self, server_id: str, port_id: str) -> None:
        self.model.detach_interface(self.scope, server_id, port_id)

    def _attachment(self, record: Mapping[str, Any], server_id: str) -> VolumeAttachment:
        shown = views.volume_attachment_view(record, server_id, self.version)
        return VolumeAttachment(copy.deepcopy(shown))

    def create_volume_attachment(
        self, server_id: str, volume_id: str, device: str | None = None
    ) -> VolumeAttachment:
        body = {"volumeId": volume_id, "device": device}
        return self._attachment(self.model.attach_volume(self.scope, server_id, body), server_id)

    def get_volume_attachment(self, server_id: str, volume_id: str) -> VolumeAttachment:
        record = self.model.get_volume_attachment(self.scope, server_id, volume_id)
        return self._attachment(record, server_id)

    def list_volume_attachments(self, server_id: str) -> list[VolumeAttachment]:
        records = self.model.list_volume_attachments(self.scope, server_id)
        return [self._attachment(r, server_id) for r in records]

    def delete_volume_attachment(self, server_id: str, volume_id: str) -> None:
        self.model.detach_volume(self.scope, server_id, volume_id)

    # -- limits and zones ---------------------------------------------------------------
    def get_limits(self) -> dict[str, Any]:
        absolute = views.limits_view(self.model.limits(self.scope), self.version)["absolute"]
        return dict(absolute)

    def list_availability_zones(self) -> list[str]:
        zones = self.model.availability_zones(self.scope)
        return [z["zoneName"] for z in zones if z["zoneState"]["available"]]

    # -- flavors ------------------------------------------------------------------------
    def _flavor(self, document: Mapping[str, Any]) -> Flavor:
        return Flavor(copy.deepcopy(views.flavor_view(document, self.version, base=self._base)))

    def create_flavor(self, body: Mapping[str, Any]) -> Flavor:
        return self._flavor(self.model.create_flavor(self.scope, body))

    def get_flavor(self, flavor_id: str) -> Flavor:
        return self._flavor(self.model.get_flavor(self.scope, flavor_id))

    def find_flavor(self, name_or_id: str) -> Flavor:
        try:
            return self.get_flavor(name_or_id)
        except NotFound:
            pass
        flavors = self.model.list_flavors(self.scope, {"is_public": "None"})
        return self._flavor(
            _one([f for f in flavors if f["name"] == name_or_id], name_or_id, "flavor")
        )

    def list_flavors(self, **filters: Any) -> list[Flavor]:
        wanted = {k: str(v) for k, v in filters.items()}
        return [self._flavor(f) for f in self.model.list_flavors(self.scope, wanted)]

    def delete_flavor(self, flavor_id: str) -> None:
        self.model.delete_flavor(self.scope, flavor_id)

    def get_flavor_extra_specs(self, flavor_id: str) -> dict[str, str]:
        return dict(self.model.get_extra_specs(self.scope, flavor_id))

    def set_flavor_extra_specs(
        self, flavor_id: str, extra_specs: Mapping[str, str]
    ) -> dict[str, str]:
        return dict(self.model.set_extra_specs(self.scope, flavor_id, extra_specs))

    def delete_flavor_extra_spec(self, flavor_id: str, key: str) -> None:
        self.model.delete_extra_spec(self.scope, flavor_id, key)

    def get_flavor_access(self, flavor_id: str) -> list[str]:
        return self.model.get_flavor_access(self.scope, flavor_id)

    def add_flavor_access(self, flavor_id: str, project_id: str) -> None:
        self.model.add_flavor_access(self.scope, flavor_id, project_id)

    def remove_flavor_access(self, flavor_id: str, project_id: str) -> None:
        self.model.remove_flavor_access(self.scope, flavor_id, project_id)

    # -- keypairs -----------------------------------------------------------------------
    def create_keypair(self, body: Mapping[str, Any]) -> Keypair:
        made = self.model.create_keypair(self.scope, body, self.version)
        return Keypair(copy.deepcopy(views.keypair_view(made, self.version, created=True)))

    def get_keypair(self, name: str, user_id: str | None = None) -> Keypair:
        found = self.model.get_keypair(self.scope, name, user_id)
        return Keypair(copy.deepcopy(views.keypair_view(found, self.version)))

    def list_keypairs(self, user_id: str | None = None) -> list[Keypair]:
        return [
            Keypair(copy.deepcopy(views.keypair_list_item(k, self.version)["keypair"]))
            for k in self.model.list_keypairs(self.scope, user_id)
        ]

    def delete_keypair(self, name: str, user_id: str | None = None) -> None:
        self.model.delete_keypair(self.scope, name, user_id)

    # -- server groups ------------------------------------------------------------------
    def _group(self, document: Mapping[str, Any]) -> ServerGroup:
        return ServerGroup(copy.deepcopy(views.server_group_view(document, self.version)))

    def create_server_group(self, body: Mapping[str, Any]) -> ServerGroup:
        return self._group(self.model.create_server_group(self.scope, body, self.version))

    def get_server_group(self, group_id: str) -> ServerGroup:
        return self._group(self.model.get_server_group(self.scope, group_id))

    def find_server_group(self, name_or_id: str) -> ServerGroup:
        try:
            return self.get_server_group(name_or_id)
        except NotFound:
            pass
        groups = self.model.list_server_groups(self.scope)
        return self._group(
            _one([g for g in groups if g["name"] == name_or_id], name_or_id, "server group")
        )

    def list_server_groups(self) -> list[ServerGroup]:
        return [self._group(g) for g in self.model.list_server_groups(self.scope)]

    def delete_server_group(self, group_id: str) -> None:
        self.model.delete_server_group(self.scope, group_id)


# console type -> protocol, for get_server_console_url (the reference's type list)
CONSOLE_PROTOCOLS = {
    "vnc": ("novnc", "xvpvnc"),
    "spice": ("spice-html5",),
    "rdp": ("rdp-html5",),
    "serial": ("serial",),
    "mks": ("webmks",),
}
