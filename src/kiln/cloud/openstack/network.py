"""NetworkApi over a real Neutron (or the sandbox over HTTP) with raw REST calls.

Every call goes through :class:`~kiln.cloud.openstack.rest.RestClient` on openstacksdk's
network proxy, whose endpoint is the catalog URL: paths carry the ``/v2.0`` prefix
(openstacksdk appends it itself; a catalog URL already ending in ``/v2.0`` is handled).
``find_*`` is openstacksdk's: ``GET /{collection}/{x}``, then on 404
``GET /{collection}?name=x``. List filters become query parameters (lists repeat the key).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.network import (
    FloatingIp,
    Network,
    Port,
    Router,
    SecurityGroup,
    SecurityGroupRule,
    Subnet,
    SubnetPool,
)
from kiln.cloud.api.records import Record
from kiln.cloud.openstack.rest import RestClient

R = TypeVar("R", bound=Record)


def _query(filters: Mapping[str, Any]) -> dict[str, Any]:
    """Filters as query parameters (booleans lower-case, lists as repeated keys)."""
    params: dict[str, Any] = {}
    for key, value in filters.items():
        if isinstance(value, bool):
            params[key] = "true" if value else "false"
        elif isinstance(value, list | tuple | set):
            params[key] = [str(v) for v in value]
        elif value is not None:
            params[key] = str(value)
    return params


class OpenStackNetwork:
    """NetworkApi through openstacksdk's network proxy."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest
        self._prefix: str | None = None

    # -- helpers ---------------------------------------------------------------------------
    def _path(self, path: str) -> str:
        if self._prefix is None:
            try:
                endpoint = str(self.rest.proxy.get_endpoint() or "")
            except Exception:  # no catalog: the call itself will report it
                endpoint = ""
            self._prefix = "" if endpoint.rstrip("/").endswith("/v2.0") else "/v2.0"
        return self._prefix + path

    def _create(self, record: type[R], collection: str, key: str, body: Mapping[str, Any]) -> R:
        data = self.rest.post(self._path(f"/{collection}"), {key: dict(body)})
        return record(data[key])

    def _show(self, record: type[R], collection: str, key: str, object_id: str) -> R:
        data = self.rest.get(self._path(f"/{collection}/{quote(object_id, safe='')}"))
        return record(data[key])

    def _list(self, record: type[R], collection: str, filters: Mapping[str, Any]) -> list[R]:
        key = collection.replace("-", "_")
        items: list[R] = []
        params: dict[str, Any] | None = _query(filters)
        path = self._path(f"/{collection}")
        while True:
            data = self.rest.get(path, params=params)
            items.extend(record(item) for item in data.get(key) or [])
            nexts = [link for link in data.get(f"{key}_links") or [] if link.get("rel") == "next"]
            if not nexts or not data.get(key):
                return items
            marker = items[-1].id
            params = {**(params or {}), "marker": marker}

    def _update(
        self, record: type[R], collection: str, key: str, object_id: str, body: Mapping[str, Any]
    ) -> R:
        path = self._path(f"/{collection}/{quote(object_id, safe='')}")
        data = self.rest.put(path, {key: dict(body)})
        return record(data[key])

    def _delete(self, collection: str, object_id: str) -> None:
        self.rest.delete(self._path(f"/{collection}/{quote(object_id, safe='')}"))

    def _find(
        self,
        record: type[R],
        collection: str,
        key: str,
        name_or_id: str,
        filters: Mapping[str, Any],
    ) -> R:
        try:
            return self._show(record, collection, key, name_or_id)
        except NotFound:
            pass
        found = self._list(record, collection, {**filters, "name": name_or_id})
        if not found:
            raise NotFound(f"No {key} found for {name_or_id}", service="network")
        if len(found) > 1:
            raise MultipleMatches(
                f"More than one {key} exists with the name '{name_or_id}'.", service="network"
            )
        return found[0]

    # -- extensions ------------------------------------------------------------------------
    def list_extensions(self) -> list[dict[str, Any]]:
        return list(self.rest.get(self._path("/extensions")).get("extensions") or [])

    def has_extension(self, alias: str) -> bool:
        return any(e.get("alias") == alias for e in self.list_extensions())

    # -- networks --------------------------------------------------------------------------
    def create_network(self, body: Mapping[str, Any]) -> Network:
        return self._create(Network, "networks", "network", body)

    def get_network(self, network_id: str) -> Network:
        return self._show(Network, "networks", "network", network_id)

    def find_network(self, name_or_id: str, **filters: Any) -> Network:
        return self._find(Network, "networks", "network", name_or_id, filters)

    def list_networks(self, **filters: Any) -> list[Network]:
        return self._list(Network, "networks", filters)

    def update_network(self, network_id: str, body: Mapping[str, Any]) -> Network:
        return self._update(Network, "networks", "network", network_id, body)

    def delete_network(self, network_id: str) -> None:
        self._delete("networks", network_id)

    def list_segments(self, **filters: Any) -> list[Record]:
        return self._list(Record, "segments", filters)

    # -- subnets ---------------------------------------------------------------------------
    def create_subnet(self, body: Mapping[str, Any]) -> Subnet:
        return self._create(Subnet, "subnets", "subnet", body)

    def get_subnet(self, subnet_id: str) -> Subnet:
        return self._show(Subnet, "subnets", "subnet", subnet_id)

    def find_subnet(self, name_or_id: str, **filters: Any) -> Subnet:
        return self._find(Subnet, "subnets", "subnet", name_or_id, filters)

    def list_subnets(self, **filters: Any) -> list[Subnet]:
        return self._list(Subnet, "subnets", filters)

    def update_subnet(self, subnet_id: str, body: Mapping[str, Any]) -> Subnet:
        return self._update(Subnet, "subnets", "subnet", subnet_id, body)

    def delete_subnet(self, subnet_id: str) -> None:
        self._delete("subnets", subnet_id)

    # -- subnet pools ----------------------------------------------------------------------
    def create_subnetpool(self, body: Mapping[str, Any]) -> SubnetPool:
        return self._create(SubnetPool, "subnetpools", "subnetpool", body)

    def get_subnetpool(self, subnetpool_id: str) -> SubnetPool:
        return self._show(SubnetPool, "subnetpools", "subnetpool", subnetpool_id)

    def find_subnetpool(self, name_or_id: str, **filters: Any) -> SubnetPool:
        return self._find(SubnetPool, "subnetpools", "subnetpool", name_or_id, filters)

    def list_subnetpools(self, **filters: Any) -> list[SubnetPool]:
        return self._list(SubnetPool, "subnetpools", filters)

    def update_subnetpool(self, subnetpool_id: str, body: Mapping[str, Any]) -> SubnetPool:
        return self._update(SubnetPool, "subnetpools", "subnetpool", subnetpool_id, body)

    def delete_subnetpool(self, subnetpool_id: str) -> None:
        self._delete("subnetpools", subnetpool_id)

    # -- ports -----------------------------------------------------------------------------
    def create_port(self, body: Mapping[str, Any]) -> Port:
        return self._create(Port, "ports", "port", body)

    def get_port(self, port_id: str) -> Port:
        return self._show(Port, "ports", "port", port_id)

    def find_port(self, name_or_id: str, **filters: Any) -> Port:
        return self._find(Port, "ports", "port", name_or_id, filters)

    def list_ports(self, **filters: Any) -> list[Port]:
        return self._list(Port, "ports", filters)

    def update_port(self, port_id: str, body: Mapping[str, Any]) -> Port:
        return self._update(Port, "ports", "port", port_id, body)

    def delete_port(self, port_id: str) -> None:
        self._delete("ports", port_id)

    # -- routers ---------------------------------------------------------------------------
    def create_router(self, body: Mapping[str, Any]) -> Router:
        return self._create(Router, "routers", "router", body)

    def get_router(self, router_id: str) -> Router:
        return self._show(Router, "routers", "router", router_id)

    def find_router(self, name_or_id: str, **filters: Any) -> Router:
        return self._find(Router, "routers", "router", name_or_id, filters)

    def list_routers(self, **filters: Any) -> list[Router]:
        return self._list(Router, "routers", filters)

    def update_router(self, router_id: str, body: Mapping[str, Any]) -> Router:
        return self._update(Router, "routers", "router", router_id, body)

    def delete_router(self, router_id: str) -> None:
        self._delete("routers", router_id)

    def add_router_interface(
        self, router_id: str, *, subnet_id: str | None = None, port_id: str | None = None
    ) -> dict[str, Any]:
        return self._interface("add_router_interface", router_id, subnet_id, port_id)

    def remove_router_interface(
        self, router_id: str, *, subnet_id: str | None = None, port_id: str | None = None
    ) -> dict[str, Any]:
        return self._interface("remove_router_interface", router_id, subnet_id, port_id)

    def _interface(
        self, action: str, router_id: str, subnet_id: str | None, port_id: str | None
    ) -> dict[str, Any]:
        body = {k: v for k, v in (("subnet_id", subnet_id), ("port_id", port_id)) if v}
        path = self._path(f"/routers/{quote(router_id, safe='')}/{action}")
        return dict(self.rest.put(path, body) or {})

    # -- floating IPs ----------------------------------------------------------------------
    def create_floating_ip(self, body: Mapping[str, Any]) -> FloatingIp:
        return self._create(FloatingIp, "floatingips", "floatingip", body)

    def get_floating_ip(self, floating_ip_id: str) -> FloatingIp:
        return self._show(FloatingIp, "floatingips", "floatingip", floating_ip_id)

    def list_floating_ips(self, **filters: Any) -> list[FloatingIp]:
        return self._list(FloatingIp, "floatingips", filters)

    def update_floating_ip(self, floating_ip_id: str, body: Mapping[str, Any]) -> FloatingIp:
        return self._update(FloatingIp, "floatingips", "floatingip", floating_ip_id, body)

    def delete_floating_ip(self, floating_ip_id: str) -> None:
        self._delete("floatingips", floating_ip_id)

    # -- security groups -------------------------------------------------------------------
    def create_security_group(self, body: Mapping[str, Any]) -> SecurityGroup:
        return self._create(SecurityGroup, "security-groups", "security_group", body)

    def get_security_group(self, security_group_id: str) -> SecurityGroup:
        return self._show(SecurityGroup, "security-groups", "security_group", security_group_id)

    def find_security_group(self, name_or_id: str, **filters: Any) -> SecurityGroup:
        return self._find(SecurityGroup, "security-groups", "security_group", name_or_id, filters)

    def list_security_groups(self, **filters: Any) -> list[SecurityGroup]:
        return self._list(SecurityGroup, "security-groups", filters)

    def update_security_group(
        self, security_group_id: str, body: Mapping[str, Any]
    ) -> SecurityGroup:
        return self._update(
            SecurityGroup, "security-groups", "security_group", security_group_id, body
        )

    def delete_security_group(self, security_group_id: str) -> None:
        self._delete("security-groups", security_group_id)

    def create_security_group_rule(self, body: Mapping[str, Any]) -> SecurityGroupRule:
        return self._create(SecurityGroupRule, "security-group-rules", "security_group_rule", body)

    def create_security_group_rules(
        self, bodies: Sequence[Mapping[str, Any]]
    ) -> list[SecurityGroupRule]:
        data = self.rest.post(
            self._path("/security-group-rules"),
            {"security_group_rules": [dict(b) for b in bodies]},
        )
        return [SecurityGroupRule(r) for r in data.get("security_group_rules") or []]

    def get_security_group_rule(self, rule_id: str) -> SecurityGroupRule:
        return self._show(SecurityGroupRule, "security-group-rules", "security_group_rule", rule_id)

    def list_security_group_rules(self, **filters: Any) -> list[SecurityGroupRule]:
        return self._list(SecurityGroupRule, "security-group-rules", filters)

    def delete_security_group_rule(self, rule_id: str) -> None:
        self._delete("security-group-rules", rule_id)

    # -- tags ------------------------------------------------------------------------------
    def set_tags(self, collection: str, object_id: str, tags: Sequence[str]) -> list[str]:
        path = self._path(f"/{collection}/{quote(object_id, safe='')}/tags")
        data = self.rest.put(path, {"tags": list(tags)})
        return list((data or {}).get("tags") or [])
