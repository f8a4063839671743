"""The :class:`~kiln.cloud.api.load_balancer.LoadBalancerApi` of a real Octavia over REST.

Paths are relative to openstacksdk's load-balancer proxy, whose base is the catalog URL
with ``/v2.0`` appended (no discovery). ``find_*`` are openstacksdk's: GET by id, on
404 list by name. Deletes are not retried on 409 (the plugins poll and call again).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.load_balancer import (
    AvailabilityZone,
    HealthMonitor,
    Listener,
    LoadBalancer,
    LoadBalancerFlavor,
    Member,
    Pool,
    Provider,
)
from kiln.cloud.api.records import Record
from kiln.cloud.openstack.rest import RestClient

R = TypeVar("R", bound=Record)


def _q(value: str) -> str:
    return quote(value, safe="")


def _params(filters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: (str(v).lower() if isinstance(v, bool) else v)
        for k, v in filters.items()
        if v is not None
    }


class OpenStackLoadBalancer:
    """Octavia v2 through a :class:`RestClient` over ``conn.load_balancer``."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest

    # -- generic ---------------------------------------------------------------------------
    def _create(self, record: type[R], path: str, key: str, body: Mapping[str, Any]) -> R:
        return record(self.rest.post(path, {key: dict(body)})[key])

    def _get(self, record: type[R], path: str, key: str) -> R:
        return record(self.rest.get(path)[key])

    def _list(self, record: type[R], path: str, plural: str, filters: Mapping[str, Any]) -> list[R]:
        return [record(item) for item in self.rest.get(path, params=_params(filters))[plural]]

    def _update(self, record: type[R], path: str, key: str, body: Mapping[str, Any]) -> R:
        return record(self.rest.put(path, {key: dict(body)}, retry_conflicts=False)[key])

    def _delete(self, path: str, params: Mapping[str, Any] | None = None) -> None:
        self.rest.request("DELETE", path, params=params, retry_conflicts=False)

    @staticmethod
    def _find(
        label: str, name_or_id: str, get: Callable[[str], R], by_name: Callable[[str], list[R]]
    ) -> R:
        try:
            return get(name_or_id)
        except NotFound:
            pass
        matches = by_name(name_or_id)
        if len(matches) > 1:
            raise MultipleMatches(f"More than one {label} exists with the name '{name_or_id}'.")
        if not matches:
            raise NotFound(f"No {label} found for {name_or_id}", service="load_balancer")
        return matches[0]

    # -- load balancers ----------------------------------------------------------------
    def create_load_balancer(self, body: Mapping[str, Any]) -> LoadBalancer:
        return self._create(LoadBalancer, "/lbaas/loadbalancers", "loadbalancer", body)

    def get_load_balancer(self, lb_id: str) -> LoadBalancer:
        return self._get(LoadBalancer, f"/lbaas/loadbalancers/{_q(lb_id)}", "loadbalancer")

    def find_load_balancer(self, name_or_id: str) -> LoadBalancer:
        return self._find(
            "load balancer",
            name_or_id,
            self.get_load_balancer,
            lambda n: self.list_load_balancers(name=n),
        )

    def list_load_balancers(self, **filters: Any) -> list[LoadBalancer]:
        return self._list(LoadBalancer, "/lbaas/loadbalancers", "loadbalancers", filters)

    def update_load_balancer(self, lb_id: str, body: Mapping[str, Any]) -> LoadBalancer:
        path = f"/lbaas/loadbalancers/{_q(lb_id)}"
        return self._update(LoadBalancer, path, "loadbalancer", body)

    def delete_load_balancer(self, lb_id: str, cascade: bool = False) -> None:
        params = {"cascade": "true"} if cascade else None
        self._delete(f"/lbaas/loadbalancers/{_q(lb_id)}", params)

    # -- listeners -----------------------------------------------------------------------
    def create_listener(self, body: Mapping[str, Any]) -> Listener:
        return self._create(Listener, "/lbaas/listeners", "listener", body)

    def get_listener(self, listener_id: str) -> Listener:
        return self._get(Listener, f"/lbaas/listeners/{_q(listener_id)}", "listener")

    def find_listener(self, name_or_id: str) -> Listener:
        return self._find(
            "listener", name_or_id, self.get_listener, lambda n: self.list_listeners(name=n)
        )

    def list_listeners(self, **filters: Any) -> list[Listener]:
        return self._list(Listener, "/lbaas/listeners", "listeners", filters)

    def update_listener(self, listener_id: str, body: Mapping[str, Any]) -> Listener:
        return self._update(Listener, f"/lbaas/listeners/{_q(listener_id)}", "listener", body)

    def delete_listener(self, listener_id: str) -> None:
        self._delete(f"/lbaas/listeners/{_q(listener_id)}")

    # -- pools ---------------------------------------------------------------------------
    def create_pool(self, body: Mapping[str, Any]) -> Pool:
        return self._create(Pool, "/lbaas/pools", "pool", body)

    def get_pool(self, pool_id: str) -> Pool:
        return self._get(Pool, f"/lbaas/pools/{_q(pool_id)}", "pool")

    def find_pool(self, name_or_id: str) -> Pool:
        return self._find("pool", name_or_id, self.get_pool, lambda n: self.list_pools(name=n))

    def list_pools(self, **filters: Any) -> list[Pool]:
        return self._list(Pool, "/lbaas/pools", "pools", filters)

    def update_pool(self, pool_id: str, body: Mapping[str, Any]) -> Pool:
        return self._update(Pool, f"/lbaas/pools/{_q(pool_id)}", "pool", body)

    def delete_pool(self, pool_id: str) -> None:
        self._delete(f"/lbaas/pools/{_q(pool_id)}")

    # -- members -------------------------------------------------------------------------
    def _members(self, pool_id: str) -> str:
        return f"/lbaas/pools/{_q(pool_id)}/members"

    def create_member(self, pool_id: str, body: Mapping[str, Any]) -> Member:
        return self._create(Member, self._members(pool_id), "member", body)

    def get_member(self, pool_id: str, member_id: str) -> Member:
        return self._get(Member, f"{self._members(pool_id)}/{_q(member_id)}", "member")

    def find_member(self, pool_id: str, name_or_id: str) -> Member:
        return self._find(
            "member",
            name_or_id,
            lambda member_id: self.get_member(pool_id, member_id),
            lambda n: self.list_members(pool_id, name=n),
        )

    def list_members(self, pool_id: str, **filters: Any) -> list[Member]:
        return self._list(Member, self._members(pool_id), "members", filters)

    def update_member(self, pool_id: str, member_id: str, body: Mapping[str, Any]) -> Member:
        path = f"{self._members(pool_id)}/{_q(member_id)}"
        return self._update(Member, path, "member", body)

    def delete_member(self, pool_id: str, member_id: str) -> None:
        self._delete(f"{self._members(pool_id)}/{_q(member_id)}")

    # -- health monitors -------------------------------------------------------------------
    def create_health_monitor(self, body: Mapping[str, Any]) -> HealthMonitor:
        return self._create(HealthMonitor, "/lbaas/healthmonitors", "healthmonitor", body)

    def get_health_monitor(self, hm_id: str) -> HealthMonitor:
        return self._get(HealthMonitor, f"/lbaas/healthmonitors/{_q(hm_id)}", "healthmonitor")

    def find_health_monitor(self, name_or_id: str) -> HealthMonitor:
        return self._find(
            "health monitor",
            name_or_id,
            self.get_health_monitor,
            lambda n: self.list_health_monitors(name=n),
        )

    def list_health_monitors(self, **filters: Any) -> list[HealthMonitor]:
        return self._list(HealthMonitor, "/lbaas/healthmonitors", "healthmonitors", filters)

    def update_health_monitor(self, hm_id: str, body: Mapping[str, Any]) -> HealthMonitor:
        path = f"/lbaas/healthmonitors/{_q(hm_id)}"
        return self._update(HealthMonitor, path, "healthmonitor", body)

    def delete_health_monitor(self, hm_id: str) -> None:
        self._delete(f"/lbaas/healthmonitors/{_q(hm_id)}")

    # -- catalogs ------------------------------------------------------------------------
    def list_providers(self) -> list[Provider]:
        return self._list(Provider, "/lbaas/providers", "providers", {})

    def list_flavors(self, **filters: Any) -> list[LoadBalancerFlavor]:
        return self._list(LoadBalancerFlavor, "/lbaas/flavors", "flavors", filters)

    def find_flavor(self, name_or_id: str) -> LoadBalancerFlavor:
        return self._find(
            "flavor",
            name_or_id,
            lambda key: self._get(LoadBalancerFlavor, f"/lbaas/flavors/{_q(key)}", "flavor"),
            lambda n: self.list_flavors(name=n),
        )

    def list_availability_zones(self, **filters: Any) -> list[AvailabilityZone]:
        path = "/lbaas/availabilityzones"
        return self._list(AvailabilityZone, path, "availability_zones", filters)

    def find_availability_zone(self, name: str) -> AvailabilityZone:
        path = f"/lbaas/availabilityzones/{_q(name)}"
        return self._get(AvailabilityZone, path, "availability_zone")
