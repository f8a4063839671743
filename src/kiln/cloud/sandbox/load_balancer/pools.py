"""Pools: the back-end groups of a load balancer, optionally a listener's default pool.

A pool created with ``listener_id`` becomes that listener's default pool (409 when it
already has one); deleting a pool takes its members and health monitor along.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.base import Document, OctaviaBase, ids, link
from kiln.cloud.sandbox.load_balancer.rules import (
    COMMON_FIELDS,
    LB_ALGORITHMS,
    POOL_PROTOCOLS,
    SERVICE,
    boolean,
    check_fields,
    choice,
    common,
    persistence,
    pool_fits_listener,
    required,
    string_list,
)

_OPTIONS: dict[str, Any] = {
    "session_persistence": None,
    "tls_enabled": False,
    "tls_container_ref": None,
    "ca_tls_container_ref": None,
    "crl_container_ref": None,
    "tls_ciphers": None,
    "tls_versions": None,
    "alpn_protocols": None,
}
_UPDATE_FIELDS = (*COMMON_FIELDS, "lb_algorithm", *_OPTIONS)
_CREATE_FIELDS = (
    *_UPDATE_FIELDS,
    "protocol",
    "listener_id",
    "loadbalancer_id",
    "project_id",
    "tenant_id",
)


class PoolOps(OctaviaBase):
    """Create, show, list, update and delete pools."""

    def create_pool(self, scope: CloudScope, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "create_pool")
        with self.store.lock:
            self.settle()
            check_fields(body, _CREATE_FIELDS)
            required(body, "lb_algorithm")
            choice(body, "lb_algorithm", LB_ALGORITHMS)
            protocol = str(required(body, "protocol"))
            choice(body, "protocol", POOL_PROTOCOLS)
            fields = common(body)
            sticky = self._check_pool_options(body)
            listener = None
            if body.get("listener_id"):
                listener = self.lookup(scope, "listener", str(body["listener_id"]))
                lb_id = ids(listener["loadbalancers"])[0]
                if body.get("loadbalancer_id") not in (None, lb_id):
                    raise BadRequest("The listener is not on the given Load Balancer.")
            elif body.get("loadbalancer_id"):
                lb_id = str(body["loadbalancer_id"])
            else:
                raise BadRequest(
                    "Validation failure: a pool needs a listener_id or a loadbalancer_id."
                )
            loadbalancer = self.lookup(scope, "loadbalancer", lb_id)
            self.check_mutable(loadbalancer)
            project = loadbalancer["project_id"]
            self.sim.check_quota(project, "pools", self.count("pool", project))
            if listener is not None:
                if listener.get("default_pool_id"):
                    raise Conflict(
                        f"Listener {listener['id']} already has default pool "
                        f"{listener['default_pool_id']}.",
                        service=SERVICE,
                    )
                pool_fits_listener(listener["protocol"], protocol)
            pool_id = self.cloud.new_id()
            document: Document = {
                "id": pool_id,
                "name": "",
                "description": "",
                "admin_state_up": True,
                "tags": [],
                **fields,
                "project_id": project,
                "tenant_id": project,
                "provisioning_status": "PENDING_CREATE",
                "operating_status": "OFFLINE",
                "created_at": self.cloud.timestamp(),
                "updated_at": None,
                "lb_algorithm": body["lb_algorithm"],
                "protocol": protocol,
                **{k: body.get(k, default) for k, default in _OPTIONS.items()},
                "session_persistence": sticky,
                "loadbalancers": [{"id": lb_id}],
                "listeners": [{"id": listener["id"]}] if listener else [],
                "members": [],
                "healthmonitor_id": None,
            }
            if listener is not None:
                listener["default_pool_id"] = pool_id
                self.store.put("listener", listener)
            link(loadbalancer["pools"], pool_id)
            self.store.put("loadbalancer", loadbalancer)
            self.store.put("pool", document)
            self.begin(scope, "create_pool", "pool", document, "create")
            return document

    def get_pool(self, scope: CloudScope, pool_id: str) -> Document:
        return self.fetch(scope, "get_pool", "pool", pool_id)

    def list_pools(self, scope: CloudScope, **filters: Any) -> list[Document]:
        return self.fetch_all(scope, "list_pools", "pool", filters)

    def update_pool(self, scope: CloudScope, pool_id: str, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "update_pool", pool_id)
        with self.store.lock:
            document = self.lookup(scope, "pool", pool_id)
            check_fields(body, _UPDATE_FIELDS)
            choice(body, "lb_algorithm", LB_ALGORITHMS)
            fields = common(body)
            sticky = self._check_pool_options(body)
            self.check_mutable(self.root("pool", document))
            document.update(fields)
            document.update({k: body[k] for k in ("lb_algorithm", *_OPTIONS) if k in body})
            if "session_persistence" in body:
                document["session_persistence"] = sticky
            self.begin(scope, "update_pool", "pool", document, "update")
            return document

    def delete_pool(self, scope: CloudScope, pool_id: str) -> None:
        self.enter(scope, "delete_pool", pool_id)
        with self.store.lock:
            document = self.lookup(scope, "pool", pool_id)
            self.check_mutable(self.root("pool", document))
            related: list[tuple[str, Document]] = [
                ("member", m) for m in self.store.find("member", pool_id=pool_id)
            ]
            monitor_id = document.get("healthmonitor_id")
            monitor = self.store.get("healthmonitor", monitor_id) if monitor_id else None
            if monitor is not None:
                related.append(("healthmonitor", monitor))
            self.begin(scope, "delete_pool", "pool", document, "delete", related=related)

    @staticmethod
    def _check_pool_options(body: Mapping[str, Any]) -> dict[str, Any] | None:
        boolean(body, "tls_enabled")
        string_list(body, "tls_versions")
        string_list(body, "alpn_protocols")
        return persistence(body.get("session_persistence"))
