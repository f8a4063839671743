"""What every Octavia object kind shares: lookups, listing, the tree's immutability and
the status machine (PENDING_* -> ACTIVE, parents PENDING_UPDATE meanwhile).

An Octavia object tree is one load balancer with its listeners, pools, members and
health monitors. A mutation of any object of the tree first checks the load balancer
is not PENDING_* (else 409, "immutable"), then marks the object ``PENDING_<ACTION>``
and its ancestors ``PENDING_UPDATE``; all of them end the action together after the
simulated delay. A deleted object is removed (GET 404) by the ``octavia.remove`` hook,
which also unlinks it from its parents. Transitions are applied lazily by the store, so
every operation first settles the whole service (:meth:`OctaviaBase.settle`): the
parents' child lists then always agree with the children that still exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kiln.cloud.api.errors import Conflict, Forbidden, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.load_balancer.rules import LABELS, PENDING, SERVICE

Document = dict[str, Any]
KINDS = ("loadbalancer", "listener", "pool", "member", "healthmonitor")
REMOVE_HOOK = "octavia.remove"

#: query parameters that page or shape a list rather than filter it
_NOT_FILTERS = frozenset({"limit", "marker", "page_reverse", "sort", "sort_key", "sort_dir"})
#: list filters answered from a ``[{"id"}]`` list field of the object
_LINK_FILTERS = {"loadbalancer_id": "loadbalancers", "listener_id": "listeners"}


def ids(links: Iterable[Mapping[str, Any]] | None) -> list[str]:
    return [str(link["id"]) for link in links or []]


def link(links: list[dict[str, Any]], object_id: str) -> None:
    if object_id not in ids(links):
        links.append({"id": object_id})


def unlink(links: list[dict[str, Any]], object_id: str) -> None:
    links[:] = [item for item in links if item.get("id") != object_id]


def _matches(document: Mapping[str, Any], key: str, wanted: Any) -> bool:
    if key in _LINK_FILTERS:
        return str(wanted) in ids(document.get(_LINK_FILTERS[key]))
    if key == "tags":
        wanted_tags = wanted if isinstance(wanted, list) else str(wanted).split(",")
        return set(wanted_tags) <= set(document.get("tags") or [])
    value = document.get(key)
    if isinstance(value, bool):
        return str(wanted).lower() == str(value).lower()
    if isinstance(wanted, bool):
        return value == wanted
    return value is not None and str(value) == str(wanted)


class OctaviaBase:
    """Shared machinery of the load-balancer model (the per-kind mixins build on it)."""

    #: an LB in ERROR refuses changes to its tree (409) like a pending one; False allows them
    error_blocks_children = True

    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud
        self.store = cloud.store
        self.sim = cloud.sim
        self.store.on(REMOVE_HOOK, self._removed)

    # -- calls ------------------------------------------------------------------------
    def enter(self, scope: CloudScope, operation: str, target: str | None = None) -> None:
        """The simulator's bookkeeping (log, latency, call faults) for one operation."""
        self.sim.enter(scope, SERVICE, operation, target)

    # -- the plain operations every kind has ------------------------------------------
    def fetch(self, scope: CloudScope, operation: str, kind: str, object_id: str) -> Document:
        """``get_<kind>``: one visible document."""
        self.enter(scope, operation, object_id)
        with self.store.lock:
            return self.lookup(scope, kind, object_id)

    def fetch_all(
        self, scope: CloudScope, operation: str, kind: str, filters: Mapping[str, Any]
    ) -> list[Document]:
        """``list_<kinds>``: the visible documents matching ``filters``."""
        self.enter(scope, operation)
        with self.store.lock:
            return self.select(scope, kind, filters)

    def remove(self, scope: CloudScope, operation: str, kind: str, object_id: str) -> None:
        """``delete_<kind>`` of a child with nothing of its own to take along."""
        self.enter(scope, operation, object_id)
        with self.store.lock:
            document = self.lookup(scope, kind, object_id)
            self.check_mutable(self.root(kind, document))
            self.begin(scope, operation, kind, document, "delete")

    def settle(self) -> None:
        """Apply every due transition of the service (see the module docstring)."""
        for kind in KINDS:
            self.store.list(kind)

    # -- lookups ----------------------------------------------------------------------
    @staticmethod
    def visible(scope: CloudScope, document: Mapping[str, Any]) -> bool:
        return scope.is_admin or document.get("project_id") == scope.project_id

    def lookup(self, scope: CloudScope, kind: str, object_id: str) -> Document:
        """The live document, or 404 (absent, or another project's)."""
        self.settle()
        document = self.store.get(kind, object_id)
        if document is None or not self.visible(scope, document):
            raise NotFound(f"{LABELS[kind]} {object_id} not found.", service=SERVICE)
        return document

    def select(
        self, scope: CloudScope, kind: str, filters: Mapping[str, Any], **fixed: Any
    ) -> list[Document]:
        """The visible documents of ``kind`` matching ``filters`` (equality) and a page."""
        self.settle()
        wanted = {k: v for k, v in filters.items() if k not in _NOT_FILTERS and v is not None}
        if "tenant_id" in wanted:
            wanted["project_id"] = wanted.pop("tenant_id")
        if wanted.get("project_id") not in (None, scope.project_id) and not scope.is_admin:
            return []
        wanted.update(fixed)
        found = [
            d
            for d in self.store.list(kind)
            if self.visible(scope, d) and all(_matches(d, k, v) for k, v in wanted.items())
        ]
        marker = filters.get("marker")
        if marker:
            positions = [i for i, d in enumerate(found) if d["id"] == marker]
            found = found[positions[0] + 1 :] if positions else []
        limit = filters.get("limit")
        if limit not in (None, ""):
            found = found[: max(0, int(limit))]
        return found

    def project_for(self, scope: CloudScope, body: Mapping[str, Any]) -> str:
        """The owner of a new object: the caller's project, or another one for an admin."""
        project = body.get("project_id") or body.get("tenant_id") or scope.project_id
        if project != scope.project_id and not scope.is_admin:
            raise Forbidden("Policy does not allow this request to be performed.")
        return str(project)

    def count(self, kind: str, project_id: str) -> int:
        return len(self.store.find(kind, project_id=project_id))

    # -- the tree ---------------------------------------------------------------------
    def root(self, kind: str, document: Document) -> Document:
        """The load balancer of an object's tree."""
        if kind == "loadbalancer":
            return document
        if kind in ("member", "healthmonitor"):
            pool_id = document["pool_id"] if kind == "member" else ids(document["pools"])[0]
            return self.root("pool", self._require("pool", pool_id))
        return self._require("loadbalancer", ids(document["loadbalancers"])[0])

    def ancestors(self, kind: str, document: Document) -> list[tuple[str, Document]]:
        """The objects an action on ``document`` also marks PENDING_UPDATE."""
        if kind == "loadbalancer":
            return []
        if kind in ("listener", "pool"):
            found = [("loadbalancer", self.root(kind, document))]
            if kind == "pool":
                found += [
                    ("listener", self._require("listener", i)) for i in ids(document["listeners"])
                ]
            return found
        pool_id = document["pool_id"] if kind == "member" else ids(document["pools"])[0]
        pool = self._require("pool", pool_id)
        return [("pool", pool), *self.ancestors("pool", pool)]

    def check_mutable(self, loadbalancer: Mapping[str, Any], *, own: bool = False) -> None:
        """409 while the tree's load balancer is pending (or in ERROR, for its children)."""
        status = loadbalancer["provisioning_status"]
        if status in PENDING or (status == "ERROR" and not own and self.error_blocks_children):
            raise Conflict(
                f"Load Balancer {loadbalancer['id']} is immutable and cannot be updated.",
                service=SERVICE,
            )

    def _require(self, kind: str, object_id: str) -> Document:
        document = self.store.get(kind, object_id)
        if document is None:
            raise NotFound(f"{LABELS[kind]} {object_id} not found.", service=SERVICE)
        return document

    # -- the status machine -----------------------------------------------------------
    def begin(
        self,
        scope: CloudScope,
        operation: str,
        kind: str,
        document: Document,
        action: str,
        *,
        online: str = "ONLINE",
        related: Iterable[tuple[str, Document]] = (),
    ) -> None:
        """Start ``action`` (create, update, delete) on the object and its ancestors.

        ``related``: more objects going away with it (a cascade), removed together.
        """
        delay = self.sim.delay(SERVICE, kind, action)
        fault = self.sim.outcome(scope, SERVICE, operation)
        now = self.cloud.timestamp()
        hook: str | None = None
        if fault is not None:
            final: dict[str, Any] = {
                "provisioning_status": fault.final_state,
                "operating_status": "ERROR",
            }
        elif action == "create":
            final = {"provisioning_status": "ACTIVE", "operating_status": online}
        elif action == "update":
            final = {"provisioning_status": "ACTIVE"}
        else:
            final, hook = {"provisioning_status": "DELETED"}, REMOVE_HOOK
        document["provisioning_status"] = f"PENDING_{action.upper()}"
        document["updated_at"] = now
        self.store.put(kind, document)
        self.store.schedule(kind, document["id"], delay, final, hook)
        for other_kind, other in related:
            other["provisioning_status"] = "PENDING_DELETE"
            self.store.put(other_kind, other)
        parents = (
            [] if action == "delete" and kind == "loadbalancer" else self.ancestors(kind, document)
        )
        for parent_kind, parent in parents:
            parent["provisioning_status"] = "PENDING_UPDATE"
            parent["updated_at"] = now
            self.store.put(parent_kind, parent)
            self.store.schedule(parent_kind, parent["id"], delay, {"provisioning_status": "ACTIVE"})

    def _removed(self, kind: str, document: Document) -> None:
        """A deleted object's transition ended: drop it and unlink it from its parents."""
        self.store.delete(kind, document["id"])
        getattr(self, f"_unlink_{kind}")(document)

    def _unlink_member(self, member: Document) -> None:
        pool = self.store.get("pool", member["pool_id"])
        if pool is not None:
            unlink(pool["members"], member["id"])
            self.store.put("pool", pool)

    def _unlink_healthmonitor(self, monitor: Document) -> None:
        for pool_id in ids(monitor["pools"]):
            pool = self.store.get("pool", pool_id)
            if pool is None:
                continue
            if pool.get("healthmonitor_id") == monitor["id"]:
                pool["healthmonitor_id"] = None
            self.store.put("pool", pool)
            for member in self.store.find("member", pool_id=pool_id):
                member["operating_status"] = "NO_MONITOR"
                self.store.put("member", member)

    def _unlink_pool(self, pool: Document) -> None:
        for member_id in ids(pool["members"]):
            self.store.delete("member", member_id)
        if pool.get("healthmonitor_id"):
            self.store.delete("healthmonitor", pool["healthmonitor_id"])
        for listener in self.store.list("listener"):
            if listener.get("default_pool_id") == pool["id"]:
                listener["default_pool_id"] = None
                self.store.put("listener", listener)
        for lb_id in ids(pool["loadbalancers"]):
            loadbalancer = self.store.get("loadbalancer", lb_id)
            if loadbalancer is not None:
                unlink(loadbalancer["pools"], pool["id"])
                self.store.put("loadbalancer", loadbalancer)

    def _unlink_listener(self, listener: Document) -> None:
        for pool in self.store.list("pool"):
            if listener["id"] in ids(pool["listeners"]):
                unlink(pool["listeners"], listener["id"])
                self.store.put("pool", pool)
        for lb_id in ids(listener["loadbalancers"]):
            loadbalancer = self.store.get("loadbalancer", lb_id)
            if loadbalancer is not None:
                unlink(loadbalancer["listeners"], listener["id"])
                self.store.put("loadbalancer", loadbalancer)
