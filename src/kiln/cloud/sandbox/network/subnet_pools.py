"""Subnet pools in the simulated Neutron (``/v2.0/subnetpools``), and taking subnets from them.

A pool is a set of prefixes of one IP version (compacted: overlapping or neighbouring
prefixes merge) with the prefix lengths a subnet may take: ``min_prefixlen`` (default 8
for IPv4, 64 for IPv6), ``max_prefixlen`` (32 / 128) and ``default_prefixlen`` (default:
the minimum). ``shared`` and ``is_default`` are admin-only, one default pool per IP
version; prefixes may only grow; a pool subnets were taken from cannot be deleted (400
``SubnetPoolDeleteError``, as in Neutron). Address scopes are not simulated:
``address_scope_id`` is always null.

A subnet created with ``subnetpool_id`` (or ``use_default_subnetpool``) gets its range from
the pool: a ``/prefixlen`` (default: the pool's) chosen as Neutron does, or the ``cidr``
asked, which must lie in the pool's free space (its prefixes minus the subnets taken from
it). Errors are Neutron's: 400 outside ``min``/``max_prefixlen``, 409
``SubnetPoolQuotaExceeded`` past ``default_quota``, and 500 ``SubnetAllocationError``
when nothing fits (Neutron maps that error to no 4xx). The subnets of one network and IP
version all come from the same pool, or none (400 ``NetworkSubnetPoolAffinityError``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.network.base import (
    Doc,
    bad_request,
    conflict,
    forbidden,
    neutron_error,
)
from kiln.cloud.sandbox.network.ipam import (
    IpamError,
    IpNetwork,
    compact,
    first_fit,
    free_prefixes,
    holds,
    parse_cidr,
)
from kiln.cloud.sandbox.network.networks import NetworkOps

SUBNETPOOL_UPDATE_FIELDS = frozenset(
    {
        "name",
        "description",
        "prefixes",
        "default_prefixlen",
        "min_prefixlen",
        "max_prefixlen",
        "is_default",
        "default_quota",
        "address_scope_id",
    }
)
SUBNETPOOL_CREATE_FIELDS = SUBNETPOOL_UPDATE_FIELDS | {"shared", "project_id", "tenant_id", "tags"}
_READ_ONLY = frozenset({"id", "ip_version", "shared", "project_id", "tenant_id", "created_at"})
#: per IP version: (bits, default min_prefixlen, the /N that counts as one unit of quota)
_VERSION_BOUNDS = {4: (32, 8, 32), 6: (128, 64, 64)}


def _ipam(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except IpamError as exc:
        raise neutron_error(exc.status, exc.kind, exc.message) from exc


def _bad_subnets(message: str) -> Exception:
    """Neutron's ``BadRequest(resource='subnets')``."""
    return bad_request(f"Bad subnets request: {message}.", "BadRequest")


def _integer(value: Any, field: str) -> int:
    """A non-negative integer attribute (Neutron converts strings)."""
    if isinstance(value, bool):
        raise bad_request(f"Invalid input for {field}. Reason: '{value}' is not an integer.")
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise bad_request(
            f"Invalid input for {field}. Reason: '{value}' is not an integer."
        ) from exc
    if number < 0:
        raise bad_request(f"Invalid input for {field}. Reason: '{value}' should be non-negative.")
    return number


def _boolean(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "1"):
        return True
    if str(value).lower() in ("false", "0"):
        return False
    raise bad_request(
        f"Invalid input for {field}. Reason: '{value}' cannot be converted to boolean."
    )


def _prefixes(raw: Any) -> list[IpNetwork]:
    """The pool's prefixes, validated and compacted (one IP version)."""
    if not isinstance(raw, list) or not raw:
        raise bad_request("Empty subnet pool prefix list.", "EmptySubnetPoolPrefixList")
    networks = [_ipam(parse_cidr, item, 6 if ":" in str(item) else 4) for item in raw]
    if len({n.version for n in networks}) > 1:
        raise bad_request(
            "Cannot mix IPv4 and IPv6 prefixes in a subnet pool.", "PrefixVersionMismatch"
        )
    return compact(networks)


