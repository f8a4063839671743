"""What load balancers are made from: providers, flavors (and their profiles),
availability zones (and theirs), and the per-project quotas.

Providers are fixed (``amphora``, the default); flavors and zones start empty and an
admin may add them (the ``octavia.flavor`` / ``octavia.availabilityzone`` constraints
look them up). Quotas are the simulator's (``loadbalancers``, ``listeners``, ...), shown
and changed in Octavia's names (``load_balancer``, ``listener``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.base import Document, OctaviaBase
from kiln.cloud.sandbox.load_balancer.rules import SERVICE, boolean, check_fields, required

PROVIDERS = (
    {"name": "amphora", "description": "The Octavia Amphora driver."},
    {"name": "octavia", "description": "Deprecated alias of the Octavia Amphora driver."},
)

#: Octavia's quota names -> the simulator's
QUOTA_NAMES = {
    "load_balancer": "loadbalancers",
    "listener": "listeners",
    "pool": "pools",
    "member": "members",
    "health_monitor": "healthmonitors",
}

#: catalog kinds: store kind, key field, fields a create takes, the profile field and kind
_CATALOG: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "lb_flavorprofile": ("id", ("name", "provider_name", "flavor_data"), None),
    "lb_flavor": (
        "id",
        ("name", "description", "flavor_profile_id", "enabled"),
        "lb_flavorprofile",
    ),
    "lb_availability_zone_profile": (
        "id",
        ("name", "provider_name", "availability_zone_data"),
        None,
    ),
    "lb_availability_zone": (
        "name",
        ("name", "description", "availability_zone_profile_id", "enabled"),
        "lb_availability_zone_profile",
    ),
}
_LABELS = {
    "lb_flavorprofile": "Flavor profile",
    "lb_flavor": "Flavor",
    "lb_availability_zone_profile": "Availability zone profile",
    "lb_availability_zone": "Availability zone",
}


def _profile_field(kind: str) -> str:
    return "flavor_profile_id" if kind == "lb_flavor" else "availability_zone_profile_id"


class CatalogOps(OctaviaBase):
    """Providers, flavors, availability zones and quotas."""

    def list_providers(self, scope: CloudScope) -> list[Document]:
        self.enter(scope, "list_providers")
        return [dict(p) for p in PROVIDERS]

    def provider_names(self) -> list[str]:
        return [p["name"] for p in PROVIDERS]

    # -- flavors, zones and their profiles ----------------------------------------------
    def create_catalog_entry(
        self, scope: CloudScope, kind: str, body: Mapping[str, Any]
    ) -> Document:
        """Admin: add a flavor, an availability zone, or a profile of either."""
        self.enter(scope, f"create_{kind}")
        if not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        key, fields, profile_kind = _CATALOG[kind]
        with self.store.lock:
            check_fields(body, fields)
            name = required(body, "name")
            if any(d.get("name") == name for d in self.store.list(kind)):
                raise Conflict(f"{_LABELS[kind]} {name} already exists.", service=SERVICE)
            document: Document = {field: body.get(field) for field in fields}
            if profile_kind is not None:
                boolean(body, "enabled")
                document["enabled"] = body.get("enabled", True)
                profile = required(body, _profile_field(kind))
                if self.store.get(profile_kind, str(profile)) is None:
                    raise BadRequest(f"Validation failure: {_LABELS[profile_kind]} not found.")
            else:
                provider = required(body, "provider_name")
                if provider not in self.provider_names():
                    raise BadRequest(f"Provider '{provider}' is not enabled.")
            document["id"] = name if key == "name" else self.cloud.new_id()
            return self.store.put(kind, document)

    def get_catalog_entry(self, scope: CloudScope, kind: str, key: str) -> Document:
        self.enter(scope, f"get_{kind}", key)
        if kind.endswith("profile") and not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        document = self.store.get(kind, key)
        if document is None:
            raise NotFound(f"{_LABELS[kind]} {key} not found.", service=SERVICE)
        return document

    def list_catalog(self, scope: CloudScope, kind: str, **filters: Any) -> list[Document]:
        self.enter(scope, f"list_{kind}")
        if kind.endswith("profile") and not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        return [
            d
            for d in self.store.list(kind)
            if all(str(d.get(k)).lower() == str(v).lower() for k, v in filters.items())
        ]

    def delete_catalog_entry(self, scope: CloudScope, kind: str, key: str) -> None:
        self.enter(scope, f"delete_{kind}", key)
        if not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        with self.store.lock:
            if self.store.get(kind, key) is None:
                raise NotFound(f"{_LABELS[kind]} {key} not found.", service=SERVICE)
            field = "flavor_id" if kind == "lb_flavor" else "availability_zone"
            if self.store.find("loadbalancer", **{field: key}):
                raise Conflict(f"{_LABELS[kind]} {key} is in use.", service=SERVICE)
            self.store.delete(kind, key)

    def flavor_enabled(self, flavor_id: str) -> bool:
        flavor = self.store.get("lb_flavor", flavor_id)
        return bool(flavor and flavor.get("enabled", True))

    def zone_enabled(self, name: str) -> bool:
        zone = self.store.get("lb_availability_zone", name)
        return bool(zone and zone.get("enabled", True))

    # -- quotas ---------------------------------------------------------------------------
    def get_quota(self, scope: CloudScope, project_id: str) -> Document:
        self.enter(scope, "get_quota", project_id)
        if project_id != scope.project_id and not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        quota: Document = {
            name: self.sim.quota(project_id, sim_name) for name, sim_name in QUOTA_NAMES.items()
        }
        return {**quota, "l7policy": -1, "l7rule": -1, "project_id": project_id}

    def list_quotas(self, scope: CloudScope) -> list[Document]:
        """The projects with their own quotas (all of them for an admin)."""
        self.enter(scope, "list_quotas")
        projects = [p for p in self.sim.project_quotas if scope.is_admin or p == scope.project_id]
        return [self.get_quota(scope, p) for p in projects]

    def update_quota(self, scope: CloudScope, project_id: str, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "update_quota", project_id)
        if not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        check_fields(body, (*QUOTA_NAMES, "l7policy", "l7rule"))
        overrides = self.sim.project_quotas.setdefault(project_id, {})
        for name, value in body.items():
            if name not in QUOTA_NAMES or value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < -1:
                raise BadRequest(f"Invalid input for field/attribute {name}. Value: '{value}'.")
            # -1 is Octavia's "unlimited"
            overrides[QUOTA_NAMES[name]] = 10**9 if value == -1 else value
        return self.get_quota(scope, project_id)

    def reset_quota(self, scope: CloudScope, project_id: str) -> None:
        self.enter(scope, "reset_quota", project_id)
        if not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        overrides = self.sim.project_quotas.get(project_id, {})
        for sim_name in QUOTA_NAMES.values():
            overrides.pop(sim_name, None)
