"""Servers: create (BUILD -> ACTIVE), show, list, update and delete (deleting -> 404).

A server document keeps Nova's fields at their newest shape plus private ``_`` fields
(the flavor it runs with, the ports Nova created, its block devices, port tags);
``views`` shows it at a microversion. Deleting releases the ports, volumes and group
membership when the ``deleting`` task ends (hook ``compute.server.deleted``).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, CloudError, Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import states, validation
from kiln.cloud.sandbox.compute.base import (
    FLAVOR,
    HOST,
    MAX_VERSION,
    SERVER,
    SERVICE,
    ZONE,
    Version,
    at_least,
    require_admin,
)
from kiln.cloud.sandbox.compute.boot import BootOps, Undo, block_device_mappings
from kiln.cloud.sandbox.compute.flavors import FlavorOps
from kiln.cloud.sandbox.compute.keypairs import KeypairOps
from kiln.cloud.sandbox.compute.server_groups import ServerGroupOps

BUILT_HOOK = "compute.server.built"
DELETED_HOOK = "compute.server.deleted"

_CREATE_FIELDS = frozenset(
    {
        "name", "imageRef", "flavorRef", "networks", "key_name", "security_groups",
        "user_data", "metadata", "availability_zone", "block_device_mapping_v2",
        "block_device_mapping", "config_drive", "adminPass", "OS-DCF:diskConfig",
        "personality", "tags", "description", "reservation_id", "min_count", "max_count",
        "return_reservation_id", "accessIPv4", "accessIPv6", "hostname", "host",
        "hypervisor_hostname", "trusted_image_certificates",
    }
)  # fmt: skip
_UPDATE_FIELDS = frozenset({"name", "description", "accessIPv4", "accessIPv6", "hostname"})


def flavor_snapshot(flavor: Mapping[str, Any]) -> dict[str, Any]:
    """What a server remembers of its flavor (it outlives a deleted flavor)."""
    return {
        "id": flavor["id"],
        "original_name": flavor["name"],
        "vcpus": flavor["vcpus"],
        "ram": flavor["ram"],
        "disk": flavor["disk"],
        "ephemeral": flavor["OS-FLV-EXT-DATA:ephemeral"],
        "swap": flavor["swap"],
        "extra_specs": dict(flavor["extra_specs"]),
    }


def _networks(body: Mapping[str, Any], version: Version) -> Any:
    """The ``networks`` request field, checked: a list of NICs, ``auto`` or ``none``."""
    if "networks" not in body:
        if at_least(version, "2.37"):
            raise BadRequest("Invalid input: 'networks' is a required property.")
        return None
    networks = body["networks"]
    if networks in ("auto", "none"):
        if not at_least(version, "2.37"):
            raise validation.invalid("networks", f"{networks!r} needs microversion 2.37")
        return networks
    if not isinstance(networks, list):
        raise validation.invalid("networks", "must be a list, 'auto' or 'none'")
    cleaned = []
    for entry in networks:
        if not isinstance(entry, Mapping) or not (entry.get("uuid") or entry.get("port")):
            raise validation.invalid("networks", "each entry needs a uuid or a port")
        if entry.get("tag") is not None and not at_least(version, "2.42"):
            raise validation.invalid("networks", "a NIC tag needs microversion 2.42")
        if entry.get("fixed_ip") is not None:
            validation.ip_address(entry["fixed_ip"], "fixed_ip")
        cleaned.append(dict(entry))
    return cleaned


class ServerOps(BootOps, FlavorOps, KeypairOps, ServerGroupOps):
    """Server lifecycle operations of the compute model."""

    # -- create --------------------------------------------------------------------------
    def create_server(
        self,
        scope: CloudScope,
        body: Mapping[str, Any],
        scheduler_hints: Mapping[str, Any] | None = None,
        version: Version = MAX_VERSION,
    ) -> dict[str, Any]:
        """A new server in BUILD; ``_admin_pass`` holds the password the answer shows."""
        self.sim.enter(scope, SERVICE, "create_server", body.get("name"))
        unknown = set(body) - _CREATE_FIELDS
        if unknown:
            raise BadRequest(f"Additional properties are not allowed ({sorted(unknown)!r})")
        name = validation.name(body.get("name"))
        networks = _networks(body, version)
        metadata = validation.metadata(body.get("metadata") or {})
        user_data = validation.user_data(body.get("user_data"))
        tags = validation.tags(body["tags"]) if body.get("tags") is not None else []
        if tags and not at_least(version, "2.52"):
            raise validation.invalid("tags", "needs microversion 2.52")
        if body.get("personality") and at_least(version, "2.57"):
            raise BadRequest("Additional properties are not allowed ('personality')")
        zone = body.get("availability_zone") or ZONE
        if str(zone).split(":")[0] != ZONE:
            raise BadRequest("The requested availability zone is not available")
        disk_config = body.get("OS-DCF:diskConfig", "MANUAL")
        if disk_config not in ("AUTO", "MANUAL"):
            raise validation.invalid("OS-DCF:diskConfig")
        group_names = [
            str(g.get("name") if isinstance(g, Mapping) else g)
            for g in body.get("security_groups") or []
        ]
        mappings = block_device_mappings(body, version)
        image_ref = body.get("imageRef") or ""
        image_ref = validation.reference_id(image_ref, "imageRef") if image_ref else ""
        volume_boot = any(
            m["boot_index"] == 0 and m["destination_type"] == "volume" for m in mappings
        )
        if not image_ref and not volume_boot:
            local = [m for m in mappings if m["boot_index"] == 0 and m["source_type"] == "image"]
            if not local:
                raise BadRequest(
                    "Block Device Mapping is Invalid: Boot sequence for the instance and "
                    "image/block device mapping combination is not valid."
                )
            image_ref = local[0]["uuid"]
        hints = dict(scheduler_hints or {})
        with self.store.lock:
            flavor = self._requested_flavor(scope, body.get("flavorRef"))
            self._check_server_quotas(scope, flavor)
            if body.get("key_name") is not None:
                try:
                    keypair = self.keypair_doc(scope.user_id, str(body["key_name"]))
                except NotFound:
                    raise BadRequest("Invalid key_name provided.") from None
            if image_ref and not volume_boot:
                self.boot_image(scope, image_ref, flavor, local_root=True)
            server_id = self.cloud.new_id()
            now = self.cloud.timestamp()
            server: dict[str, Any] = {
                "id": server_id,
                "name": name,
                "tenant_id": scope.project_id,
                "user_id": scope.user_id,
                "metadata": metadata,
                "hostId": hashlib.sha224(f"{scope.project_id}{HOST}".encode()).hexdigest(),
                "image": {"id": image_ref} if image_ref and not volume_boot else "",
                "created": now,
                "updated": now,
                "accessIPv4": body.get("accessIPv4") or "",
                "accessIPv6": body.get("accessIPv6") or "",
                "key_name": keypair["name"] if body.get("key_name") is not None else None,
                "security_groups": [{"name": n} for n in group_names or ["default"]],
                "OS-DCF:diskConfig": disk_config,
                "OS-EXT-AZ:availability_zone": ZONE,
                "config_drive": "True" if body.get("config_drive") else "",
                "progress": 0,
                "OS-SRV-USG:launched_at": None,
                "OS-SRV-USG:terminated_at": None,
                "OS-EXT-SRV-ATTR:instance_name": f"instance-{server_id[:8]}",
                "OS-EXT-SRV-ATTR:host": HOST,
                "OS-EXT-SRV-ATTR:hypervisor_hostname": HOST,
                "OS-EXT-SRV-ATTR:hostname": re.sub(r"[^a-z0-9-]", "-", name.lower())[:63],
                "OS-EXT-SRV-ATTR:user_data": user_data,
                "OS-EXT-SRV-ATTR:reservation_id": body.get("reservation_id")
                or f"r-{secrets.token_hex(4)}",
                "locked": False,
                "locked_reason": None,
                "description": validation.description(body.get("description")),
                "tags": tags,
                "fault": None,
                **states.state("building", "scheduling", states.NOSTATE),
                "_flavor": flavor_snapshot(flavor),
                "_old_flavor": None,
                "_volumes": [],
                "_created_ports": [],
                "_port_tags": {},
                "_admin_pass": body.get("adminPass") or secrets.token_urlsafe(9),
            }
            undo: Undo = []
            try:
                self.plug_networks(scope, server, networks, group_names, undo)
                self.plan_volumes(scope, server, mappings, flavor, undo)
                if hints.get("group"):
                    self.join_group(scope, str(hints["group"]), server_id)
            except Exception:
                self.leave_groups(server_id)
                for action in reversed(undo):
                    try:
                        action()
                    except CloudError:
                        pass  # best effort: the original error is what the caller needs
                raise
            if networks == "none" or not self._has_ports(server_id):
                server["security_groups"] = [] if networks == "none" else server["security_groups"]
            self.store.put(SERVER, server)
            self.run_task(
                scope,
                server,
                "create_server",
                "create",
                start={},
                steps=[states.state("building", "spawning")],
                final={
                    **states.state("active", None, states.RUNNING),
                    "OS-SRV-USG:launched_at": self.cloud.timestamp(),
                    "progress": 100,
                },
                hook=BUILT_HOOK,
            )
            return server

    def _requested_flavor(self, scope: CloudScope, flavor_ref: Any) -> dict[str, Any]:
        flavor_id = validation.reference_id(flavor_ref, "flavorRef")
        try:
            return self.flavor_doc(scope, flavor_id)
        except NotFound:
            raise BadRequest(f"Flavor {flavor_id} could not be found.") from None

    def _check_server_quotas(self, scope: CloudScope, flavor: Mapping[str, Any]) -> None:
        usage = self.usage(scope.project_id)
        self.check_quota(scope.project_id, "instances", usage["instances"], 1)
        self.check_quota(scope.project_id, "cores", usage["cores"], flavor["vcpus"])
        self.check_quota(scope.project_id, "ram", usage["ram"], flavor["ram"])

    def usage(self, project_id: str) -> dict[str, int]:
        servers = self.project_servers(project_id)
        return {
            "instances": len(servers),
            "cores": sum(s["_flavor"]["vcpus"] for s in servers),
            "ram": sum(s["_flavor"]["ram"] for s in servers),
        }

    def _has_ports(self, server_id: str) -> bool:
        neutron = self.service("network")
        return bool(neutron is not None and neutron.ports_of_device(server_id))

    def server_built(self, kind: str, server: dict[str, Any]) -> None:
        """Hook: the build ended; attach the volumes it created, or fail the server."""
        error = self.attach_pending_volumes(server)
        if error is not None:
            server.update(states.state("error", None, states.NOSTATE))
            server["fault"] = {"code": 500, "message": error, "created": self.cloud.timestamp()}

    # -- read ----------------------------------------------------------------------------
    def get_server(self, scope: CloudScope, server_id: str) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "get_server", server_id)
        with self.store.lock:
            return self.server_doc(scope, server_id)

    def list_servers(
        self, scope: CloudScope, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Filters: ``name`` (regex), ``status``, ``reservation_id``, ``flavor``, ``image``,
        ``tags``, ``all_tenants`` and ``project_id``/``tenant_id`` (admin)."""
        self.sim.enter(scope, SERVICE, "list_servers")
        filters = dict(filters or {})
        all_tenants = validation.boolean(
            filters.pop("all_tenants", "false") or "true", "all_tenants"
        )
        project = filters.pop("project_id", None) or filters.pop("tenant_id", None)
        if (all_tenants or (project and project != scope.project_id)) and not scope.is_admin:
            require_admin(scope, "os_compute_api:servers:index:get_all_tenants")
        with self.store.lock:
            servers = self.store.list(SERVER)
        if project:
            servers = [s for s in servers if s["tenant_id"] == project]
        elif not all_tenants:
            servers = [s for s in servers if s["tenant_id"] == scope.project_id]
        return [s for s in servers if _matches(s, filters)]

    # -- update and delete ---------------------------------------------------------------
    def update_server(
        self,
        scope: CloudScope,
        server_id: str,
        body: Mapping[str, Any],
        version: Version = MAX_VERSION,
    ) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "update_server", server_id)
        allowed = set(_UPDATE_FIELDS)
        if not at_least(version, "2.19"):
            allowed.discard("description")
        if set(body) - allowed:
            raise BadRequest(
                f"Additional properties are not allowed ({sorted(set(body) - allowed)!r})"
            )
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            if "name" in body:
                server["name"] = validation.name(body["name"])
            if "description" in body:
                server["description"] = validation.description(body["description"])
            for field, ip_version in (("accessIPv4", 4), ("accessIPv6", 6)):
                if field in body:
                    value = body[field]
                    server[field] = validation.ip_address(value, field, ip_version) if value else ""
            if "hostname" in body:
                server["OS-EXT-SRV-ATTR:hostname"] = validation.name(body["hostname"], "hostname")
            server["updated"] = self.cloud.timestamp()
            return self.store.put(SERVER, server)

    def delete_server(self, scope: CloudScope, server_id: str) -> None:
        """Start deleting: task ``deleting``, then the server is gone and its resources freed."""
        self.sim.enter(scope, SERVICE, "delete_server", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            if server[states.TASK_STATE] == "deleting":
                return
            if server["locked"] and not scope.is_admin:
                raise Conflict(f"Instance {server_id} is locked", kind="conflictingRequest")
            self.store.cancel(SERVER, server_id)
            self.run_task(
                scope,
                server,
                "delete_server",
                "delete",
                start={states.TASK_STATE: "deleting"},
                steps=[],
                final={},
                hook=DELETED_HOOK,
            )

    def server_deleted(self, kind: str, server: dict[str, Any]) -> None:
        """Hook: the delete ended; free ports, volumes and group membership."""
        self.release(server)
        self.store.delete(SERVER, server["id"])

    def release(self, server: Mapping[str, Any]) -> None:
        """Delete Nova-created ports, unbind the others, detach volumes, leave groups."""
        neutron = self.service("network")
        if neutron is not None:
            for port in neutron.ports_of_device(server["id"]):
                try:
                    if port["id"] in server["_created_ports"]:
                        neutron.delete_port_internal(port["id"])
                    else:
                        neutron.unbind_port(port["id"])
                except NotFound:
                    pass
        cinder = self.service("block_storage")
        if cinder is not None:
            for record in server["_volumes"]:
                try:
                    if not record["pending"]:
                        cinder.detach_volume(record["volume_id"], server["id"])
                    if record["delete_on_termination"]:
                        cinder.delete_volume_internal(record["volume_id"])
                except CloudError:
                    pass  # a volume already gone or busy stays as it is, like Nova's cleanup
        self.leave_groups(server["id"])

    def flavor_of(self, scope: CloudScope, flavor_ref: Any) -> dict[str, Any]:
        """The flavor a resize asks for (400 when unknown)."""
        return self._requested_flavor(scope, flavor_ref)

    def all_flavors(self) -> list[dict[str, Any]]:
        return self.store.list(FLAVOR)


def _name_matches(server: Mapping[str, Any], wanted: str) -> bool:
    """Nova treats ``name`` as a regular expression."""
    try:
        return re.search(wanted, server["name"]) is not None
    except re.error:
        return wanted in server["name"]


def _image_id(server: Mapping[str, Any]) -> str | None:
    image = server["image"]
    return image.get("id") if isinstance(image, Mapping) else None


_FILTERS: dict[str, Any] = {
    "name": _name_matches,
    "status": lambda s, w: s["status"] == w.upper(),
    "reservation_id": lambda s, w: s["OS-EXT-SRV-ATTR:reservation_id"] == w,
    "flavor": lambda s, w: s["_flavor"]["id"] == w,
    "image": lambda s, w: _image_id(s) == w,
    "tags": lambda s, w: set(w.split(",")) <= set(s["tags"]),
    "tags-any": lambda s, w: bool(set(w.split(",")) & set(s["tags"])),
    "not-tags": lambda s, w: not set(w.split(",")) <= set(s["tags"]),
}
_IGNORED = frozenset({"limit", "marker", "sort_key", "sort_dir", "deleted", "changes-since"})


def _matches(server: Mapping[str, Any], filters: Mapping[str, str]) -> bool:
    """Whether ``server`` passes every filter (unknown scalar fields compare as text)."""
    return all(_passes(server, key, wanted) for key, wanted in filters.items())


def _passes(server: Mapping[str, Any], key: str, wanted: str) -> bool:
    if key in _IGNORED:
        return True
    test = _FILTERS.get(key)
    if test is not None:
        return bool(test(server, wanted))
    value = server.get(key)
    return value is None or isinstance(value, dict | list) or str(value) == wanted
