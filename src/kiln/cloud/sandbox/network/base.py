"""What every part of the simulated Neutron shares: documents, visibility, filters, errors.

The network model is built in layers (security groups, networks, subnet pools, subnets,
ports, routers, floating IPs, then :class:`~kiln.cloud.sandbox.network.model.NetworkModel`),
each a subclass of the one below, so a layer may use everything beneath it. This module
is the bottom: the common fields of every Neutron object (reference section 4: ``id``,
``project_id``/``tenant_id``, ``name``, ``description``, ``tags``, timestamps,
``revision_number``), who may see what (own objects; shared and external networks, shared
subnet pools; admin sees all), list filters (equality, repeated values, tag filters), quotas (409
``OverQuota``) and Neutron's typed errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kiln.cloud.api.errors import CloudError, error_for_status
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud

SERVICE = "network"
Doc = dict[str, Any]

#: store kind -> (error type, message template) for a missing object
_NOT_FOUND = {
    "network": ("NetworkNotFound", "Network {} could not be found."),
    "subnet": ("SubnetNotFound", "Subnet {} could not be found."),
    "port": ("PortNotFound", "Port {} could not be found."),
    "router": ("RouterNotFound", "Router {} could not be found."),
    "floatingip": ("FloatingIPNotFound", "Floating IP {} could not be found."),
    "security_group": ("SecurityGroupNotFound", "Security group {} does not exist."),
    "security_group_rule": ("SecurityGroupRuleNotFound", "Security group rule {} does not exist."),
    "segment": ("SegmentNotFound", "Segment {} could not be found."),
    "subnetpool": ("SubnetPoolNotFound", "Subnet pool {} could not be found."),
}

#: quota names per store kind (Neutron's resource names)
_QUOTA = {
    "network": "networks",
    "subnet": "subnets",
    "port": "ports",
    "router": "routers",
    "floatingip": "floatingips",
    "security_group": "security_groups",
    "security_group_rule": "security_group_rules",
}

#: query keys that are not attribute filters (paging and projection belong to the app)
_NOT_FILTERS = frozenset(
    {"fields", "limit", "marker", "page_reverse", "sort_key", "sort_dir", "all_tenants"}
)
_TAG_FILTERS = frozenset(
    {"tags", "tags-any", "not-tags", "not-tags-any", "tags_any", "not_tags", "not_tags_any"}
)


def neutron_error(status: int, kind: str, message: str) -> CloudError:
    """A cloud error carrying Neutron's error type."""
    return error_for_status(status, message, kind=kind, service=SERVICE)


def bad_request(message: str, kind: str = "InvalidInput") -> CloudError:
    return neutron_error(400, kind, message)


def not_found(kind: str, object_id: str) -> CloudError:
    error_type, template = _NOT_FOUND[kind]
    return neutron_error(404, error_type, template.format(object_id))


def forbidden(message: str) -> CloudError:
    return neutron_error(403, "PolicyNotAuthorized", message)


def conflict(kind: str, message: str) -> CloudError:
    return neutron_error(409, kind, message)


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _values(raw: Any) -> list[str]:
    items = raw if isinstance(raw, list | tuple | set | frozenset) else [raw]
    return [_as_text(v).lower() if isinstance(v, bool) else _as_text(v) for v in items]


def _tag_list(raw: Any) -> set[str]:
    tags: set[str] = set()
    for item in raw if isinstance(raw, list | tuple) else [raw]:
        tags.update(t for t in str(item).split(",") if t)
    return tags


def _fixed_ip_match(doc: Mapping[str, Any], conditions: list[str]) -> bool:
    """``fixed_ips=ip_address=10.0.0.3`` (and/or ``subnet_id=``) on ports."""
    for condition in conditions:
        key, _, wanted = condition.partition("=")
        if not any(str(ip.get(key)) == wanted for ip in doc.get("fixed_ips") or []):
            return False
    return True


