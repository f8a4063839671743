"""Health monitors: at most one per pool; its members show ONLINE while it exists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.load_balancer.base import Document, OctaviaBase
from kiln.cloud.sandbox.load_balancer.rules import (
    COMMON_FIELDS,
    HTTP_METHODS,
    HTTP_MONITOR_TYPES,
    MONITOR_TYPES,
    SERVICE,
    check_fields,
    choice,
    common,
    integer,
    required,
)

_HTTP_OPTIONS = {"http_method": "GET", "url_path": "/", "expected_codes": "200"}
_UPDATE_FIELDS = (
    *COMMON_FIELDS,
    "delay",
    "timeout",
    "max_retries",
    "max_retries_down",
    "domain_name",
    "http_version",
    *_HTTP_OPTIONS,
)
_CREATE_FIELDS = (*_UPDATE_FIELDS, "pool_id", "type", "project_id", "tenant_id")


class HealthMonitorOps(OctaviaBase):
    """Create, show, list, update and delete health monitors."""

    def create_health_monitor(self, scope: CloudScope, body: Mapping[str, Any]) -> Document:
        self.enter(scope, "create_health_monitor")
        with self.store.lock:
            self.settle()
            check_fields(body, _CREATE_FIELDS)
            pool_id = str(required(body, "pool_id"))
            kind = str(required(body, "type"))
            choice(body, "type", MONITOR_TYPES)
            for field in ("delay", "timeout", "max_retries"):
                required(body, field)
            fields = common(body)
            self._check_timing(body, body)
            self._check_http(kind, body)
            pool = self.lookup(scope, "pool", pool_id)
            self.check_mutable(self.root("pool", pool))
            project = pool["project_id"]
            self.sim.check_quota(project, "healthmonitors", self.count("healthmonitor", project))
            if pool.get("healthmonitor_id"):
                raise Conflict(
                    f"Pool {pool_id} already has a health monitor {pool['healthmonitor_id']}.",
                    service=SERVICE,
                )
            monitor_id = self.cloud.new_id()
            http = kind in HTTP_MONITOR_TYPES
            document: Document = {
                "id": monitor_id,
                "name": "",
                "admin_state_up": True,
                "tags": [],
                **fields,
                "project_id": project,
                "tenant_id": project,
                "provisioning_status": "PENDING_CREATE",
                "operating_status": "OFFLINE",
                "created_at": self.cloud.timestamp(),
                "updated_at": None,
                "type": kind,
                "delay": body["delay"],
                "timeout": body["timeout"],
                "max_retries": body["max_retries"],
                "max_retries_down": body.get("max_retries_down", 3),
                **{
                    k: body.get(k, default) if http else None
                    for k, default in _HTTP_OPTIONS.items()
                },
                "domain_name": body.get("domain_name"),
                "http_version": body.get("http_version"),
                "pools": [{"id": pool_id}],
            }
            pool["healthmonitor_id"] = monitor_id
            self.store.put("pool", pool)
            for member in self.store.find("member", pool_id=pool_id):
                if member["operating_status"] == "NO_MONITOR":
                    member["operating_status"] = "ONLINE"
                    self.store.put("member", member)
            self.store.put("healthmonitor", document)
            self.begin(scope, "create_health_monitor", "healthmonitor", document, "create")
            return document

    def get_health_monitor(self, scope: CloudScope, hm_id: str) -> Document:
        return self.fetch(scope, "get_health_monitor", "healthmonitor", hm_id)

    def list_health_monitors(self, scope: CloudScope, **filters: Any) -> list[Document]:
        self.enter(scope, "list_health_monitors")
        with self.store.lock:
            pool_id = filters.pop("pool_id", None)
            found = self.select(scope, "healthmonitor", filters)
            if pool_id:
                found = [d for d in found if d["pools"] and d["pools"][0]["id"] == pool_id]
            return found

    def update_health_monitor(
        self, scope: CloudScope, hm_id: str, body: Mapping[str, Any]
    ) -> Document:
        self.enter(scope, "update_health_monitor", hm_id)
        with self.store.lock:
            document = self.lookup(scope, "healthmonitor", hm_id)
            check_fields(body, _UPDATE_FIELDS)
            fields = common(body)
            self._check_timing(body, {**document, **body})
            self._check_http(document["type"], body)
            self.check_mutable(self.root("healthmonitor", document))
            document.update(fields)
            document.update({k: body[k] for k in _UPDATE_FIELDS if k in body and k not in fields})
            self.begin(scope, "update_health_monitor", "healthmonitor", document, "update")
            return document

    def delete_health_monitor(self, scope: CloudScope, hm_id: str) -> None:
        self.remove(scope, "delete_health_monitor", "healthmonitor", hm_id)

    # -- helpers --------------------------------------------------------------------------
    @staticmethod
    def _check_timing(body: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """Ranges of the given fields, and ``timeout <= delay`` of the resulting monitor."""
        integer(body, "delay", 0, 2147483647)
        integer(body, "timeout", 0, 2147483647)
        integer(body, "max_retries", 1, 10)
        integer(body, "max_retries_down", 1, 10)
        timeout, delay = result.get("timeout"), result.get("delay")
        if timeout is not None and delay is not None and timeout > delay:
            raise BadRequest(
                "Validation failure: The health monitor timeout must be less than or "
                "equal to the delay."
            )

    @staticmethod
    def _check_http(kind: str, body: Mapping[str, Any]) -> None:
        choice(body, "http_method", HTTP_METHODS)
        if kind not in HTTP_MONITOR_TYPES:
            for field in _HTTP_OPTIONS:
                if body.get(field) is not None:
                    raise BadRequest(
                        f"Validation failure: {field} is only valid for HTTP(S) monitors."
                    )
        path = body.get("url_path")
        if path is not None and not str(path).startswith("/"):
            raise BadRequest("Validation failure: url_path must start with '/'.")
