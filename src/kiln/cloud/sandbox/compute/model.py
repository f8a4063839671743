"""The compute model: every Nova operation of the sandbox, over the shared store.

:class:`ComputeModel` gathers the topic mixins (servers, actions, attachments, metadata
and tags, flavors, keypairs, server groups), registers the store hooks that end a
build and a delete, and answers limits and availability zones.
"""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute import views
from kiln.cloud.sandbox.compute.actions import ServerActions
from kiln.cloud.sandbox.compute.attachments import AttachmentOps
from kiln.cloud.sandbox.compute.base import SERVER_GROUP, SERVICE, ZONE, Version
from kiln.cloud.sandbox.compute.server_parts import ServerPartOps
from kiln.cloud.sandbox.compute.servers import BUILT_HOOK, DELETED_HOOK


class ComputeModel(ServerActions, AttachmentOps, ServerPartOps):
    """The simulated Nova."""

    def __init__(self, cloud: SandboxCloud) -> None:
        super().__init__(cloud)
        self.store.on(BUILT_HOOK, self.server_built)
        self.store.on(DELETED_HOOK, self.server_deleted)

    def seed(self) -> None:
        """The m1.* flavors (idempotent)."""
        with self.store.lock:
            self.seed_flavors()

    def limits(self, scope: CloudScope) -> dict[str, int]:
        """The project's absolute limits and usage, in ``GET /limits`` field names."""
        self.sim.enter(scope, SERVICE, "get_limits")
        project = scope.project_id
        quota = self.sim.quota
        with self.store.lock:
            usage = self.usage(project)
            groups = len(self.store.find(SERVER_GROUP, project_id=project))
        return {
            "maxServerMeta": 128,
            "maxPersonality": 5,
            "maxPersonalitySize": 10240,
            "maxImageMeta": 128,
            "maxTotalInstances": quota(project, "instances"),
            "maxTotalCores": quota(project, "cores"),
            "maxTotalRAMSize": quota(project, "ram"),
            "maxTotalKeypairs": quota(project, "key_pairs"),
            "maxServerGroups": quota(project, "server_groups"),
            "maxServerGroupMembers": quota(project, "server_group_members"),
            "totalInstancesUsed": usage["instances"],
            "totalCoresUsed": usage["cores"],
            "totalRAMUsed": usage["ram"],
            "totalServerGroupsUsed": groups,
        }

    def availability_zones(self, scope: CloudScope) -> list[dict[str, Any]]:
        self.sim.enter(scope, SERVICE, "list_availability_zones")
        return [{"zoneName": ZONE, "zoneState": {"available": True}, "hosts": None}]

    def present_server(
        self, scope: CloudScope, server: dict[str, Any], version: Version, base: str = ""
    ) -> dict[str, Any]:
        """The server as Nova shows it to ``scope``: addresses from Neutron, groups."""
        with self.store.lock:
            neutron = self.service("network")
            addresses = neutron.addresses_of_device(server["id"]) if neutron is not None else {}
            return views.server_view(
                server,
                version,
                base=base,
                admin=scope.is_admin,
                addresses=addresses,
                groups=self.groups_of(server["id"]),
            )