def matches(doc: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """Whether ``doc`` passes every list filter (repeated values = any of them)."""
    for key, raw in filters.items():
        if key in _NOT_FILTERS or (raw is None and key not in doc):
            continue
        if key in _TAG_FILTERS:
            wanted = _tag_list(raw)
            have = set(doc.get("tags") or [])
            mode = key.replace("_", "-")
            ok = {
                "tags": wanted <= have,
                "tags-any": bool(wanted & have),
                "not-tags": not wanted <= have,
                "not-tags-any": not wanted & have,
            }[mode]
            if not ok:
                return False
            continue
        if key == "fixed_ips":
            if not _fixed_ip_match(doc, _values(raw)):
                return False
            continue
        if key not in doc:
            continue  # unknown attributes are ignored, as Neutron without filter validation
        value = doc[key]
        wanted_values = _values(raw)
        if isinstance(value, list):
            if not any(_as_text(v) in wanted_values for v in value):
                return False
        elif isinstance(value, bool):
            if _as_text(value) not in [w.lower() for w in wanted_values]:
                return False
        elif _as_text(value) not in wanted_values:
            return False
    return True


class NetworkBase:
    """Store access, visibility, filters and quotas shared by every Neutron object kind."""

    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud
        self.store = cloud.store
        self.sim = cloud.sim

    # -- calls -----------------------------------------------------------------------------
    def _enter(self, scope: CloudScope, operation: str, target: str | None = None) -> None:
        self.sim.enter(scope, SERVICE, operation, target)

    # -- documents -------------------------------------------------------------------------
    def _new_doc(self, project_id: str, body: Mapping[str, Any]) -> Doc:
        """The fields every Neutron object has, with ``name``/``description``/``tags``."""
        now = self.cloud.timestamp()
        return {
            "id": self.cloud.new_id(),
            "name": str(body.get("name") or ""),
            "description": str(body.get("description") or ""),
            "project_id": project_id,
            "tenant_id": project_id,
            "tags": [str(t) for t in body.get("tags") or []],
            "created_at": now,
            "updated_at": now,
            "revision_number": 0,
        }

    def _touch(self, kind: str, doc: Doc) -> Doc:
        """Record a change: bump the revision, stamp the time, persist."""
        doc["revision_number"] = int(doc.get("revision_number") or 0) + 1
        doc["updated_at"] = self.cloud.timestamp()
        return self.store.put(kind, doc)

    @staticmethod
    def _check_keys(body: Mapping[str, Any], allowed: Iterable[str], kind: str) -> None:
        """400 for attributes the object does not accept here."""
        unknown = sorted(set(body) - set(allowed))
        if unknown:
            names = ", ".join(f"'{k}'" for k in unknown)
            raise bad_request(f"Unrecognized attribute(s) {names} for {kind}.", "HTTPBadRequest")

    @staticmethod
    def _project_for_create(scope: CloudScope, body: Mapping[str, Any]) -> str:
        """The owner of a new object: the caller's project unless an admin names another."""
        wanted = body.get("project_id") or body.get("tenant_id")
        both = body.get("tenant_id") and body.get("project_id")
        if both and body["tenant_id"] != body["project_id"]:
            raise bad_request("'project_id' and 'tenant_id' do not match.")
        if wanted and wanted != scope.project_id and not scope.is_admin:
            raise forbidden(
                "Specifying 'project_id' or 'tenant_id' other than the authenticated "
                "project in request requires admin privileges."
            )
        return str(wanted or scope.project_id)

    # -- visibility ------------------------------------------------------------------------
    def _visible(self, scope: CloudScope | None, kind: str, doc: Mapping[str, Any]) -> bool:
        if scope is None or scope.is_admin or doc.get("project_id") == scope.project_id:
            return True
        if kind == "network":
            return bool(doc.get("shared") or doc.get("router:external"))
        if kind == "subnetpool":
            return bool(doc.get("shared"))
        if kind in ("subnet", "segment"):
            network = self.store.get("network", doc["network_id"])
            return network is not None and self._visible(scope, "network", network)
        return False

    def _get(self, scope: CloudScope | None, kind: str, object_id: str) -> Doc:
        """The live document, or 404 when absent or not visible to ``scope``."""
        doc = self.store.get(kind, str(object_id))
        if doc is None or not self._visible(scope, kind, doc):
            raise not_found(kind, object_id)
        return doc

    def _owned(self, scope: CloudScope | None, kind: str, object_id: str) -> Doc:
        """The document when ``scope`` may change it (visible but not owned: 403)."""
        doc = self._get(scope, kind, object_id)
        if scope is not None and not scope.is_admin and doc.get("project_id") != scope.project_id:
            raise forbidden(f"The request is not allowed on {kind} {object_id}.")
        return doc

    def _list(self, scope: CloudScope | None, kind: str, filters: Mapping[str, Any]) -> list[Doc]:
        return [
            d
            for d in self.store.list(kind)
            if self._visible(scope, kind, d) and matches(d, filters)
        ]

    # -- quotas ----------------------------------------------------------------------------
    def _check_quota(self, project_id: str, kind: str, wanted: int = 1) -> None:
        """409 ``OverQuota`` when ``project_id`` would own too many ``kind`` objects."""
        if not project_id:
            return  # objects Neutron owns itself (gateway and floating IP ports)
        name = _QUOTA[kind]
        used = len(self.store.find(kind, project_id=project_id))
        if used + wanted > self.sim.quota(project_id, name):
            raise conflict("OverQuota", f"Quota exceeded for resources: ['{kind}'].")
