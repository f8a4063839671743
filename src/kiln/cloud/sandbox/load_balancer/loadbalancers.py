"""Load balancers: the root of an Octavia tree, with its VIP port in Neutron.

A new load balancer gets its VIP on a Neutron port the service creates (``device_owner:
Octavia``, name ``octavia-lb-<id>``) on the given subnet, or the given network's first
subnet, or it adopts a port the caller made (``vip_port_id``). Ports the service created
are remembered (store kind ``loadbalancer_vip``) and deleted with the load balancer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, CloudError, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.base import Document, ids
from kiln.cloud.sandbox.load_balancer.catalog import CatalogOps
from kiln.cloud.sandbox.load_balancer.rules import (
    COMMON_FIELDS,
    SERVICE,
    check_fields,
    choice,
    common,
    ip_address,
)

_CREATE_FIELDS = (
    *COMMON_FIELDS,
    "vip_subnet_id",
    "vip_network_id",
    "vip_port_id",
    "vip_address",
    "vip_qos_policy_id",
    "project_id",
    "tenant_id",
    "provider",
    "flavor_id",
    "availability_zone",
)
_UPDATE_FIELDS = (*COMMON_FIELDS, "vip_qos_policy_id")
_VIP_KIND = "loadbalancer_vip"  # {"id": lb id, "port_id": the port the service created}


class LoadBalancerOps(CatalogOps):
    """Create, show, list, update and delete load balancers."""

    def create_load_balancer(self, scope: CloudScope, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "create_load_balancer")
        with self.store.lock:
            self.settle()
            check_fields(body, _CREATE_FIELDS)
            if not any(body.get(k) for k in ("vip_subnet_id", "vip_network_id", "vip_port_id")):
                raise BadRequest(
                    "Validation failure: VIP must contain one of: vip_port_id, "
                    "vip_network_id, vip_subnet_id."
                )
            project = self.project_for(scope, body)
            self.sim.check_quota(project, "loadbalancers", self.count("loadbalancer", project))
            fields = common(body)
            ip_address(body, "vip_address")
            provider = choice(body, "provider", self.provider_names()) or "amphora"
            flavor_id = body.get("flavor_id")
            if flavor_id and not self.flavor_enabled(flavor_id):
                raise BadRequest(f"Validation failure: Invalid flavor_id {flavor_id}.")
            zone = body.get("availability_zone")
            if zone and not self.zone_enabled(zone):
                raise BadRequest(f"Validation failure: Invalid availability zone {zone}.")
            lb_id = self.cloud.new_id()
            vip = self._make_vip(scope, project, body, lb_id)
            now = self.cloud.timestamp()
            document: Document = {
                "id": lb_id,
                "name": "",
                "description": "",
                "admin_state_up": True,
                "tags": [],
                **fields,
                "project_id": project,
                "tenant_id": project,
                "provisioning_status": "PENDING_CREATE",
                "operating_status": "OFFLINE",
                "created_at": now,
                "updated_at": None,
                **vip,
                "vip_qos_policy_id": body.get("vip_qos_policy_id"),
                "provider": provider,
                "flavor_id": flavor_id,
                "availability_zone": zone,
                "listeners": [],
                "pools": [],
            }
            self.store.put("loadbalancer", document)
            self.begin(scope, "create_load_balancer", "loadbalancer", document, "create")
            return document

    def get_load_balancer(self, scope: CloudScope, lb_id: str) -> Document:
        return self.fetch(scope, "get_load_balancer", "loadbalancer", lb_id)

    def list_load_balancers(self, scope: CloudScope, **filters: Any) -> list[Document]:
        return self.fetch_all(scope, "list_load_balancers", "loadbalancer", filters)

    def update_load_balancer(
        self, scope: CloudScope, lb_id: str, body: Mapping[str, Any]
    ) -> Document:
        self.enter(scope, "update_load_balancer", lb_id)
        with self.store.lock:
            document = self.lookup(scope, "loadbalancer", lb_id)
            check_fields(body, _UPDATE_FIELDS)
            fields = common(body)
            self.check_mutable(document, own=True)
            document.update(fields)
            if "vip_qos_policy_id" in body:
                document["vip_qos_policy_id"] = body["vip_qos_policy_id"]
            self.begin(scope, "update_load_balancer", "loadbalancer", document, "update")
            return document

    def delete_load_balancer(self, scope: CloudScope, lb_id: str, cascade: bool = False) -> None:
        self.enter(scope, "delete_load_balancer", lb_id)
        with self.store.lock:
            document = self.lookup(scope, "loadbalancer", lb_id)
            self.check_mutable(document, own=True)
            if (document["listeners"] or document["pools"]) and not cascade:
                raise BadRequest(f"Cannot delete Load Balancer {lb_id} - it has children")
            self.begin(
                scope,
                "delete_load_balancer",
                "loadbalancer",
                document,
                "delete",
                related=self._tree(document),
            )

    # -- helpers --------------------------------------------------------------------------
    def _tree(self, loadbalancer: Document) -> list[tuple[str, Document]]:
        """Every object under a load balancer (what a cascade delete takes along)."""
        found: list[tuple[str, Document]] = []
        for listener_id in ids(loadbalancer["listeners"]):
            found.append(("listener", self.store.get("listener", listener_id) or {}))
        for pool_id in ids(loadbalancer["pools"]):
            pool = self.store.get("pool", pool_id)
            if pool is None:
                continue
            found.append(("pool", pool))
            found += [("member", m) for m in self.store.find("member", pool_id=pool_id)]
            if pool.get("healthmonitor_id"):
                monitor = self.store.get("healthmonitor", pool["healthmonitor_id"])
                found += [("healthmonitor", monitor)] if monitor else []
        return [(kind, doc) for kind, doc in found if doc]

    def _make_vip(
        self, scope: CloudScope, project: str, body: Mapping[str, Any], lb_id: str
    ) -> dict[str, Any]:
        """The VIP fields of a new load balancer, creating its Neutron port when needed."""
        if body.get("vip_port_id"):
            return self._adopt_port(scope, str(body["vip_port_id"]))
        network = self.cloud.network
        subnet: Mapping[str, Any] | None = None
        if body.get("vip_subnet_id"):
            subnet = self._subnet(project, str(body["vip_subnet_id"]))
            if body.get("vip_network_id") and body["vip_network_id"] != subnet["network_id"]:
                raise BadRequest("Validation failure: vip_subnet_id is not on vip_network_id.")
        else:
            network_id = str(body["vip_network_id"])
            try:
                net = network.get_network_internal(network_id)
            except NotFound:
                net = None
            usable = net and (
                self.visible(scope, net) or net.get("shared") or net.get("router:external")
            )
            if not net or not usable:
                raise NotFound(f"Network {network_id} could not be found.", service=SERVICE)
            if not net.get("subnets"):
                raise BadRequest(f"Validation failure: network {network_id} has no subnets.")
            subnet = self._subnet(project, str(net["subnets"][0]))
        fixed_ip: dict[str, Any] = {"subnet_id": subnet["id"]}
        if body.get("vip_address"):
            fixed_ip["ip_address"] = body["vip_address"]
        port = network.create_port_internal(
            project,
            {
                "network_id": subnet["network_id"],
                "fixed_ips": [fixed_ip],
                "device_owner": "Octavia",
                "device_id": f"lb-{lb_id}",
                "name": f"octavia-lb-{lb_id}",
            },
        )
        self.store.put(_VIP_KIND, {"id": lb_id, "port_id": port["id"]})
        return {
            "vip_address": port["fixed_ips"][0]["ip_address"],
            "vip_port_id": port["id"],
            "vip_subnet_id": subnet["id"],
            "vip_network_id": subnet["network_id"],
        }

    def _subnet(self, project: str, subnet_id: str) -> Mapping[str, Any]:
        try:
            subnet = self.cloud.network.find_subnet_internal(project, subnet_id)
        except NotFound:
            subnet = None
        if not subnet:
            raise NotFound(f"Subnet {subnet_id} could not be found.", service=SERVICE)
        return subnet  # type: ignore[no-any-return]

    def _adopt_port(self, scope: CloudScope, port_id: str) -> dict[str, Any]:
        port = self.store.get("port", port_id)
        if port is None or not self.visible(scope, port):
            raise NotFound(f"Port {port_id} could not be found.", service=SERVICE)
        if not port.get("fixed_ips"):
            raise BadRequest(f"Validation failure: port {port_id} has no fixed IP.")
        fixed = port["fixed_ips"][0]
        return {
            "vip_address": fixed["ip_address"],
            "vip_port_id": port_id,
            "vip_subnet_id": fixed["subnet_id"],
            "vip_network_id": port["network_id"],
        }

    def _unlink_loadbalancer(self, loadbalancer: Document) -> None:
        """A deleted load balancer is gone: so are its children and its VIP port."""
        for pool_id in ids(loadbalancer["pools"]):
            pool = self.store.delete("pool", pool_id)
            if pool is not None:
                self._unlink_pool(pool)
        for listener_id in ids(loadbalancer["listeners"]):
            self.store.delete("listener", listener_id)
        self.release_vip(loadbalancer)

    def release_vip(self, loadbalancer: Mapping[str, Any]) -> None:
        """Delete the VIP port the service created for a load balancer that is gone."""
        owned = self.store.delete(_VIP_KIND, loadbalancer["id"])
        if owned is None or "network" not in self.cloud.services:
            return
        try:
            self.cloud.network.delete_port_internal(owned["port_id"])
        except CloudError:  # already gone: nothing to release
            pass
