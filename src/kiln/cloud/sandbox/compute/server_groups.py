"""Server groups: a policy and the servers that joined through the ``group`` hint.

Documents hold ``policy`` and ``rules`` (the 2.64 shape); ``views`` shows ``policies``
below 2.64. Placement is not simulated: membership is only recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute.base import (
    MAX_VERSION,
    SERVER,
    SERVER_GROUP,
    SERVICE,
    ComputeBase,
    Version,
    at_least,
    visible,
)

POLICIES = ("anti-affinity", "affinity", "soft-anti-affinity", "soft-affinity")


def _policy(body: Mapping[str, Any], version: Version) -> tuple[str, dict[str, Any]]:
    """The policy and rules a create request asks for, validated for ``version``."""
    if at_least(version, "2.64"):
        if "policies" in body:
            raise BadRequest("Additional properties are not allowed ('policies' was unexpected)")
        policy = body.get("policy")
        rules = body.get("rules") or {}
        if not isinstance(rules, dict) or set(rules) - {"max_server_per_host"}:
            raise BadRequest("Invalid input for field/attribute rules.")
        if rules and policy != "anti-affinity":
            raise BadRequest("Only anti-affinity policy supports rules.")
        limit = rules.get("max_server_per_host")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
            raise BadRequest("Invalid input for field/attribute max_server_per_host.")
        if limit is not None and limit < 1:
            raise BadRequest("Invalid input for field/attribute max_server_per_host.")
    else:
        if "policy" in body or "rules" in body:
            raise BadRequest("Additional properties are not allowed ('policy' was unexpected)")
        policies = body.get("policies")
        if not isinstance(policies, list) or len(policies) != 1:
            raise BadRequest("Invalid input for field/attribute policies.")
        policy, rules = policies[0], {}
    allowed = POLICIES if at_least(version, "2.15") else POLICIES[:2]
    if policy not in allowed:
        raise BadRequest(f"Invalid input for field/attribute policy. Value: {policy}.")
    return str(policy), dict(rules)


class ServerGroupOps(ComputeBase):
    """Server group operations of the compute model."""

    def group_doc(self, scope: CloudScope, group_id: str) -> dict[str, Any]:
        self.store.list(SERVER)  # settle finished deletes: they leave their groups
        group = self.store.get(SERVER_GROUP, group_id)
        if group is None or not visible(scope, group["project_id"]):
            raise NotFound(f"Instance group {group_id} could not be found.", kind="itemNotFound")
        return group

    def create_server_group(
        self, scope: CloudScope, body: Mapping[str, Any], version: Version = MAX_VERSION
    ) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "create_server_group", body.get("name"))
        name = body.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 255:
            raise BadRequest("Invalid input for field/attribute name.")
        policy, rules = _policy(body, version)
        with self.store.lock:
            used = len(self.store.find(SERVER_GROUP, project_id=scope.project_id))
            self.check_quota(scope.project_id, "server_groups", used, 1)
            return self.store.put(
                SERVER_GROUP,
                {
                    "id": self.cloud.new_id(),
                    "name": name,
                    "policy": policy,
                    "rules": rules,
                    "members": [],
                    "project_id": scope.project_id,
                    "user_id": scope.user_id,
                },
            )

    def get_server_group(self, scope: CloudScope, group_id: str) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "get_server_group", group_id)
        with self.store.lock:
            return self.group_doc(scope, group_id)

    def list_server_groups(
        self, scope: CloudScope, all_projects: bool = False
    ) -> list[dict[str, Any]]:
        self.sim.enter(scope, SERVICE, "list_server_groups")
        with self.store.lock:
            self.store.list(SERVER)  # settle finished deletes: they leave their groups
            groups = self.store.list(SERVER_GROUP)
        if all_projects and scope.is_admin:
            return groups
        return [g for g in groups if g["project_id"] == scope.project_id]

    def delete_server_group(self, scope: CloudScope, group_id: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_server_group", group_id)
        with self.store.lock:
            self.group_doc(scope, group_id)
            self.store.delete(SERVER_GROUP, group_id)

    # -- membership (used by server create/delete) ---------------------------------------
    def join_group(self, scope: CloudScope, group_id: str, server_id: str) -> None:
        """Add a new server to the group of its ``group`` scheduler hint (400 if unknown)."""
        try:
            group = self.group_doc(scope, group_id)
        except NotFound:
            raise BadRequest(f"Invalid server group {group_id}.") from None
        self.check_quota(scope.project_id, "server_group_members", len(group["members"]), 1)
        group["members"].append(server_id)
        self.store.put(SERVER_GROUP, group)

    def leave_groups(self, server_id: str) -> None:
        for group in self.store.list(SERVER_GROUP):
            if server_id in group["members"]:
                group["members"].remove(server_id)
                self.store.put(SERVER_GROUP, group)

    def groups_of(self, server_id: str) -> list[str]:
        return [g["id"] for g in self.store.list(SERVER_GROUP) if server_id in g["members"]]
