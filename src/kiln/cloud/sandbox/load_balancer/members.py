"""Pool members: back-end addresses, always reached under their pool.

A member's ``operating_status`` is ``NO_MONITOR`` while its pool has no health monitor
and ``ONLINE`` once it has one (no traffic is simulated, so members never go down).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.base import Document, OctaviaBase, link
from kiln.cloud.sandbox.load_balancer.rules import (
    COMMON_FIELDS,
    SERVICE,
    boolean,
    check_fields,
    common,
    integer,
    ip_address,
    required,
)

_UPDATE_FIELDS = (
    *COMMON_FIELDS,
    "weight",
    "backup",
    "monitor_address",
    "monitor_port",
)
_CREATE_FIELDS = (
    *_UPDATE_FIELDS,
    "address",
    "protocol_port",
    "subnet_id",
    "project_id",
    "tenant_id",
)


class MemberOps(OctaviaBase):
    """Create, show, list, update and delete the members of a pool."""

    def create_member(self, scope: CloudScope, pool_id: str, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "create_member", pool_id)
        with self.store.lock:
            pool = self.lookup(scope, "pool", pool_id)
            check_fields(body, _CREATE_FIELDS)
            address = ip_address(body, "address") or required(body, "address")
            required(body, "protocol_port")
            port = integer(body, "protocol_port", 1, 65535)
            fields = common(body)
            self._check_member_options(body)
            self.check_mutable(self.root("pool", pool))
            project = pool["project_id"]
            self.sim.check_quota(project, "members", self.count("member", project))
            for other in self.store.find("member", pool_id=pool_id):
                if other["address"] == address and other["protocol_port"] == port:
                    raise Conflict(
                        f"Another member on this pool is already using ip {address} on "
                        f"protocol_port {port}",
                        service=SERVICE,
                    )
            subnet_id = body.get("subnet_id")
            if subnet_id and "network" in self.cloud.services:
                self._check_subnet(project, str(subnet_id))
            member_id = self.cloud.new_id()
            document: Document = {
                "id": member_id,
                "name": "",
                "admin_state_up": True,
                "tags": [],
                **fields,
                "project_id": project,
                "tenant_id": project,
                "provisioning_status": "PENDING_CREATE",
                "operating_status": "OFFLINE",
                "created_at": self.cloud.timestamp(),
                "updated_at": None,
                "pool_id": pool_id,
                "address": address,
                "protocol_port": port,
                "subnet_id": subnet_id,
                "weight": body.get("weight", 1),
                "backup": body.get("backup", False),
                "monitor_address": body.get("monitor_address"),
                "monitor_port": body.get("monitor_port"),
            }
            link(pool["members"], member_id)
            self.store.put("pool", pool)
            self.store.put("member", document)
            online = "ONLINE" if pool.get("healthmonitor_id") else "NO_MONITOR"
            self.begin(scope, "create_member", "member", document, "create", online=online)
            return document

    def get_member(self, scope: CloudScope, pool_id: str, member_id: str) -> Document:
        self.enter(scope, "get_member", member_id)
        with self.store.lock:
            return self._member(scope, pool_id, member_id)

    def list_members(self, scope: CloudScope, pool_id: str, **filters: Any) -> list[Document]:
        self.enter(scope, "list_members", pool_id)
        with self.store.lock:
            self.lookup(scope, "pool", pool_id)
            return self.select(scope, "member", filters, pool_id=pool_id)

    def update_member(
        self, scope: CloudScope, pool_id: str, member_id: str, body: Mapping[str, Any]
    ) -> Document:
        self.enter(scope, "update_member", member_id)
        with self.store.lock:
            document = self._member(scope, pool_id, member_id)
            check_fields(body, _UPDATE_FIELDS)
            fields = common(body)
            self._check_member_options(body)
            self.check_mutable(self.root("member", document))
            document.update(fields)
            document.update({k: body[k] for k in _UPDATE_FIELDS if k in body and k not in fields})
            self.begin(scope, "update_member", "member", document, "update")
            return document

    def delete_member(self, scope: CloudScope, pool_id: str, member_id: str) -> None:
        self.enter(scope, "delete_member", member_id)
        with self.store.lock:
            document = self._member(scope, pool_id, member_id)
            self.check_mutable(self.root("member", document))
            self.begin(scope, "delete_member", "member", document, "delete")

    # -- helpers --------------------------------------------------------------------------
    def _member(self, scope: CloudScope, pool_id: str, member_id: str) -> Document:
        self.lookup(scope, "pool", pool_id)
        document = self.lookup(scope, "member", member_id)
        if document["pool_id"] != pool_id:
            raise NotFound(f"Member {member_id} not found.", service=SERVICE)
        return document

    @staticmethod
    def _check_member_options(body: Mapping[str, Any]) -> None:
        integer(body, "weight", 0, 256)
        integer(body, "monitor_port", 1, 65535)
        ip_address(body, "monitor_address")
        boolean(body, "backup")

    def _check_subnet(self, project: str, subnet_id: str) -> None:
        try:
            subnet = self.cloud.network.find_subnet_internal(project, subnet_id)
        except NotFound:
            subnet = None
        if not subnet:
            raise BadRequest(f"Validation failure: Subnet {subnet_id} not found.")
