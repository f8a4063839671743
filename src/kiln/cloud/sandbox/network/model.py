"""The simulated Neutron: every network operation, the seed data, tags and extensions.

:class:`NetworkModel` is the top of the layers (security groups < networks < subnets <
ports < routers < floating IPs, each in its own module). Here: the seed (external network
``public`` with ``public-subnet`` 172.24.4.0/24), ``GET /v2.0/extensions``, the tag
calls of every tagged collection, and the lookups other simulated services make
(``find_network_internal``, ``auto_network_internal``, ``addresses_of_device``, ...),
which run under the caller's store lock without ``enter``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from kiln.cloud.api.errors import MultipleMatches
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import Doc, bad_request, neutron_error, not_found
from kiln.cloud.sandbox.network.floating_ips import FloatingIpOps

#: tagged REST collection -> store kind
COLLECTION_KINDS = {
    "networks": "network",
    "subnets": "subnet",
    "ports": "port",
    "routers": "router",
    "floatingips": "floatingip",
    "security-groups": "security_group",
    "subnetpools": "subnetpool",
}
#: (alias, name, description) of the extensions the simulation implements
EXTENSIONS = (
    ("router", "Neutron L3 Router", "Routers, external gateways and floating IPs"),
    ("external-net", "Neutron external network", "The router:external network attribute"),
    ("security-group", "security-group", "Security groups and rules"),
    ("stateful-security-group", "Stateful security group", "The stateful group attribute"),
    ("port-security", "Port Security", "The port_security_enabled attribute"),
    ("allowed-address-pairs", "Allowed Address Pairs", "Extra addresses a port may use"),
    ("binding", "Port Binding", "The binding:* port attributes"),
    ("extra_dhcp_opt", "Neutron Extra DHCP options", "The extra_dhcp_opts port attribute"),
    ("dns-integration", "DNS Integration", "dns_name, dns_domain and dns_assignment"),
    ("standard-attr-tag", "Tag support for resources", "Tags on every tagged resource"),
    ("tag", "Tag support", "Tags on networks"),
    ("standard-attr-description", "standard-attr-description", "The description attribute"),
    ("standard-attr-timestamp", "Resource timestamps", "created_at and updated_at"),
    ("standard-attr-revisions", "Resource revision numbers", "The revision_number attribute"),
    ("project-id", "project_id field enabled", "project_id beside tenant_id"),
    ("quotas", "Quota management support", "Per-project quotas (409 OverQuota)"),
    ("availability_zone", "Availability Zone", "Availability zone hints and zones"),
    ("network_availability_zone", "Network Availability Zone", "Network AZ hints"),
    ("router_availability_zone", "Router Availability Zone", "Router AZ hints"),
    ("provider", "Provider Network", "The provider:* network attributes"),
    ("segment", "Segment", "Network segments (one per network)"),
    ("subnet_allocation", "Subnet Allocation", "Allocation of subnets from a subnet pool"),
    ("default-subnetpools", "Default Subnetpools", "Default pools and use_default_subnetpool"),
)

SEED_PROJECT = ""  # the seed belongs to the cloud, not to a project
PUBLIC_NETWORK = "public"
PUBLIC_SUBNET = "public-subnet"
PUBLIC_CIDR = "172.24.4.0/24"
#: devstack's name and default prefix length; a /16 (devstack: a /22) leaves room for many
DEFAULT_POOL = "shared-default-subnetpool-v4"
DEFAULT_POOL_PREFIXES = ("10.0.0.0/16",)
DEFAULT_POOL_PREFIXLEN = 26


class NetworkModel(FloatingIpOps):
    """The simulated Neutron v2.0."""

    def seed(self) -> None:
        """The external network ``public`` and its subnet, and the shared default IPv4
        subnet pool, unless already there."""
        with self.store.lock:
            if not self.store.find("subnetpool", name=DEFAULT_POOL):
                self._create_subnetpool(
                    None,
                    {
                        "name": DEFAULT_POOL,
                        "prefixes": list(DEFAULT_POOL_PREFIXES),
                        "default_prefixlen": DEFAULT_POOL_PREFIXLEN,
                        "shared": True,
                        "is_default": not self.store.find(
                            "subnetpool", is_default=True, ip_version=4
                        ),
                    },
                )
            existing = [
                n
                for n in self.store.find("network", name=PUBLIC_NETWORK)
                if n.get("router:external")
            ]
            network = existing[0] if existing else None
            if network is None:
                network = self._new_network(
                    SEED_PROJECT, {"name": PUBLIC_NETWORK, "router:external": True}
                )
                network["status"] = "ACTIVE"
                self.store.cancel("network", network["id"])
                self.store.put("network", network)
            if not self.store.find("subnet", network_id=network["id"]):
                self._create_subnet(
                    None,
                    {
                        "network_id": network["id"],
                        "name": PUBLIC_SUBNET,
                        "cidr": PUBLIC_CIDR,
                        "ip_version": 4,
                        "enable_dhcp": False,
                    },
                )

    # -- extensions ------------------------------------------------------------------------
    def list_extensions(self, scope: CloudScope) -> list[dict[str, Any]]:
        self._enter(scope, "list_extensions")
        return [_extension(*e) for e in EXTENSIONS]

    def get_extension(self, scope: CloudScope, alias: str) -> dict[str, Any]:
        self._enter(scope, "get_extension", alias)
        for extension in EXTENSIONS:
            if extension[0] == alias:
                return _extension(*extension)
        raise neutron_error(404, "NotFound", f"Extension with alias {alias} does not exist")

    # -- tags ------------------------------------------------------------------------------
    def get_tags(self, scope: CloudScope, collection: str, object_id: str) -> list[str]:
        self._enter(scope, "get_tags", object_id)
        with self.store.lock:
            return list(self._tagged(scope, collection, object_id, write=False)["tags"])

    def set_tags(
        self, scope: CloudScope, collection: str, object_id: str, tags: Sequence[str]
    ) -> list[str]:
        self._enter(scope, "set_tags", object_id)
        with self.store.lock:
            doc = self._tagged(scope, collection, object_id, write=True)
            if not isinstance(tags, list | tuple):
                raise bad_request("Invalid input: tags must be a list.")
            doc["tags"] = _unique([_tag(t) for t in tags])
            self._touch(COLLECTION_KINDS[collection], doc)
            return list(doc["tags"])

    def add_tag(self, scope: CloudScope, collection: str, object_id: str, tag: str) -> None:
        self._enter(scope, "add_tag", object_id)
        with self.store.lock:
            doc = self._tagged(scope, collection, object_id, write=True)
            doc["tags"] = _unique([*doc["tags"], _tag(tag)])
            self._touch(COLLECTION_KINDS[collection], doc)

    def has_tag(self, scope: CloudScope, collection: str, object_id: str, tag: str) -> None:
        """NotFound unless the object carries ``tag``."""
        self._enter(scope, "get_tag", object_id)
        with self.store.lock:
            doc = self._tagged(scope, collection, object_id, write=False)
            if tag not in doc["tags"]:
                raise neutron_error(404, "TagNotFound", f"Tag {tag} could not be found.")

    def delete_tag(self, scope: CloudScope, collection: str, object_id: str, tag: str) -> None:
        self._enter(scope, "delete_tag", object_id)
        with self.store.lock:
            doc = self._tagged(scope, collection, object_id, write=True)
            if tag not in doc["tags"]:
                raise neutron_error(404, "TagNotFound", f"Tag {tag} could not be found.")
            doc["tags"] = [t for t in doc["tags"] if t != tag]
            self._touch(COLLECTION_KINDS[collection], doc)

    def delete_tags(self, scope: CloudScope, collection: str, object_id: str) -> None:
        self._enter(scope, "delete_tags", object_id)
        with self.store.lock:
            doc = self._tagged(scope, collection, object_id, write=True)
            doc["tags"] = []
            self._touch(COLLECTION_KINDS[collection], doc)

    def _tagged(self, scope: CloudScope, collection: str, object_id: str, *, write: bool) -> Doc:
        kind = COLLECTION_KINDS.get(collection)
        if kind is None:
            raise neutron_error(404, "NotFound", f"Resource {collection} does not support tags.")
        return (self._owned if write else self._get)(scope, kind, object_id)

    # -- for the other services ------------------------------------------------------------
    def get_network_internal(self, network_id: str) -> Doc:
        """The network (NotFound when absent), whoever owns it."""
        with self.store.lock:
            network = self.store.get("network", network_id)
            if network is None:
                raise not_found("network", network_id)
            return network

    def find_network_internal(self, project_id: str, name_or_id: str) -> Doc:
        """A network ``project_id`` can see (own, shared, external) by id, then by name."""
        return self._find_internal(project_id, "network", name_or_id)

    def find_subnet_internal(self, project_id: str, name_or_id: str) -> Doc:
        """A subnet ``project_id`` can see, by id, then by name."""
        return self._find_internal(project_id, "subnet", name_or_id)

    def auto_network_internal(self, project_id: str) -> Doc:
        """The one tenant or shared non-external network ``project_id`` can see."""
        with self.store.lock:
            scope = CloudScope(project_id=project_id)
            candidates = [
                n
                for n in self.store.list("network")
                if self._visible(scope, "network", n) and not n.get("router:external")
            ]
            if len(candidates) > 1:
                raise bad_request(
                    "Multiple possible networks found, use a Network ID to be more specific.",
                    "BadRequest",
                )
            if not candidates:
                raise bad_request(
                    "No network is available for the project: create one or use a Network ID.",
                    "BadRequest",
                )
            return candidates[0]

    def addresses_of_device(self, device_id: str) -> dict[str, list[dict[str, Any]]]:
        """Nova's ``addresses``: per network name, fixed then floating addresses."""
        with self.store.lock:
            addresses: dict[str, list[dict[str, Any]]] = {}
            for port in self.ports_of_device(device_id):
                network = self.store.get("network", port["network_id"])
                label = (network or {}).get("name") or port["network_id"]
                entries = addresses.setdefault(label, [])
                for ip in port["fixed_ips"]:
                    entries.append(_address(ip["ip_address"], "fixed", port["mac_address"]))
                for fip in self.store.find("floatingip", port_id=port["id"]):
                    entries.append(
                        _address(fip["floating_ip_address"], "floating", port["mac_address"])
                    )
            return addresses

    def _find_internal(self, project_id: str, kind: str, name_or_id: str) -> Doc:
        with self.store.lock:
            scope = CloudScope(project_id=project_id)
            doc = self.store.get(kind, name_or_id)
            if doc is not None and self._visible(scope, kind, doc):
                return doc
            found = self._list(scope, kind, {"name": name_or_id})
            if not found:
                raise not_found(kind, name_or_id)
            if len(found) > 1:
                raise MultipleMatches(
                    f"Multiple {kind} matches found for name '{name_or_id}', use an ID to be "
                    "more specific.",
                    kind="NeutronClientNoUniqueMatch",
                    service="network",
                )
            return found[0]


def _extension(alias: str, name: str, description: str) -> dict[str, Any]:
    return {
        "alias": alias,
        "name": name,
        "description": description,
        "updated": "2024-01-01T00:00:00-00:00",
        "links": [],
    }


def _tag(value: Any) -> str:
    text = str(value)
    if not text or len(text) > 255:
        raise bad_request(f"Invalid tag {text!r}: tags are 1 to 255 characters.")
    return text


def _unique(tags: list[str]) -> list[str]:
    return list(dict.fromkeys(tags))


def _address(address: str, kind: str, mac: str) -> dict[str, Any]:
    return {
        "version": ipaddress.ip_address(address).version,
        "addr": address,
        "OS-EXT-IPS:type": kind,
        "OS-EXT-IPS-MAC:mac_addr": mac,
    }
