"""Listeners: a protocol and port on a load balancer, optionally with a default pool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.base import Document, OctaviaBase, ids, link
from kiln.cloud.sandbox.load_balancer.rules import (
    COMMON_FIELDS,
    LISTENER_PROTOCOLS,
    SERVICE,
    check_fields,
    choice,
    common,
    integer,
    pool_fits_listener,
    ports_clash,
    required,
    string_list,
)

_TIMEOUTS = {
    "timeout_client_data": 50000,
    "timeout_member_connect": 5000,
    "timeout_member_data": 50000,
    "timeout_tcp_inspect": 0,
}
#: fields an update may change, with their defaults on create
_OPTIONS: dict[str, Any] = {
    "connection_limit": -1,
    "default_pool_id": None,
    "default_tls_container_ref": None,
    "sni_container_refs": [],
    "client_ca_tls_container_ref": None,
    "allowed_cidrs": None,
    "insert_headers": {},
    "tls_ciphers": None,
    "tls_versions": None,
    "alpn_protocols": None,
    **_TIMEOUTS,
}
_UPDATE_FIELDS = (*COMMON_FIELDS, *_OPTIONS)
_CREATE_FIELDS = (
    *_UPDATE_FIELDS,
    "loadbalancer_id",
    "protocol",
    "protocol_port",
    "project_id",
    "tenant_id",
)


class ListenerOps(OctaviaBase):
    """Create, show, list, update and delete listeners."""

    def create_listener(self, scope: CloudScope, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "create_listener")
        with self.store.lock:
            self.settle()
            check_fields(body, _CREATE_FIELDS)
            lb_id = str(required(body, "loadbalancer_id"))
            protocol = str(required(body, "protocol"))
            choice(body, "protocol", LISTENER_PROTOCOLS)
            required(body, "protocol_port")
            port = integer(body, "protocol_port", 1, 65535)
            fields = common(body)
            self._check_listener_options(body)
            loadbalancer = self.lookup(scope, "loadbalancer", lb_id)
            self.check_mutable(loadbalancer)
            project = loadbalancer["project_id"]
            self.sim.check_quota(project, "listeners", self.count("listener", project))
            for other in self.store.list("listener"):
                if (
                    lb_id in ids(other["loadbalancers"])
                    and other["protocol_port"] == port
                    and ports_clash(other["protocol"], protocol)
                ):
                    raise Conflict(
                        f"Another Listener on this Load Balancer is already using "
                        f"protocol_port {port}",
                        service=SERVICE,
                    )
            if protocol == "TERMINATED_HTTPS" and not body.get("default_tls_container_ref"):
                raise BadRequest(
                    "An SSL default_tls_container_ref is required for TERMINATED_HTTPS listeners."
                )
            listener_id = self.cloud.new_id()
            document: Document = {
                "id": listener_id,
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
                "protocol": protocol,
                "protocol_port": port,
                "loadbalancers": [{"id": lb_id}],
                "l7policies": [],
                **{k: body.get(k, default) for k, default in _OPTIONS.items()},
            }
            if document["default_pool_id"]:
                pool = self._pool_for(scope, document, str(document["default_pool_id"]))
                self._attach(document, pool)
            link(loadbalancer["listeners"], listener_id)
            self.store.put("loadbalancer", loadbalancer)
            self.store.put("listener", document)
            self.begin(scope, "create_listener", "listener", document, "create")
            return document

    def get_listener(self, scope: CloudScope, listener_id: str) -> Document:
        return self.fetch(scope, "get_listener", "listener", listener_id)

    def list_listeners(self, scope: CloudScope, **filters: Any) -> list[Document]:
        return self.fetch_all(scope, "list_listeners", "listener", filters)

    def update_listener(
        self, scope: CloudScope, listener_id: str, body: Mapping[str, Any]
    ) -> Document:
        self.enter(scope, "update_listener", listener_id)
        with self.store.lock:
            document = self.lookup(scope, "listener", listener_id)
            check_fields(body, _UPDATE_FIELDS)
            fields = common(body)
            self._check_listener_options(body)
            self.check_mutable(self.root("listener", document))
            tls_cleared = not body.get("default_tls_container_ref", True)
            if document["protocol"] == "TERMINATED_HTTPS" and tls_cleared:
                raise BadRequest("TERMINATED_HTTPS listeners need a default_tls_container_ref.")
            new_pool = body.get("default_pool_id")
            if "default_pool_id" in body and new_pool != document["default_pool_id"]:
                pool = self._pool_for(scope, document, str(new_pool)) if new_pool else None
                self._drop_pool(document)
                if pool is not None:
                    self._attach(document, pool)
            document.update(fields)
            document.update({k: body[k] for k in _OPTIONS if k in body and k != "default_pool_id"})
            self.begin(scope, "update_listener", "listener", document, "update")
            return document

    def delete_listener(self, scope: CloudScope, listener_id: str) -> None:
        self.remove(scope, "delete_listener", "listener", listener_id)

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _check_listener_options(body: Mapping[str, Any]) -> None:
        integer(body, "connection_limit", -1, None)
        for name in _TIMEOUTS:
            integer(body, name, 0, 31536000)
        string_list(body, "sni_container_refs")
        string_list(body, "allowed_cidrs")

    def _pool_for(self, scope: CloudScope, listener: Document, pool_id: str) -> Document:
        """The pool ``pool_id``, when it may be the listener's default (same LB, protocol)."""
        pool = self.lookup(scope, "pool", pool_id)
        if ids(pool["loadbalancers"]) != ids(listener["loadbalancers"]):
            raise BadRequest(f"Pool {pool_id} is on another Load Balancer.")
        pool_fits_listener(listener["protocol"], pool["protocol"])
        return pool

    def _attach(self, listener: Document, pool: Document) -> None:
        listener["default_pool_id"] = pool["id"]
        link(pool["listeners"], listener["id"])
        self.store.put("pool", pool)

    def _drop_pool(self, listener: Document) -> None:
        pool_id = listener.get("default_pool_id")
        pool = self.store.get("pool", pool_id) if pool_id else None
        if pool is not None:
            pool["listeners"] = [p for p in pool["listeners"] if p["id"] != listener["id"]]
            self.store.put("pool", pool)
        listener["default_pool_id"] = None
