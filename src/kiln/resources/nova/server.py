"""OS::Nova::Server: a Nova server with its NICs, user data, volumes and updates.

The type's hooks, each short; the work is in the sibling modules:
server_schema (properties and attributes), server_create (the request and its
cloud checks), server_networks and server_network_updates (NICs, the ports
the plugin owns, floating IPs), server_user_data, server_block_devices,
server_updates (resize, rebuild, ... in place), server_status (polling) and
server_attributes. ``get_resource`` gives the server's id.

Create waits for ACTIVE, then associates floating IPs that needed Nova's port,
sets tags (below 2.52, where the request cannot carry them) and records the
ports Nova made. Delete waits until the server is gone, then deletes the ports
the plugin made. Suspend, resume, check and snapshot (a Glance image, also used
by ``deletion_policy: Snapshot``) follow the reference.
Imports: kiln.plugin, kiln.schema, kiln.cloud.api and the sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.core.errors import KilnError
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.nova import _compute as gates
from kiln.resources.nova._compute import compute, supports
from kiln.resources.nova.server_attributes import server_attribute
from kiln.resources.nova.server_create import (
    CREATE_WITH_TAGS,
    create_request,
    image_client,
    server_name,
    user_data_text,
)
from kiln.resources.nova.server_networks import ServerNetworks, network_client
from kiln.resources.nova.server_replace import (
    check_server_prepared,
    check_server_restored,
    prepare_server_for_replace,
    restore_server_ports,
    server_properties_from_snapshot,
)
from kiln.resources.nova.server_schema import SERVER_ATTRIBUTES, SERVER_PROPERTIES
from kiln.resources.nova.server_status import DEFERRED, SNAPSHOT_TASKS, fetch, is_active
from kiln.resources.nova.server_tags import kiln_tag, server_tags
from kiln.resources.nova.server_transport import delete_agent_credentials, write_agent_metadata
from kiln.resources.nova.server_updates import UpdateRunner, plan
from kiln.resources.nova.server_validation import validate_server

SNAPSHOT_IMAGE = "snapshot_image_id"
FAILED_IMAGE_STATUSES = ("killed", "deleted", "error")


@resource_type("OS::Nova::Server")
class Server(Resource):
    """A Nova server; ``get_resource`` gives its id."""

    properties_schema = SERVER_PROPERTIES
    attributes_schema = SERVER_ATTRIBUTES
    supports_snapshot = True
    physical_name_limit = 53

    @classmethod
    def validate(cls, properties: Mapping[str, Any]) -> list[KilnError]:
        return validate_server(properties)

    # -- create -------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        api = compute(self.ctx)
        tag = kiln_tag(self.ctx)
        if supports(api, CREATE_WITH_TAGS):
            for server in api.list_servers(tags=tag):
                if tag in server.tags:
                    return server.id
        if self.properties.get("name"):
            return None  # a name the user chose may be shared: only the tag is proof
        name = self.ctx.physical_resource_name()
        for server in api.list_servers(name=name):
            if server.name == name:
                return server.id
        return None

    def needs_replace_failed(self) -> bool:
        """Keep a failed server that still exists and is not in ERROR (Heat's rule)."""
        if not self.ctx.physical_id:
            return True
        try:
            server = compute(self.ctx).get_server(self.ctx.physical_id)
        except NotFound:
            return True
        return server.status in ("ERROR", "DELETED", "SOFT_DELETED")

    def handle_create(self) -> Cookie:
        body, hints = create_request(self.ctx)
        created = compute(self.ctx).create_server(body, hints)
        self.ctx.set_physical_id(created.id)
        return {"server": created.id}

    def check_create_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            # Found by find_existing after a crash: the create's cookie and its agent
            # settings were lost with the step (the stack user is found by name).
            write_agent_metadata(self.ctx, self.properties)
            cookie = {"server": str(self.ctx.physical_id)}
        server_id = cookie["server"]
        api = compute(self.ctx)
        if not is_active(fetch(api, server_id), "Creating server"):
            return False
        nets = ServerNetworks(self.ctx)
        nets.associate_pending_floating_ips(server_id)
        tags = self.properties.get("tags")
        if tags and not supports(api, CREATE_WITH_TAGS):
            api.set_server_tags(server_id, server_tags(self.ctx, tags))
        nets.record_external_ports(api, server_id)
        return True

    # -- update -------------------------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if not self.ctx.physical_id:
            raise ResourceFailure(f"Server {self.ctx.name} was never created")
        api = compute(self.ctx)
        # the template's metadata replaces the stored one: the agent's settings go back in
        write_agent_metadata(self.ctx, new_properties)
        steps = plan(
            self.ctx,
            new_properties,
            changed,
            resolve_flavor=lambda name: api.find_flavor(name).id,
            resolve_image=lambda name: image_client(self.ctx).find_image(name).id,
            user_data=lambda: user_data_text(self.ctx, new_properties),
        )
        return {"steps": steps, "index": 0}

    def check_update_complete(self, cookie: Cookie) -> bool:
        if not UpdateRunner(self.ctx).advance(cookie):
            return False
        if cookie["steps"]:
            ServerNetworks(self.ctx).record_external_ports(
                compute(self.ctx), str(self.ctx.physical_id)
            )
        return True

    # -- delete -------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        delete_agent_credentials(self.ctx)
        server_id = self.ctx.physical_id
        if not server_id:
            ServerNetworks(self.ctx).delete_internal_ports()
            return None
        try:
            compute(self.ctx).delete_server(server_id)
        except NotFound:
            pass
        return {"server": server_id}

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        api = compute(self.ctx)
        try:
            server = api.get_server(cookie["server"])
        except NotFound:
            server = None
        if server is not None and server.status != "DELETED":
            if server.status == "SOFT_DELETED":
                api.force_delete_server(server.id)
            elif server.status == "ERROR" and server.task_state != "deleting":
                raise ResourceFailure(f"Server {server.name} delete failed: {server.fault}")
            return False
        ServerNetworks(self.ctx).delete_internal_ports()
        return True

    # -- suspend, resume, check ---------------------------------------------------------
    def _server(self, action: str) -> Any:
        if not self.ctx.physical_id:
            raise ResourceFailure(f"Cannot {action} {self.ctx.name}, resource_id not set")
        try:
            return compute(self.ctx).get_server(self.ctx.physical_id)
        except NotFound:
            raise ResourceFailure(
                f"Failed to find server {self.ctx.physical_id} to {action}"
            ) from None

    def handle_suspend(self) -> Cookie:
        server = self._server("suspend")
        if server.status != "SUSPENDED":
            compute(self.ctx).suspend_server(server.id)
        return {"server": server.id}

    def check_suspend_complete(self, cookie: Cookie) -> bool:
        server = fetch(compute(self.ctx), cookie["server"])
        if server is None:
            return False
        if server.status == "SUSPENDED":
            return True
        if server.status == "ACTIVE" or server.status in DEFERRED:
            return False
        raise ResourceFailure(f"Suspend of server {server.name} failed: status {server.status}")

    def handle_resume(self) -> Cookie:
        server = self._server("resume")
        if server.status != "ACTIVE":
            compute(self.ctx).resume_server(server.id)
        return {"server": server.id}

    def check_resume_complete(self, cookie: Cookie) -> bool:
        return is_active(fetch(compute(self.ctx), cookie["server"]), "Resuming server")

    def handle_check(self) -> Cookie:
        server = self._server("check")
        if server.status != "ACTIVE":
            raise ResourceFailure(
                f"Server {server.name} is not in the expected state ACTIVE (it is {server.status})"
            )
        return None

    # -- snapshot -----------------------------------------------------------------------
    def handle_snapshot(self) -> Cookie:
        server = self._server("snapshot")
        image_id = compute(self.ctx).create_server_image(
            server.id, self.ctx.physical_resource_name()
        )
        self.ctx.data_set(SNAPSHOT_IMAGE, image_id)
        return {"server": server.id, "image": image_id}

    def check_snapshot_complete(self, cookie: Cookie) -> bool:
        image = image_client(self.ctx).get_image(cookie["image"])
        if image.status in FAILED_IMAGE_STATUSES:
            raise ResourceFailure(f"Error creating server snapshot: image {image.status}")
        if image.status != "active":
            return False
        server = fetch(compute(self.ctx), cookie["server"])
        return server is not None and server.task_state not in SNAPSHOT_TASKS

    # -- replacement and snapshot restore (server_replace) -------------------------------
    def prepare_for_replace(self) -> Cookie:
        return prepare_server_for_replace(self.ctx)

    def check_prepare_for_replace_complete(self, cookie: Cookie) -> bool:
        return check_server_prepared(self.ctx, cookie)

    def restore_prev_rsrc(self, replacement_id: str | None) -> Cookie:
        return restore_server_ports(self.ctx, replacement_id)

    def check_restore_prev_rsrc_complete(self, cookie: Cookie) -> bool:
        return check_server_restored(self.ctx, cookie)

    @classmethod
    def properties_from_snapshot(
        cls, properties: Mapping[str, Any], snapshot: Mapping[str, Any]
    ) -> dict[str, Any]:
        return server_properties_from_snapshot(properties, snapshot)

    # -- attributes ---------------------------------------------------------------------
    def get_attribute(self, name: str) -> Any:
        if name == "os_collect_config":
            metadata = self.ctx.metadata
            found = metadata.get("os-collect-config") if isinstance(metadata, Mapping) else None
            return found or {}
        if name == "show" or name not in self.attributes_schema:
            return super().get_attribute(name)
        if not self.ctx.physical_id:
            return None
        api = compute(self.ctx)
        try:
            server = api.get_server(self.ctx.physical_id)
        except NotFound:
            return None
        if name == "tags" and not supports(api, gates.SERVER_TAGS):
            return None
        return server_attribute(name, server, api, network_client(self.ctx))

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return compute(self.ctx).get_server(self.ctx.physical_id).show()
        except NotFound:
            return None

    def default_name(self) -> str:
        """The server's name when the template gives none."""
        return server_name(self.ctx, self.properties)