def _bounds_error(kind: str, value: int, base_kind: str, base: int) -> Exception:
    return bad_request(
        f"Illegal prefix bounds: {kind}={value}, {base_kind}={base}.",
        "IllegalSubnetPoolPrefixBounds",
    )


def _pool_fields(body: Mapping[str, Any]) -> Doc:
    """The range fields of a pool from a create body, or a document merged with an update:
    prefixes, ``ip_version`` and the three prefix lengths (defaults filled, bounds checked)."""
    prefixes = _prefixes(body.get("prefixes"))
    version = prefixes[0].version
    bits, default_min, _unit = _VERSION_BOUNDS[version]

    def length(key: str, default: int) -> int:
        value = body.get(key)
        return default if value is None else _integer(value, key)

    minimum = length("min_prefixlen", default_min)
    maximum = length("max_prefixlen", bits)
    default = length("default_prefixlen", minimum)
    if minimum > maximum:
        raise _bounds_error("min_prefixlen", minimum, "max_prefixlen", maximum)
    if maximum > bits:
        raise _bounds_error("max_prefixlen", maximum, "ip_version_max", bits)
    if default < minimum:
        raise _bounds_error("default_prefixlen", default, "min_prefixlen", minimum)
    if default > maximum:
        raise _bounds_error("default_prefixlen", default, "max_prefixlen", maximum)
    quota = body.get("default_quota")
    return {
        "prefixes": [str(p) for p in prefixes],
        "ip_version": version,
        "min_prefixlen": minimum,
        "max_prefixlen": maximum,
        "default_prefixlen": default,
        "default_quota": None if quota is None else _integer(quota, "default_quota"),
    }


def _parsed(prefixes: list[str], version: int) -> list[IpNetwork]:
    return [_ipam(parse_cidr, p, version) for p in prefixes]


