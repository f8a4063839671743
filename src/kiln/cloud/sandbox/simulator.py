"""What makes the sandbox behave like a real, imperfect cloud: latency, delays, faults, quotas.

Every service operation starts with :meth:`Simulator.enter` (before it takes the store's
lock): the call is logged, delayed by the configured latency, and failed if a fault
rule matches. Transitional states (``BUILD``, ``PENDING_CREATE``, ...) last
:meth:`Simulator.delay` seconds (0 by default: the next read sees the final state;
``inf``: frozen). Outcome faults make an action end in ERROR instead of its final state.
All of it comes from :class:`SandboxConfig` (a file given to ``kiln all`` /
``kiln sandbox``) and can be changed at run time through the ``/_sim`` control endpoint.

Patterns are shell-style (``fnmatch``): latency and call faults match
``<service>.<operation>`` (``compute.create_server``, ``network.*``); delays match
``<service>.<kind>.<action>`` (``compute.server.create``).
"""

from __future__ import annotations

import fnmatch
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kiln.cloud.api.errors import CloudError, error_for_status
from kiln.cloud.api.scope import CloudScope, call_origin

#: default per-project quotas (generous: a laptop sandbox should rarely say no)
DEFAULT_QUOTAS: Mapping[str, int] = {
    "instances": 1000,
    "cores": 4000,
    "ram": 4096000,
    "key_pairs": 1000,
    "server_groups": 100,
    "server_group_members": 1000,
    "networks": 500,
    "subnets": 1000,
    "ports": 5000,
    "routers": 100,
    "floatingips": 500,
    "security_groups": 500,
    "security_group_rules": 5000,
    "volumes": 1000,
    "gigabytes": 100000,
    "backups": 1000,
    "snapshots": 1000,
    "loadbalancers": 100,
    "listeners": 1000,
    "pools": 1000,
    "members": 10000,
    "healthmonitors": 1000,
    "alarms": 1000,
}


@dataclass
class FaultRule:
    """Fail matching calls (``final_state`` None) or make matching actions end badly.

    A call fault raises the error of ``status`` with ``message`` for the matching call,
    after letting ``skip`` matching calls pass, ``count`` times (None: every time). An
    outcome fault (``final_state`` set, e.g. ``ERROR``) is consumed by the service when it
    schedules the action's end: the object ends in that state with ``message`` as fault.
    """

    service: str = "*"
    operation: str = "*"
    status: int = 500
    message: str = "Injected fault"
    count: int | None = 1
    skip: int = 0
    final_state: str | None = None
    project_id: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def matches(self, service: str, operation: str, project_id: str | None) -> bool:
        return (
            fnmatch.fnmatchcase(service, self.service)
            and fnmatch.fnmatchcase(operation, self.operation)
            and (self.project_id is None or self.project_id == project_id)
        )

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CallRecord:
    """One operation the sandbox was asked to do."""

    at: float
    service: str
    operation: str
    project_id: str | None
    target: str | None
    fault: int | None  # the injected status, when the call was failed on purpose
    origin: str | None = None  # who called (kiln.cloud.api.scope.call_origin)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SandboxConfig:
    """The knobs of the simulation (all optional)."""

    latency: dict[str, float] = field(default_factory=dict)
    delays: dict[str, float] = field(default_factory=dict)
    faults: list[FaultRule] = field(default_factory=list)
    quotas: dict[str, int] = field(default_factory=dict)
    #: how many call records to keep
    log_size: int = 100000

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SandboxConfig:
        """From a parsed YAML/JSON document; unknown keys are an error."""
        unknown = set(data) - {"latency", "delays", "faults", "quotas", "log_size"}
        if unknown:
            raise ValueError(f"unknown sandbox settings: {', '.join(sorted(unknown))}")
        return cls(
            latency={str(k): float(v) for k, v in (data.get("latency") or {}).items()},
            delays={str(k): float(v) for k, v in (data.get("delays") or {}).items()},
            faults=[FaultRule(**rule) for rule in data.get("faults") or []],
            quotas={str(k): int(v) for k, v in (data.get("quotas") or {}).items()},
            log_size=int(data.get("log_size", 100000)),
        )


