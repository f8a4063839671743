"""Security groups and their rules in the simulated Neutron (reference section 4.6).

Every project has a ``default`` group, made on first access (listing or reading groups,
creating a port), with ingress rules from itself and the two egress rules; it cannot be
deleted and no other group may take its name. A new group gets the two egress rules
(IPv4 and IPv6, any protocol). Rules are their own documents; a group shows its current
rules. Duplicates are 409 ``SecurityGroupRuleExists``; a bulk create is all or nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.errors import MultipleMatches
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import (
    Doc,
    NetworkBase,
    bad_request,
    conflict,
    neutron_error,
)
from kiln.cloud.sandbox.network.ipam import IpamError
from kiln.cloud.sandbox.network.rules import RULE_FIELDS, normalise_rule, rule_identity

GROUP_CREATE_FIELDS = frozenset(
    {"name", "description", "stateful", "project_id", "tenant_id", "tags", "shared"}
)
GROUP_UPDATE_FIELDS = frozenset({"name", "description", "stateful"})
DEFAULT_NAME = "default"


class SecurityGroupOps(NetworkBase):
    """Security group and rule operations."""

    # -- groups ----------------------------------------------------------------------------
    def create_security_group(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_security_group")
        with self.store.lock:
            self._check_keys(body, GROUP_CREATE_FIELDS, "security_group")
            project = self._project_for_create(scope, body)
            self.ensure_default_group(project)
            if body.get("name") == DEFAULT_NAME:
                raise conflict(
                    "SecurityGroupDefaultAlreadyExists", "Default security group already exists."
                )
            self._check_quota(project, "security_group")
            return self._new_group(project, body)

    def get_security_group(self, scope: CloudScope, group_id: str) -> Doc:
        self._enter(scope, "get_security_group", group_id)
        with self.store.lock:
            self.ensure_default_group(scope.project_id)
            return self._show_group(self._get(scope, "security_group", group_id))

    def list_security_groups(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_security_groups")
        with self.store.lock:
            self.ensure_default_group(scope.project_id)
            return [self._show_group(g) for g in self._list(scope, "security_group", filters)]

    def update_security_group(
        self, scope: CloudScope, group_id: str, body: Mapping[str, Any]
    ) -> Doc:
        self._enter(scope, "update_security_group", group_id)
        with self.store.lock:
            group = self._owned(scope, "security_group", group_id)
            self._check_keys(body, GROUP_UPDATE_FIELDS, "security_group")
            if "name" in body and body["name"] != group["name"]:
                if group["name"] == DEFAULT_NAME:
                    raise conflict(
                        "SecurityGroupCannotUpdateDefault",
                        "Updating default security group not allowed.",
                    )
                if body["name"] == DEFAULT_NAME:
                    raise conflict(
                        "SecurityGroupDefaultAlreadyExists",
                        "Default security group already exists.",
                    )
            toggled = "stateful" in body and bool(body["stateful"]) != group["stateful"]
            if toggled and self._ports_using(group["id"]):
                raise conflict(
                    "SecurityGroupInUse",
                    f"Security Group {group['id']} in use: cannot change 'stateful'.",
                )
            for key in ("name", "description"):
                if key in body:
                    group[key] = str(body[key] or "")
            if "stateful" in body:
                group["stateful"] = bool(body["stateful"])
            return self._show_group(self._touch("security_group", group))

    def delete_security_group(self, scope: CloudScope, group_id: str) -> None:
        self._enter(scope, "delete_security_group", group_id)
        with self.store.lock:
            group = self._owned(scope, "security_group", group_id)
            if group["name"] == DEFAULT_NAME and not scope.is_admin:
                raise conflict(
                    "SecurityGroupCannotRemoveDefault",
                    "Insufficient rights for removing default security group.",
                )
            if self._ports_using(group["id"]):
                raise conflict("SecurityGroupInUse", f"Security Group {group['id']} in use.")
            for rule in self.store.list("security_group_rule"):
                # A group's rules, and other groups' rules naming it as remote, go with it.
                if group["id"] in (rule["security_group_id"], rule.get("remote_group_id")):
                    self.store.delete("security_group_rule", rule["id"])
            self.store.delete("security_group", group["id"])

    # -- rules -----------------------------------------------------------------------------
    def create_security_group_rule(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_security_group_rule", body.get("security_group_id"))
        with self.store.lock:
            return self._add_rules(scope, [body])[0]

    def create_security_group_rules(
        self, scope: CloudScope, bodies: Sequence[Mapping[str, Any]]
    ) -> list[Doc]:
        self._enter(scope, "create_security_group_rules")
        with self.store.lock:
            return self._add_rules(scope, bodies)

    def get_security_group_rule(self, scope: CloudScope, rule_id: str) -> Doc:
        self._enter(scope, "get_security_group_rule", rule_id)
        with self.store.lock:
            return self._get(scope, "security_group_rule", rule_id)

    def list_security_group_rules(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_security_group_rules")
        with self.store.lock:
            self.ensure_default_group(scope.project_id)
            return self._list(scope, "security_group_rule", filters)

    def delete_security_group_rule(self, scope: CloudScope, rule_id: str) -> None:
        self._enter(scope, "delete_security_group_rule", rule_id)
        with self.store.lock:
            rule = self._owned(scope, "security_group_rule", rule_id)
            self.store.delete("security_group_rule", rule["id"])
            group = self.store.get("security_group", rule["security_group_id"])
            if group is not None:
                self._touch("security_group", group)

    # -- internal --------------------------------------------------------------------------
    def ensure_default_group(self, project_id: str) -> Doc:
        """The project's ``default`` group, made (with its four rules) when missing."""
        with self.store.lock:
            for group in self.store.find("security_group", project_id=project_id):
                if group["name"] == DEFAULT_NAME:
                    return group
            group = self._new_group(
                project_id,
                {"name": DEFAULT_NAME, "description": "Default security group"},
                egress=False,
            )
            for ethertype in ("IPv4", "IPv6"):
                for direction, remote in (("ingress", group["id"]), ("egress", None)):
                    self._store_rule(
                        project_id,
                        group["id"],
                        {"direction": direction, "ethertype": ethertype, "remote_group_id": remote},
                    )
            return group

    def security_group_ids_internal(
        self, project_id: str, names_or_ids: Sequence[str]
    ) -> list[str]:
        """Ids of the project's groups by name or id (400 for one that does not exist)."""
        with self.store.lock:
            self.ensure_default_group(project_id)
            groups = [
                g
                for g in self.store.list("security_group")
                if g["project_id"] == project_id or g.get("shared")
            ]
            ids: list[str] = []
            for wanted in names_or_ids:
                by_id = [g for g in groups if g["id"] == wanted]
                found = by_id or [g for g in groups if g["name"] == wanted]
                if not found:
                    raise bad_request(
                        f"Security group {wanted} not found.", "SecurityGroupNotFound"
                    )
                if len(found) > 1:
                    raise MultipleMatches(
                        f"Multiple security_group matches found for name '{wanted}', "
                        "use an ID to be more specific.",
                        kind="NeutronClientNoUniqueMatch",
                        service="network",
                    )
                ids.append(found[0]["id"])
            return ids

    def _new_group(self, project_id: str, body: Mapping[str, Any], *, egress: bool = True) -> Doc:
        group = self._new_doc(project_id, body)
        group.update(
            {
                "stateful": bool(body.get("stateful", True)),
                "shared": False,
                "security_group_rules": [],
            }
        )
        self.store.put("security_group", group)
        if egress:
            for ethertype in ("IPv4", "IPv6"):
                self._store_rule(
                    project_id, group["id"], {"direction": "egress", "ethertype": ethertype}
                )
        return self._show_group(group)

    def _show_group(self, group: Doc) -> Doc:
        """The group with its current rules (rules live in their own documents)."""
        group["security_group_rules"] = self.store.find(
            "security_group_rule", security_group_id=group["id"]
        )
        return group

    def _ports_using(self, group_id: str) -> list[Doc]:
        return [p for p in self.store.list("port") if group_id in (p.get("security_groups") or [])]

    def _store_rule(self, project_id: str, group_id: str, body: Mapping[str, Any]) -> Doc:
        rule = self._new_doc(project_id, body)
        del rule["name"]
        del rule["tags"]
        rule.update(normalise_rule(body))
        rule["security_group_id"] = group_id
        return self.store.put("security_group_rule", rule)

    def _add_rules(self, scope: CloudScope, bodies: Sequence[Mapping[str, Any]]) -> list[Doc]:
        """Validate every rule first, then store them all (all or nothing)."""
        planned: list[tuple[str, str, Mapping[str, Any]]] = []
        seen = {rule_identity(r) for r in self.store.list("security_group_rule")}
        existing = {rule_identity(r): r["id"] for r in self.store.list("security_group_rule")}
        for body in bodies:
            self._check_keys(body, RULE_FIELDS, "security_group_rule")
            group_id = body.get("security_group_id")
            if not group_id:
                raise bad_request("Invalid input: security_group_id is required.")
            group = self._owned(scope, "security_group", str(group_id))
            remote = body.get("remote_group_id")
            if remote is not None:
                self._get(scope, "security_group", str(remote))
            try:
                fields = normalise_rule(body)
            except IpamError as exc:
                raise neutron_error(exc.status, exc.kind, exc.message) from exc
            identity = rule_identity({**fields, "security_group_id": group["id"]})
            if identity in seen:
                rule_id = existing.get(identity, "")
                raise conflict(
                    "SecurityGroupRuleExists",
                    f"Security group rule already exists. Rule id is {rule_id}.",
                )
            seen.add(identity)
            planned.append((group["project_id"], group["id"], body))
        for project in {p for p, _, _ in planned}:
            wanted = sum(1 for p, _, _ in planned if p == project)
            self._check_quota(project, "security_group_rule", wanted)
        rules = [self._store_rule(p, g, b) for p, g, b in planned]
        for group_id in {g for _, g, _ in planned}:
            changed = self.store.get("security_group", group_id)
            if changed is not None:
                self._touch("security_group", changed)
        return rules
