"""Custom constraints that look values up in the cloud (``nova.flavor``, ``glance.image``, ...).

A lookup needs a project: the checkers read the cloud of the request being validated
from a context variable that :func:`validating_with` sets around a stack's validation
(create, update, preview, template validate). Outside of it (a step converging a
resource) they pass: the plugin resolves the name itself and fails with the cloud's
message. A cloud that cannot answer (a service it does not have, a transient error)
does not fail validation either (reference resource-types.md 0.5).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.engine.resource_context import ScopedCloud
from kiln.schema.custom import CustomConstraints

#: constraint -> (service, lookup method of its client Protocol, what Heat calls it)
LOOKUPS: Mapping[str, tuple[str, str, str]] = {
    "nova.flavor": ("compute", "find_flavor", "Flavor"),
    "nova.keypair": ("compute", "get_keypair", "Keypair"),
    "nova.server": ("compute", "find_server", "Server"),
    "glance.image": ("image", "find_image", "Image"),
    "neutron.network": ("network", "find_network", "Network"),
    "neutron.subnet": ("network", "find_subnet", "Subnet"),
    "neutron.subnetpool": ("network", "find_subnetpool", "Subnet Pool"),
    "neutron.port": ("network", "find_port", "Port"),
    "neutron.router": ("network", "find_router", "Router"),
    "neutron.security_group": ("network", "find_security_group", "Security Group"),
    "cinder.volume": ("block_storage", "find_volume", "Volume"),
    "cinder.snapshot": ("block_storage", "find_snapshot", "VolumeSnapshot"),
    "cinder.backup": ("block_storage", "find_backup", "Backup"),
    "cinder.vtype": ("block_storage", "find_volume_type", "Volume Type"),
    "octavia.loadbalancer": ("load_balancer", "find_load_balancer", "Load Balancer"),
    "octavia.listener": ("load_balancer", "find_listener", "Listener"),
    "octavia.pool": ("load_balancer", "find_pool", "Pool"),
    "octavia.flavor": ("load_balancer", "find_flavor", "Flavor"),
    "octavia.availabilityzone": ("load_balancer", "find_availability_zone", "Availability Zone"),
}

_current: ContextVar[ScopedCloud | None] = ContextVar("kiln_validation_cloud", default=None)


@contextmanager
def validating_with(cloud: ScopedCloud | None) -> Iterator[None]:
    """Check cloud-backed constraints against ``cloud`` inside the block."""
    token = _current.set(cloud)
    try:
        yield
    finally:
        _current.reset(token)


def _checker(service: str, method: str, what: str) -> Any:
    def check(value: Any) -> str | None:
        cloud = _current.get()
        if cloud is None or value in (None, ""):
            return None
        try:
            getattr(cloud.client(service), method)(str(value))
        except LookupError:  # the cloud has no such service
            return None
        except MultipleMatches:
            return f"Multiple {what} resources were found with name ({value})."
        except NotFound:
            return f"The {what} ({value}) could not be found."
        except Exception:  # the cloud could not answer (an error, an auth failure): the
            return None  # plugin will find out, with the cloud's own message
        return None

    return check


def register_cloud_constraints(custom: CustomConstraints) -> CustomConstraints:
    """``custom`` with the cloud lookups registered (returns it, for chaining)."""
    for name, (service, method, what) in LOOKUPS.items():
        custom.register(name, _checker(service, method, what))
    return custom
