"""Flavors: the seeded m1.* sizes, admin create/delete, extra specs and private access.

A flavor document holds every field at its newest shape (``swap`` an int, ``description``,
``extra_specs``); ``views`` trims it for older microversions. ``_access`` lists the
projects that may use a private flavor.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute.base import FLAVOR, SERVICE, ComputeBase, require_admin

#: (id, name, ram MB, vcpus, disk GB) of the seeded public flavors
SEED_FLAVORS = (
    ("1", "m1.tiny", 512, 1, 1),
    ("2", "m1.small", 2048, 1, 20),
    ("3", "m1.medium", 4096, 2, 40),
    ("4", "m1.large", 8192, 4, 80),
    ("5", "m1.xlarge", 16384, 8, 160),
)

_FLAVOR_ID = re.compile(r"^[\w.\- ]{1,255}$")
_EXTRA_SPEC_KEY = re.compile(r"^[\w.\-: ]{1,255}$")


def new_flavor(
    flavor_id: str, name: str, ram: int, vcpus: int, disk: int, **extra: Any
) -> dict[str, Any]:
    return {
        "id": flavor_id,
        "name": name,
        "ram": ram,
        "vcpus": vcpus,
        "disk": disk,
        "swap": 0,
        "OS-FLV-EXT-DATA:ephemeral": 0,
        "rxtx_factor": 1.0,
        "os-flavor-access:is_public": True,
        "OS-FLV-DISABLED:disabled": False,
        "description": None,
        "extra_specs": {},
        "_access": [],
        **extra,
    }


def _integer(body: Mapping[str, Any], key: str, minimum: int, default: int | None = None) -> int:
    value = body.get(key, default)
    if value == "" and default is not None:  # Nova accepts "" for swap
        value = default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"Invalid input for field/attribute {key}.") from None
    if (isinstance(value, float) and value != number) or number < minimum:
        raise BadRequest(f"Invalid input for field/attribute {key}: must be >= {minimum}.")
    return number


class FlavorOps(ComputeBase):
    """Flavor operations of the compute model."""

    def seed_flavors(self) -> None:
        for flavor_id, name, ram, vcpus, disk in SEED_FLAVORS:
            if not self.store.exists(FLAVOR, flavor_id):
                self.store.put(FLAVOR, new_flavor(flavor_id, name, ram, vcpus, disk))

    # -- lookups -----------------------------------------------------------------------
    def flavor_doc(self, scope: CloudScope, flavor_id: str) -> dict[str, Any]:
        flavor = self.store.get(FLAVOR, flavor_id)
        if flavor is None or not self.flavor_visible(scope, flavor):
            raise NotFound(f"Flavor {flavor_id} could not be found.", kind="itemNotFound")
        return flavor

    @staticmethod
    def flavor_visible(scope: CloudScope, flavor: Mapping[str, Any]) -> bool:
        return (
            scope.is_admin
            or flavor["os-flavor-access:is_public"]
            or scope.project_id in flavor["_access"]
        )

    # -- operations --------------------------------------------------------------------
    def get_flavor(self, scope: CloudScope, flavor_id: str) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "get_flavor", flavor_id)
        with self.store.lock:
            return self.flavor_doc(scope, flavor_id)

    def list_flavors(
        self, scope: CloudScope, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """``is_public``: true (default: public and accessible), false, or None (all)."""
        self.sim.enter(scope, SERVICE, "list_flavors")
        filters = dict(filters or {})
        wanted = str(filters.pop("is_public", "true")).lower()
        with self.store.lock:
            found = [f for f in self.store.list(FLAVOR) if self.flavor_visible(scope, f)]
        if wanted in ("true", "1", "yes", "t", "on"):
            found = [
                f
                for f in found
                if f["os-flavor-access:is_public"] or scope.project_id in f["_access"]
            ]
        elif wanted in ("false", "0", "no", "f", "off"):
            found = [f for f in found if not f["os-flavor-access:is_public"]]
        for key, minimum in (("minRam", "ram"), ("minDisk", "disk")):
            if key in filters:
                limit = _integer(filters, key, 0)
                found = [f for f in found if f[minimum] >= limit]
        if "name" in filters:
            found = [f for f in found if f["name"] == filters["name"]]
        return found

    def create_flavor(self, scope: CloudScope, body: Mapping[str, Any]) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "create_flavor", body.get("name"))
        require_admin(scope, "os_compute_api:os-flavor-manage:create")
        name = body.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 255:
            raise BadRequest("Invalid input for field/attribute name.")
        flavor_id = body.get("id")
        if flavor_id in (None, "auto"):
            flavor_id = self.cloud.new_id()
        if not isinstance(flavor_id, str) or not _FLAVOR_ID.match(flavor_id):
            raise BadRequest("Invalid input for field/attribute id.")
        is_public = body.get("os-flavor-access:is_public", True)
        if not isinstance(is_public, bool):
            raise BadRequest("Invalid input for field/attribute os-flavor-access:is_public.")
        try:
            rxtx = float(body.get("rxtx_factor", 1.0))
        except (TypeError, ValueError):
            raise BadRequest("Invalid input for field/attribute rxtx_factor.") from None
        flavor = new_flavor(
            flavor_id,
            name,
            _integer(body, "ram", 1),
            _integer(body, "vcpus", 1),
            _integer(body, "disk", 0, 0),
            swap=_integer(body, "swap", 0, 0),
            rxtx_factor=rxtx,
            description=body.get("description"),
            **{
                "OS-FLV-EXT-DATA:ephemeral": _integer(body, "OS-FLV-EXT-DATA:ephemeral", 0, 0),
                "os-flavor-access:is_public": is_public,
            },
        )
        with self.store.lock:
            if self.store.exists(FLAVOR, flavor_id):
                raise Conflict(f"Flavor with ID {flavor_id} already exists.")
            if self.store.find(FLAVOR, name=name):
                raise Conflict(f"Flavor with name {name} already exists.")
            return self.store.put(FLAVOR, flavor)

    def delete_flavor(self, scope: CloudScope, flavor_id: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_flavor", flavor_id)
        require_admin(scope, "os_compute_api:os-flavor-manage:delete")
        with self.store.lock:
            self.flavor_doc(scope, flavor_id)
            self.store.delete(FLAVOR, flavor_id)

    # -- extra specs -------------------------------------------------------------------
    def get_extra_specs(self, scope: CloudScope, flavor_id: str) -> dict[str, str]:
        self.sim.enter(scope, SERVICE, "get_flavor_extra_specs", flavor_id)
        with self.store.lock:
            specs: dict[str, str] = self.flavor_doc(scope, flavor_id)["extra_specs"]
            return specs

    def set_extra_specs(
        self, scope: CloudScope, flavor_id: str, specs: Mapping[str, Any]
    ) -> dict[str, str]:
        """Merge ``specs`` into the flavor's extra specs (admin)."""
        self.sim.enter(scope, SERVICE, "set_flavor_extra_specs", flavor_id)
        require_admin(scope, "os_compute_api:os-flavor-extra-specs:create")
        clean: dict[str, str] = {}
        for key, value in specs.items():
            if not _EXTRA_SPEC_KEY.match(str(key)):
                raise BadRequest(f"Invalid extra spec key {key!r}.")
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise BadRequest(f"Invalid value for extra spec {key!r}.")
            if len(str(value)) > 255:
                raise BadRequest(f"Value of extra spec {key!r} is longer than 255.")
            clean[str(key)] = str(value)
        with self.store.lock:
            flavor = self.flavor_doc(scope, flavor_id)
            flavor["extra_specs"].update(clean)
            self.store.put(FLAVOR, flavor)
            specs_after: dict[str, str] = flavor["extra_specs"]
            return specs_after

    def delete_extra_spec(self, scope: CloudScope, flavor_id: str, key: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_flavor_extra_spec", flavor_id)
        require_admin(scope, "os_compute_api:os-flavor-extra-specs:delete")
        with self.store.lock:
            flavor = self.flavor_doc(scope, flavor_id)
            if key not in flavor["extra_specs"]:
                raise NotFound(
                    f"Flavor {flavor_id} has no extra specs with key {key}.",
                    kind="itemNotFound",
                )
            del flavor["extra_specs"][key]
            self.store.put(FLAVOR, flavor)

    # -- access --------------------------------------------------------------------------
    def get_flavor_access(self, scope: CloudScope, flavor_id: str) -> list[str]:
        self.sim.enter(scope, SERVICE, "get_flavor_access", flavor_id)
        with self.store.lock:
            flavor = self.flavor_doc(scope, flavor_id)
            if flavor["os-flavor-access:is_public"]:
                raise NotFound("Access list not available for public flavors.")
            require_admin(scope, "os_compute_api:os-flavor-access")
            return list(flavor["_access"])

    def add_flavor_access(self, scope: CloudScope, flavor_id: str, project_id: str) -> list[str]:
        self.sim.enter(scope, SERVICE, "add_flavor_access", flavor_id)
        require_admin(scope, "os_compute_api:os-flavor-access:add_tenant_access")
        with self.store.lock:
            flavor = self.flavor_doc(scope, flavor_id)
            if flavor["os-flavor-access:is_public"]:
                raise Conflict("Can not add access to a public flavor.")
            if project_id in flavor["_access"]:
                raise Conflict(
                    f"Flavor access already exists for flavor {flavor_id} and project "
                    f"{project_id} combination."
                )
            flavor["_access"].append(project_id)
            self.store.put(FLAVOR, flavor)
            return list(flavor["_access"])

    def remove_flavor_access(self, scope: CloudScope, flavor_id: str, project_id: str) -> list[str]:
        self.sim.enter(scope, SERVICE, "remove_flavor_access", flavor_id)
        require_admin(scope, "os_compute_api:os-flavor-access:remove_tenant_access")
        with self.store.lock:
            flavor = self.flavor_doc(scope, flavor_id)
            if project_id not in flavor["_access"]:
                raise NotFound(
                    f"Flavor access not found for {flavor_id} / {project_id} combination.",
                    kind="itemNotFound",
                )
            flavor["_access"].remove(project_id)
            self.store.put(FLAVOR, flavor)
            return list(flavor["_access"])