class SubnetPoolOps(NetworkOps):
    """Subnet pool operations, and the allocation of a subnet's range from a pool."""

    def create_subnetpool(self, scope: CloudScope, body: Mapping[str, Any]) -> Doc:
        self._enter(scope, "create_subnetpool")
        with self.store.lock:
            return self._create_subnetpool(scope, body)

    def get_subnetpool(self, scope: CloudScope, subnetpool_id: str) -> Doc:
        self._enter(scope, "get_subnetpool", subnetpool_id)
        with self.store.lock:
            return self._get(scope, "subnetpool", subnetpool_id)

    def list_subnetpools(self, scope: CloudScope, **filters: Any) -> list[Doc]:
        self._enter(scope, "list_subnetpools")
        with self.store.lock:
            return self._list(scope, "subnetpool", filters)

    def update_subnetpool(
        self, scope: CloudScope, subnetpool_id: str, body: Mapping[str, Any]
    ) -> Doc:
        self._enter(scope, "update_subnetpool", subnetpool_id)
        with self.store.lock:
            pool = self._owned(scope, "subnetpool", subnetpool_id)
            read_only = sorted(k for k in body if k in _READ_ONLY)
            if read_only:
                raise bad_request(
                    f"Cannot update read-only attribute {read_only[0]}", "HTTPBadRequest"
                )
            self._check_keys(body, SUBNETPOOL_UPDATE_FIELDS, "subnetpool")
            if "is_default" in body and not scope.is_admin:
                raise forbidden("(rule:update_subnetpool:is_default) is disallowed by policy")
            _no_address_scope(body)
            merged = {**pool, **body}
            fields = _pool_fields(merged)
            old = _parsed(pool["prefixes"], pool["ip_version"])
            new = _parsed(fields["prefixes"], fields["ip_version"])
            if fields["ip_version"] != pool["ip_version"] or free_prefixes(old, new):
                raise bad_request(
                    "Illegal update to prefixes: Existing prefixes must be a subset of the new "
                    "prefixes.",
                    "IllegalSubnetPoolPrefixUpdate",
                )
            is_default = _boolean(merged.get("is_default", False), "is_default")
            if is_default and not pool["is_default"]:
                self._check_no_default(pool["ip_version"])
            pool.update(fields)
            pool["is_default"] = is_default
            for key in ("name", "description"):
                if key in body:
                    pool[key] = str(body[key] or "")
            return self._touch("subnetpool", pool)

    def delete_subnetpool(self, scope: CloudScope, subnetpool_id: str) -> None:
        self._enter(scope, "delete_subnetpool", subnetpool_id)
        with self.store.lock:
            pool = self._owned(scope, "subnetpool", subnetpool_id)
            if self.store.find("subnet", subnetpool_id=pool["id"]):
                raise bad_request(
                    "Unable to delete subnet pool: Subnet pool has existing allocations.",
                    "SubnetPoolDeleteError",
                )
            self.store.delete("subnetpool", pool["id"])

    # -- internal --------------------------------------------------------------------------
    def _create_subnetpool(self, scope: CloudScope | None, body: Mapping[str, Any]) -> Doc:
        """A new pool; ``scope`` None is the cloud's own seed (owned by no project)."""
        if "ip_version" in body:
            raise bad_request("Attribute 'ip_version' not allowed in POST", "HTTPBadRequest")
        self._check_keys(body, SUBNETPOOL_CREATE_FIELDS, "subnetpool")
        if "prefixes" not in body:
            raise bad_request(
                "Failed to parse request. Required attribute 'prefixes' not specified",
                "HTTPBadRequest",
            )
        project = "" if scope is None else self._project_for_create(scope, body)
        if scope is not None and not scope.is_admin:
            for key in ("shared", "is_default"):
                if key in body:
                    raise forbidden(f"(rule:create_subnetpool:{key}) is disallowed by policy")
        _no_address_scope(body)
        fields = _pool_fields(body)
        is_default = _boolean(body.get("is_default", False), "is_default")
        if is_default:
            self._check_no_default(fields["ip_version"])
        pool = self._new_doc(project, body)
        pool.update(fields)
        pool.update(
            {
                "shared": _boolean(body.get("shared", False), "shared"),
                "is_default": is_default,
                "address_scope_id": None,
            }
        )
        return self.store.put("subnetpool", pool)

    def _check_no_default(self, ip_version: int) -> None:
        if self.store.find("subnetpool", is_default=True, ip_version=ip_version):
            raise bad_request(
                "Invalid input for operation: A default subnetpool for this IP family has "
                "already been set. Only one default may exist per IP family."
            )

    def _subnetpool_of(self, scope: CloudScope | None, body: Mapping[str, Any]) -> Doc | None:
        """The pool a new subnet takes its range from (``subnetpool_id``, or the default
        pool of its IP version with ``use_default_subnetpool``); None for neither."""
        pool_id = body.get("subnetpool_id")
        use_default = _boolean(body.get("use_default_subnetpool", False), "use_default_subnetpool")
        if pool_id and use_default:
            raise _bad_subnets("subnetpool_id and use_default_subnetpool cannot both be specified")
        if pool_id:
            try:
                uuid.UUID(str(pool_id))
            except ValueError:
                raise bad_request(
                    f"Invalid input for subnetpool_id. Reason: '{pool_id}' is not a valid UUID."
                ) from None
            return self._get(scope, "subnetpool", str(pool_id))
        if not use_default:
            return None
        if body.get("cidr"):
            version = 6 if ":" in str(body["cidr"]) else 4
        elif body.get("ip_version") is not None:
            version = _integer(body["ip_version"], "ip_version")
        else:
            raise _bad_subnets(
                "ip_version must be specified in the absence of cidr and subnetpool_id"
            )
        defaults = self._list(scope, "subnetpool", {"is_default": True, "ip_version": version})
        if not defaults:
            raise _bad_subnets(f"No default subnetpool found for IPv{version}")
        return defaults[0]

    def _allocate_from_pool(self, pool: Doc, project: str, body: Mapping[str, Any]) -> IpNetwork:
        """The range a new subnet of ``project`` takes from ``pool`` (see the module doc)."""
        version = int(pool["ip_version"])
        if body.get("allocation_pools") and not body.get("cidr"):
            raise _bad_subnets("allocation_pools allowed only for specific subnet requests")
        asked = body.get("ip_version")
        if asked is not None and _integer(asked, "ip_version") != version:
            raise _bad_subnets(f"Cannot allocate IPv{asked} subnet from IPv{version} subnet pool")
        wanted: IpNetwork | None = None
        if body.get("cidr"):
            wanted = _ipam(parse_cidr, body["cidr"], version)
            prefixlen = wanted.prefixlen
        elif body.get("prefixlen") is not None:
            prefixlen = _integer(body["prefixlen"], "prefixlen")
        else:
            prefixlen = int(pool["default_prefixlen"])
        if prefixlen > pool["max_prefixlen"]:
            raise bad_request(
                f"Unable to allocate subnet with prefix length {prefixlen}, maximum allowed "
                f"prefix is {pool['max_prefixlen']}.",
                "MaxPrefixSubnetAllocationError",
            )
        if prefixlen < pool["min_prefixlen"]:
            raise bad_request(
                f"Unable to allocate subnet with prefix length {prefixlen}, minimum allowed "
                f"prefix is {pool['min_prefixlen']}.",
                "MinPrefixSubnetAllocationError",
            )
        taken = self.store.find("subnet", subnetpool_id=pool["id"])
        self._check_pool_quota(pool, project, prefixlen, taken)
        free = free_prefixes(
            _parsed(pool["prefixes"], version), _parsed([s["cidr"] for s in taken], version)
        )
        if wanted is None:
            found = first_fit(free, prefixlen)
            if found is None:
                raise neutron_error(
                    500,
                    "SubnetAllocationError",
                    "Failed to allocate subnet: Insufficient prefix space to allocate subnet "
                    f"size /{prefixlen}.",
                )
            return found
        if not holds(free, wanted):
            raise neutron_error(
                500,
                "SubnetAllocationError",
                "Failed to allocate subnet: Cannot allocate requested subnet from the "
                "available set of prefixes.",
            )
        return wanted

    @staticmethod
    def _check_pool_quota(pool: Doc, project: str, prefixlen: int, taken: list[Doc]) -> None:
        """``default_quota`` counts addresses (IPv4) or /64s (IPv6) per project."""
        quota = pool.get("default_quota")
        if not quota:
            return
        unit = _VERSION_BOUNDS[int(pool["ip_version"])][2]
        used = sum(
            2.0 ** (unit - int(str(s["cidr"]).rsplit("/", 1)[1]))
            for s in taken
            if s.get("project_id") == project
        )
        if used + 2.0 ** (unit - prefixlen) > quota:
            raise conflict(
                "SubnetPoolQuotaExceeded", "Per-tenant subnet pool prefix quota exceeded."
            )

    def _check_pool_affinity(self, network: Doc, ip_version: int, pool_id: str | None) -> None:
        """The subnets of one network and IP version all come from the same pool (or none)."""
        for other in self.store.find("subnet", network_id=network["id"]):
            if other["ip_version"] == ip_version and other.get("subnetpool_id") != pool_id:
                raise bad_request(
                    "Subnets hosted on the same network must be allocated from the same subnet "
                    "pool.",
                    "NetworkSubnetPoolAffinityError",
                )


def _no_address_scope(body: Mapping[str, Any]) -> None:
    scope_id = body.get("address_scope_id")
    if scope_id is not None:
        raise neutron_error(
            404, "AddressScopeNotFound", f"Address scope {scope_id} could not be found."
        )
