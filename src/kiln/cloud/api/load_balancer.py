"""The load-balancing client contract (Octavia v2) the OS::Octavia::* plugins use.

Bodies are the inside of the REST envelope in Octavia's field names (``{"vip_subnet_id":
..., "name": ...}`` for ``{"loadbalancer": {...}}``). Every object has a
``provisioning_status`` (PENDING_CREATE / PENDING_UPDATE / PENDING_DELETE / ACTIVE /
DELETED / ERROR) the plugins poll; while a load balancer's tree is pending, mutations
raise :class:`~kiln.cloud.api.errors.Conflict` (retry on the next poll). Deletes raise
NotFound when the object is already gone. ``find_*`` follow openstacksdk: by id, then by
name (NotFound / MultipleMatches). Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kiln.cloud.api.records import Record


def _ids(value: Any) -> list[str]:
    """The ids of a ``[{"id": ...}]`` list (None -> [])."""
    return [str(item["id"]) for item in value or []]


class OctaviaRecord(Record):
    """Any Octavia object: the two statuses every one of them has."""

    @property
    def provisioning_status(self) -> str | None:
        return self.raw.get("provisioning_status")

    @property
    def operating_status(self) -> str | None:
        return self.raw.get("operating_status")

    @property
    def status(self) -> str | None:
        """The status the plugins poll: ``provisioning_status``."""
        return self.provisioning_status

    @property
    def project_id(self) -> str | None:
        return self.raw.get("project_id")


class LoadBalancer(OctaviaRecord):
    @property
    def vip_address(self) -> str | None:
        return self.raw.get("vip_address")

    @property
    def vip_port_id(self) -> str | None:
        return self.raw.get("vip_port_id")

    @property
    def vip_subnet_id(self) -> str | None:
        return self.raw.get("vip_subnet_id")

    @property
    def vip_network_id(self) -> str | None:
        return self.raw.get("vip_network_id")

    @property
    def flavor_id(self) -> str | None:
        return self.raw.get("flavor_id")

    @property
    def listener_ids(self) -> list[str]:
        return _ids(self.raw.get("listeners"))

    @property
    def pool_ids(self) -> list[str]:
        return _ids(self.raw.get("pools"))


class Listener(OctaviaRecord):
    @property
    def protocol(self) -> str | None:
        return self.raw.get("protocol")

    @property
    def protocol_port(self) -> int | None:
        return self.raw.get("protocol_port")

    @property
    def default_pool_id(self) -> str | None:
        return self.raw.get("default_pool_id")

    @property
    def loadbalancer_ids(self) -> list[str]:
        return _ids(self.raw.get("loadbalancers"))


class Pool(OctaviaRecord):
    @property
    def protocol(self) -> str | None:
        return self.raw.get("protocol")

    @property
    def lb_algorithm(self) -> str | None:
        return self.raw.get("lb_algorithm")

    @property
    def healthmonitor_id(self) -> str | None:
        return self.raw.get("healthmonitor_id")

    @property
    def listener_ids(self) -> list[str]:
        return _ids(self.raw.get("listeners"))

    @property
    def loadbalancer_ids(self) -> list[str]:
        return _ids(self.raw.get("loadbalancers"))

    @property
    def member_ids(self) -> list[str]:
        return _ids(self.raw.get("members"))


class Member(OctaviaRecord):
    @property
    def address(self) -> str | None:
        return self.raw.get("address")

    @property
    def protocol_port(self) -> int | None:
        return self.raw.get("protocol_port")

    @property
    def weight(self) -> int | None:
        return self.raw.get("weight")

    @property
    def pool_id(self) -> str | None:
        """The pool the member belongs to (the sandbox and Octavia >= 2.x show it)."""
        return self.raw.get("pool_id")


class HealthMonitor(OctaviaRecord):
    @property
    def type(self) -> str | None:
        return self.raw.get("type")

    @property
    def delay(self) -> int | None:
        return self.raw.get("delay")

    @property
    def timeout(self) -> int | None:
        return self.raw.get("timeout")

    @property
    def pool_ids(self) -> list[str]:
        return _ids(self.raw.get("pools"))


class Provider(Record):
    """A load-balancer provider driver (``amphora``); it has a name and no id."""

    @property
    def id(self) -> str:
        return str(self.raw["name"])


class LoadBalancerFlavor(Record):
    """An Octavia flavor (not a Nova flavor)."""

    @property
    def enabled(self) -> bool:
        return bool(self.raw.get("enabled", True))


class AvailabilityZone(Record):
    """An Octavia availability zone; its name is its id."""

    @property
    def id(self) -> str:
        return str(self.raw["name"])


class LoadBalancerApi(Protocol):
    """Octavia v2, as the load-balancing plugins and constraints use it."""

    # -- load balancers ----------------------------------------------------------------
    def create_load_balancer(self, body: Mapping[str, Any]) -> LoadBalancer:
        """POST /lbaas/loadbalancers (one of vip_subnet_id / vip_network_id / vip_port_id)."""
        ...

    def get_load_balancer(self, lb_id: str) -> LoadBalancer:
        """GET /lbaas/loadbalancers/{id}."""
        ...

    def find_load_balancer(self, name_or_id: str) -> LoadBalancer:
        """By id, then by name."""
        ...

    def list_load_balancers(self, **filters: Any) -> list[LoadBalancer]:
        """GET /lbaas/loadbalancers with equality filters (name, project_id, ...)."""
        ...

    def update_load_balancer(self, lb_id: str, body: Mapping[str, Any]) -> LoadBalancer:
        """PUT /lbaas/loadbalancers/{id} (name, description, admin_state_up, ...)."""
        ...

    def delete_load_balancer(self, lb_id: str, cascade: bool = False) -> None:
        """DELETE /lbaas/loadbalancers/{id}[?cascade=true]; BadRequest if it has children."""
        ...

    # -- listeners -----------------------------------------------------------------------
    def create_listener(self, body: Mapping[str, Any]) -> Listener:
        """POST /lbaas/listeners."""
        ...

    def get_listener(self, listener_id: str) -> Listener:
        """GET /lbaas/listeners/{id}."""
        ...

    def find_listener(self, name_or_id: str) -> Listener:
        """By id, then by name."""
        ...

    def list_listeners(self, **filters: Any) -> list[Listener]:
        """GET /lbaas/listeners with equality filters."""
        ...

    def update_listener(self, listener_id: str, body: Mapping[str, Any]) -> Listener:
        """PUT /lbaas/listeners/{id}."""
        ...

    def delete_listener(self, listener_id: str) -> None:
        """DELETE /lbaas/listeners/{id}."""
        ...

    # -- pools ---------------------------------------------------------------------------
    def create_pool(self, body: Mapping[str, Any]) -> Pool:
        """POST /lbaas/pools (listener_id or loadbalancer_id)."""
        ...

    def get_pool(self, pool_id: str) -> Pool:
        """GET /lbaas/pools/{id}."""
        ...

    def find_pool(self, name_or_id: str) -> Pool:
        """By id, then by name."""
        ...

    def list_pools(self, **filters: Any) -> list[Pool]:
        """GET /lbaas/pools with equality filters."""
        ...

    def update_pool(self, pool_id: str, body: Mapping[str, Any]) -> Pool:
        """PUT /lbaas/pools/{id}."""
        ...

    def delete_pool(self, pool_id: str) -> None:
        """DELETE /lbaas/pools/{id}."""
        ...

    # -- members (always under their pool) -----------------------------------------------
    def create_member(self, pool_id: str, body: Mapping[str, Any]) -> Member:
        """POST /lbaas/pools/{pool_id}/members."""
        ...

    def get_member(self, pool_id: str, member_id: str) -> Member:
        """GET /lbaas/pools/{pool_id}/members/{id}."""
        ...

    def find_member(self, pool_id: str, name_or_id: str) -> Member:
        """By id, then by name, within the pool."""
        ...

    def list_members(self, pool_id: str, **filters: Any) -> list[Member]:
        """GET /lbaas/pools/{pool_id}/members with equality filters."""
        ...

    def update_member(self, pool_id: str, member_id: str, body: Mapping[str, Any]) -> Member:
        """PUT /lbaas/pools/{pool_id}/members/{id} (weight, admin_state_up, tags, ...)."""
        ...

    def delete_member(self, pool_id: str, member_id: str) -> None:
        """DELETE /lbaas/pools/{pool_id}/members/{id}."""
        ...

    # -- health monitors -------------------------------------------------------------------
    def create_health_monitor(self, body: Mapping[str, Any]) -> HealthMonitor:
        """POST /lbaas/healthmonitors."""
        ...

    def get_health_monitor(self, hm_id: str) -> HealthMonitor:
        """GET /lbaas/healthmonitors/{id}."""
        ...

    def find_health_monitor(self, name_or_id: str) -> HealthMonitor:
        """By id, then by name."""
        ...

    def list_health_monitors(self, **filters: Any) -> list[HealthMonitor]:
        """GET /lbaas/healthmonitors with equality filters."""
        ...

    def update_health_monitor(self, hm_id: str, body: Mapping[str, Any]) -> HealthMonitor:
        """PUT /lbaas/healthmonitors/{id}."""
        ...

    def delete_health_monitor(self, hm_id: str) -> None:
        """DELETE /lbaas/healthmonitors/{id}."""
        ...

    # -- catalogs (constraints octavia.flavor / octavia.availabilityzone) ---------------
    def list_providers(self) -> list[Provider]:
        """GET /lbaas/providers."""
        ...

    def list_flavors(self, **filters: Any) -> list[LoadBalancerFlavor]:
        """GET /lbaas/flavors."""
        ...

    def find_flavor(self, name_or_id: str) -> LoadBalancerFlavor:
        """An Octavia flavor by id, then by name."""
        ...

    def list_availability_zones(self, **filters: Any) -> list[AvailabilityZone]:
        """GET /lbaas/availabilityzones."""
        ...

    def find_availability_zone(self, name: str) -> AvailabilityZone:
        """An Octavia availability zone by name."""
        ...


# CONTRACT READY
