"""Networks (and their read-only segments) in the simulated Neutron (reference section 4.1).

A network is ``ACTIVE`` (``DOWN`` with ``admin_state_up: false``), optionally after a
``BUILD`` lasting the simulator's ``network.network.create`` delay. ``shared``,
``router:external`` and ``provider:*`` are admin-only. Deleting a network deletes its
subnets, and is refused (409 ``NetworkInUse``) while ports other than DHCP ports remain.
Each network has one segment document so ``GET /v2.0/segments?network_id=`` answers.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import Doc, conflict, forbidden
from kiln.cloud.sandbox.network.security_groups import SecurityGroupOps

_ADMIN_FIELDS = frozenset(
    {
        "shared",
        "router:external",
        "provider:network_type",
        "provider:physical_network",
        "provider:segmentation_id",
        "is_default",
    }
)
NETWORK_UPDATE_FIELDS = frozenset(
    {
        "name",
        "description",
        "admin_state_up",
        "port_security_enabled",
        "mtu",
        "qos_policy_id",
        "dns_domain",
        *_ADMIN_FIELDS,
    }
)
NETWORK_CREATE_FIELDS = NETWORK_UPDATE_FIELDS | {
    "availability_zone_hints",
    "project_id",
    "tenant_id",
    "tags",
}
#: ports Neutron removes by itself when their network goes
AUTO_DELETED_OWNERS = frozenset({"network:dhcp"})


def network_status(network: Mapping[str, Any]) -> str:
    return "ACTIVE" if network.get("admin_state_up", True) else "DOWN"


class NetworkOps(SecurityGroupOps):
    """Network operations."""

    def create_network(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_network")
        with self.store.lock:
            self._check_keys(body, NETWORK_CREATE_FIELDS, "network")
            self._admin_only(scope, body)
            project = self._project_for_create(scope, body)
            self._check_quota(project, "network")
            return self._new_network(project, body)

    def get_network(self, scope: CloudScope, network_id: str) -> Doc:
        self._enter(scope, "get_network", network_id)
        with self.store.lock:
            return self._get(scope, "network", network_id)

    def list_networks(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_networks")
        with self.store.lock:
            return self._list(scope, "network", filters)

    def update_network(self, scope: CloudScope, network_id: str, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "update_network", network_id)
        with self.store.lock:
            network = self._owned(scope, "network", network_id)
            self._check_keys(body, NETWORK_UPDATE_FIELDS, "network")
            self._admin_only(scope, body)
            for key, value in body.items():
                network[key] = "" if key == "description" and value is None else value
            if network["status"] != "BUILD":
                network["status"] = network_status(network)
            return self._touch("network", network)

    def delete_network(self, scope: CloudScope, network_id: str) -> None:
        self._enter(scope, "delete_network", network_id)
        with self.store.lock:
            network = self._owned(scope, "network", network_id)
            ports = self.store.find("port", network_id=network["id"])
            if any(p.get("device_owner") not in AUTO_DELETED_OWNERS for p in ports):
                raise conflict(
                    "NetworkInUse",
                    f"Unable to complete operation on network {network['id']}. There are one "
                    "or more ports still in use on the network.",
                )
            for port in ports:
                self.store.delete("port", port["id"])
            for subnet in self.store.find("subnet", network_id=network["id"]):
                self.store.delete("subnet", subnet["id"])
            for segment in self.store.find("segment", network_id=network["id"]):
                self.store.delete("segment", segment["id"])
            self.store.delete("network", network["id"])

    # -- segments --------------------------------------------------------------------------
    def list_segments(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_segments")
        with self.store.lock:
            return self._list(scope, "segment", filters)

    def get_segment(self, scope: CloudScope, segment_id: str) -> Doc:
        self._enter(scope, "get_segment", segment_id)
        with self.store.lock:
            return self._get(scope, "segment", segment_id)

    # -- internal --------------------------------------------------------------------------
    @staticmethod
    def _admin_only(scope: CloudScope | None, body: Mapping[str, Any]) -> None:
        restricted = sorted(k for k in body if k in _ADMIN_FIELDS)
        if restricted and scope is not None and not scope.is_admin:
            raise forbidden(f"Setting {', '.join(restricted)} requires admin privileges.")

    def _new_network(self, project_id: str, body: Mapping[str, Any]) -> Doc:
        network = self._new_doc(project_id, body)
        network_type = body.get("provider:network_type") or "vxlan"
        segmentation = body.get("provider:segmentation_id")
        if segmentation is None and network_type in ("vxlan", "vlan", "gre", "geneve"):
            segmentation = random.randint(1, 4094)
        network.update(
            {
                "admin_state_up": bool(body.get("admin_state_up", True)),
                "subnets": [],
                "shared": bool(body.get("shared", False)),
                "router:external": bool(body.get("router:external", False)),
                "port_security_enabled": bool(body.get("port_security_enabled", True)),
                "mtu": int(body.get("mtu") or 1450),
                "availability_zone_hints": list(body.get("availability_zone_hints") or []),
                "availability_zones": ["nova"],
                "qos_policy_id": body.get("qos_policy_id"),
                "dns_domain": body.get("dns_domain") or "",
                "l2_adjacency": True,
                "ipv4_address_scope": None,
                "ipv6_address_scope": None,
                "is_default": bool(body.get("is_default", False)),
                "provider:network_type": network_type,
                "provider:physical_network": body.get("provider:physical_network"),
                "provider:segmentation_id": segmentation,
            }
        )
        network["status"] = network_status(network)
        delay = self.sim.delay("network", "network", "create")
        if delay > 0:
            network["status"] = "BUILD"
        self.store.put("network", network)
        if delay > 0:
            self.store.schedule(
                "network", network["id"], delay, {"status": network_status(network)}
            )
        segment = {
            "id": self.cloud.new_id(),
            "name": None,
            "description": "",
            "network_id": network["id"],
            "network_type": network_type,
            "physical_network": network["provider:physical_network"],
            "segmentation_id": segmentation,
            "project_id": project_id,
            "tenant_id": project_id,
        }
        self.store.put("segment", segment)
        return network