class Simulator:
    """Latency, delays, faults, quotas and the call log of one sandbox."""

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], float] = time.time,
    ) -> None:
        config = config or SandboxConfig()
        self._lock = threading.Lock()
        self._sleep = sleep
        self._now = now
        self.latency: dict[str, float] = dict(config.latency)
        self.delays: dict[str, float] = dict(config.delays)
        self.faults: list[FaultRule] = list(config.faults)
        self.quotas: dict[str, int] = {**DEFAULT_QUOTAS, **config.quotas}
        self.project_quotas: dict[str, dict[str, int]] = {}
        self.calls: deque[CallRecord] = deque(maxlen=config.log_size)

    # -- calls ----------------------------------------------------------------------------
    def enter(
        self, scope: CloudScope | None, service: str, operation: str, target: str | None = None
    ) -> None:
        """Log the call, wait its latency, and raise an injected fault if one matches."""
        project_id = scope.project_id if scope is not None else None
        fault = self._take_fault(service, operation, project_id, outcome=False)
        with self._lock:
            self.calls.append(
                CallRecord(
                    self._now(),
                    service,
                    operation,
                    project_id,
                    target,
                    fault.status if fault else None,
                    call_origin.get(),
                )
            )
        seconds = _lookup(self.latency, f"{service}.{operation}", 0.0)
        if seconds > 0:
            self._sleep(seconds)
        if fault is not None:
            raise error_for_status(fault.status, fault.message, service=service)

    def outcome(self, scope: CloudScope | None, service: str, operation: str) -> FaultRule | None:
        """An outcome fault for this action, consumed; None when it should succeed."""
        project_id = scope.project_id if scope is not None else None
        return self._take_fault(service, operation, project_id, outcome=True)

    def delay(self, service: str, kind: str, action: str) -> float:
        """Seconds the transitional state of ``kind``'s ``action`` lasts (inf: frozen)."""
        return _lookup(self.delays, f"{service}.{kind}.{action}", 0.0)

    # -- quotas ---------------------------------------------------------------------------
    def quota(self, project_id: str, name: str) -> int:
        return self.project_quotas.get(project_id, {}).get(name, self.quotas.get(name, 10**9))

    def check_quota(self, project_id: str, name: str, used: int, wanted: int = 1) -> None:
        """Raise OverLimit when ``used + wanted`` exceeds the project's quota ``name``."""
        limit = self.quota(project_id, name)
        if used + wanted > limit:
            raise error_for_status(
                413, f"Quota exceeded for {name}: requested {wanted}, used {used}, limit {limit}"
            )

    # -- control --------------------------------------------------------------------------
    def add_fault(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self.faults.append(rule)
        return rule

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def call_log(
        self, service: str | None = None, operation: str | None = None
    ) -> list[CallRecord]:
        with self._lock:
            calls = list(self.calls)
        return [
            c
            for c in calls
            if (service is None or fnmatch.fnmatchcase(c.service, service))
            and (operation is None or fnmatch.fnmatchcase(c.operation, operation))
        ]

    def _take_fault(
        self, service: str, operation: str, project_id: str | None, *, outcome: bool
    ) -> FaultRule | None:
        with self._lock:
            for rule in self.faults:
                if (rule.final_state is not None) != outcome:
                    continue
                if not rule.matches(service, operation, project_id):
                    continue
                if rule.skip > 0:
                    rule.skip -= 1
                    continue
                if rule.count is not None:
                    rule.count -= 1
                    if rule.count <= 0:
                        self.faults.remove(rule)
                return rule
        return None


def _lookup(table: Mapping[str, float], key: str, default: float) -> float:
    """The value of the most specific pattern matching ``key`` (longest pattern wins)."""
    best: tuple[int, float] | None = None
    for pattern, value in table.items():
        if fnmatch.fnmatchcase(key, pattern) and (best is None or len(pattern) > best[0]):
            best = (len(pattern), value)
    return default if best is None else best[1]


__all__ = [
    "DEFAULT_QUOTAS",
    "CallRecord",
    "CloudError",
    "FaultRule",
    "SandboxConfig",
    "Simulator",
]
