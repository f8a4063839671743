"""The in-process :class:`~kiln.cloud.api.load_balancer.LoadBalancerApi`: the model, no HTTP.

Same rules and state as the REST app; every answer is a deep copy wrapped in its record
type, so a plugin never holds a live document. ``find_*`` follow openstacksdk (by id,
then by name).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

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
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.model import LoadBalancerModel

R = TypeVar("R", bound=Record)


def find_one(
    label: str,
    name_or_id: str,
    get: Callable[[str], R],
    by_name: Callable[[str], list[R]],
) -> R:
    """openstacksdk's find: the object with that id, else the only one with that name."""
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


class LoadBalancerAdapter:
    """LoadBalancerApi for one scope, in process."""

    def __init__(self, model: LoadBalancerModel, scope: CloudScope) -> None:
        self.model = model
        self.scope = scope

    # -- load balancers ----------------------------------------------------------------
    def create_load_balancer(self, body: Mapping[str, Any]) -> LoadBalancer:
        return LoadBalancer(copy.deepcopy(self.model.create_load_balancer(self.scope, body)))

    def get_load_balancer(self, lb_id: str) -> LoadBalancer:
        return LoadBalancer(copy.deepcopy(self.model.get_load_balancer(self.scope, lb_id)))

    def find_load_balancer(self, name_or_id: str) -> LoadBalancer:
        return find_one(
            "load balancer",
            name_or_id,
            self.get_load_balancer,
            lambda name: self.list_load_balancers(name=name),
        )

    def list_load_balancers(self, **filters: Any) -> list[LoadBalancer]:
        found = self.model.list_load_balancers(self.scope, **filters)
        return [LoadBalancer(copy.deepcopy(d)) for d in found]

    def update_load_balancer(self, lb_id: str, body: Mapping[str, Any]) -> LoadBalancer:
        document = self.model.update_load_balancer(self.scope, lb_id, body)
        return LoadBalancer(copy.deepcopy(document))

    def delete_load_balancer(self, lb_id: str, cascade: bool = False) -> None:
        self.model.delete_load_balancer(self.scope, lb_id, cascade=cascade)

    # -- listeners -----------------------------------------------------------------------
    def create_listener(self, body: Mapping[str, Any]) -> Listener:
        return Listener(copy.deepcopy(self.model.create_listener(self.scope, body)))

    def get_listener(self, listener_id: str) -> Listener:
        return Listener(copy.deepcopy(self.model.get_listener(self.scope, listener_id)))

    def find_listener(self, name_or_id: str) -> Listener:
        return find_one(
            "listener", name_or_id, self.get_listener, lambda n: self.list_listeners(name=n)
        )

    def list_listeners(self, **filters: Any) -> list[Listener]:
        return [
            Listener(copy.deepcopy(d)) for d in self.model.list_listeners(self.scope, **filters)
        ]

    def update_listener(self, listener_id: str, body: Mapping[str, Any]) -> Listener:
        document = self.model.update_listener(self.scope, listener_id, body)
        return Listener(copy.deepcopy(document))

    def delete_listener(self, listener_id: str) -> None:
        self.model.delete_listener(self.scope, listener_id)

    # -- pools ---------------------------------------------------------------------------
    def create_pool(self, body: Mapping[str, Any]) -> Pool:
        return Pool(copy.deepcopy(self.model.create_pool(self.scope, body)))

    def get_pool(self, pool_id: str) -> Pool:
        return Pool(copy.deepcopy(self.model.get_pool(self.scope, pool_id)))

    def find_pool(self, name_or_id: str) -> Pool:
        return find_one("pool", name_or_id, self.get_pool, lambda n: self.list_pools(name=n))

    def list_pools(self, **filters: Any) -> list[Pool]:
        return [Pool(copy.deepcopy(d)) for d in self.model.list_pools(self.scope, **filters)]

    def update_pool(self, pool_id: str, body: Mapping[str, Any]) -> Pool:
        return Pool(copy.deepcopy(self.model.update_pool(self.scope, pool_id, body)))

    def delete_pool(self, pool_id: str) -> None:
        self.model.delete_pool(self.scope, pool_id)

    # -- members -------------------------------------------------------------------------
    def create_member(self, pool_id: str, body: Mapping[str, Any]) -> Member:
        return Member(copy.deepcopy(self.model.create_member(self.scope, pool_id, body)))

    def get_member(self, pool_id: str, member_id: str) -> Member:
        return Member(copy.deepcopy(self.model.get_member(self.scope, pool_id, member_id)))

    def find_member(self, pool_id: str, name_or_id: str) -> Member:
        return find_one(
            "member",
            name_or_id,
            lambda member_id: self.get_member(pool_id, member_id),
            lambda n: self.list_members(pool_id, name=n),
        )

    def list_members(self, pool_id: str, **filters: Any) -> list[Member]:
        found = self.model.list_members(self.scope, pool_id, **filters)
        return [Member(copy.deepcopy(d)) for d in found]

    def update_member(self, pool_id: str, member_id: str, body: Mapping[str, Any]) -> Member:
        document = self.model.update_member(self.scope, pool_id, member_id, body)
        return Member(copy.deepcopy(document))

    def delete_member(self, pool_id: str, member_id: str) -> None:
        self.model.delete_member(self.scope, pool_id, member_id)

    # -- health monitors -------------------------------------------------------------------
    def create_health_monitor(self, body: Mapping[str, Any]) -> HealthMonitor:
        document = self.model.create_health_monitor(self.scope, body)
        return HealthMonitor(copy.deepcopy(document))

    def get_health_monitor(self, hm_id: str) -> HealthMonitor:
        return HealthMonitor(copy.deepcopy(self.model.get_health_monitor(self.scope, hm_id)))

    def find_health_monitor(self, name_or_id: str) -> HealthMonitor:
        return find_one(
            "health monitor",
            name_or_id,
            self.get_health_monitor,
            lambda n: self.list_health_monitors(name=n),
        )

    def list_health_monitors(self, **filters: Any) -> list[HealthMonitor]:
        found = self.model.list_health_monitors(self.scope, **filters)
        return [HealthMonitor(copy.deepcopy(d)) for d in found]

    def update_health_monitor(self, hm_id: str, body: Mapping[str, Any]) -> HealthMonitor:
        document = self.model.update_health_monitor(self.scope, hm_id, body)
        return HealthMonitor(copy.deepcopy(document))

    def delete_health_monitor(self, hm_id: str) -> None:
        self.model.delete_health_monitor(self.scope, hm_id)

    # -- catalogs ------------------------------------------------------------------------
    def list_providers(self) -> list[Provider]:
        return [Provider(d) for d in self.model.list_providers(self.scope)]

    def list_flavors(self, **filters: Any) -> list[LoadBalancerFlavor]:
        found = self.model.list_catalog(self.scope, "lb_flavor", **filters)
        return [LoadBalancerFlavor(copy.deepcopy(d)) for d in found]

    def find_flavor(self, name_or_id: str) -> LoadBalancerFlavor:
        return find_one(
            "flavor",
            name_or_id,
            lambda key: LoadBalancerFlavor(
                copy.deepcopy(self.model.get_catalog_entry(self.scope, "lb_flavor", key))
            ),
            lambda n: self.list_flavors(name=n),
        )

    def list_availability_zones(self, **filters: Any) -> list[AvailabilityZone]:
        found = self.model.list_catalog(self.scope, "lb_availability_zone", **filters)
        return [AvailabilityZone(copy.deepcopy(d)) for d in found]

    def find_availability_zone(self, name: str) -> AvailabilityZone:
        document = self.model.get_catalog_entry(self.scope, "lb_availability_zone", name)
        return AvailabilityZone(copy.deepcopy(document))
