"""The registry of custom constraints (``custom_constraint: NAME``).

A :class:`CustomConstraints` maps constraint names to checkers: callables that
take a value and return None when it is valid, or a reason (possibly empty) when
it is not. The registry turns a reason into Heat's message. Registries are plain
objects built at start-up and passed around; there is no global one. Names whose
check needs a cloud (``nova.flavor``, ``glance.image``, ...) are listed in
:data:`CLOUD_CONSTRAINT_NAMES`; :meth:`CustomConstraints.offline` knows them but
does not check them, so templates can be validated without a cloud. Later code
registers real checkers for them. Imports: kiln.schema.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from kiln.schema.checkers import Checker, builtin_checkers

# Constraint names whose check is a lookup in a cloud service
# (reference resource-types.md section 0.5).
CLOUD_CONSTRAINT_NAMES: frozenset[str] = frozenset(
    {
        "nova.flavor",
        "nova.keypair",
        "nova.server",
        "nova.host",
        "glance.image",
        "neutron.network",
        "neutron.subnet",
        "neutron.port",
        "neutron.router",
        "neutron.security_group",
        "neutron.subnetpool",
        "neutron.qos_policy",
        "neutron.address_scope",
        "neutron.segment",
        "cinder.volume",
        "cinder.snapshot",
        "cinder.backup",
        "cinder.vtype",
        "cinder.qos_specs",
        "keystone.project",
        "keystone.user",
        "keystone.role",
        "keystone.domain",
        "keystone.group",
        "keystone.region",
        "keystone.service",
        "octavia.loadbalancer",
        "octavia.listener",
        "octavia.pool",
        "octavia.l7policy",
        "octavia.flavor",
        "octavia.availabilityzone",
        "zaqar.queue",
    }
)


def _unchecked(value: Any) -> str | None:
    """Stands in for a check that needs a cloud: every value passes."""
    return None


class CustomConstraints:
    """Named checkers for ``custom_constraint``."""

    def __init__(self, checkers: Mapping[str, Checker] | None = None) -> None:
        self._checkers: dict[str, Checker] = dict(checkers or {})

    @classmethod
    def builtin(cls, *, now: Callable[[], datetime] | None = None) -> CustomConstraints:
        """The service-free checkers only (``ip_addr``, ``cron_expression``, ...)."""
        return cls(builtin_checkers(now))

    @classmethod
    def offline(cls, *, now: Callable[[], datetime] | None = None) -> CustomConstraints:
        """The built-ins, plus every cloud-backed name known but not checked."""
        registry = cls.builtin(now=now)
        for name in CLOUD_CONSTRAINT_NAMES:
            registry.register(name, _unchecked)
        return registry

    def register(self, name: str, checker: Checker) -> None:
        """Add or replace the checker for ``name``."""
        self._checkers[name] = checker

    def copy(self) -> CustomConstraints:
        return CustomConstraints(self._checkers)

    def __contains__(self, name: object) -> bool:
        return name in self._checkers

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._checkers))

    def is_checked(self, name: str) -> bool:
        """False for unknown names and for names registered without a real check."""
        checker = self._checkers.get(name)
        return checker is not None and checker is not _unchecked

    def check(self, name: str, value: Any) -> str | None:
        """Heat's failure message for ``value`` under constraint ``name``, or None."""
        checker = self._checkers.get(name)
        if checker is None:
            return f'"{value}" does not validate {name} (constraint not found)'
        reason = checker(value)
        if reason is None:
            return None
        if not reason:
            return f"Error validating value '{value}'"
        return f"Error validating value '{value}': {reason}"
