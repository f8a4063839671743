"""What every part of the compute model shares: the cloud, lookups and timed tasks.

The model is split by topic into mixins (servers, actions, attachments, flavors,
keypairs, server groups) over this base, so each module stays small while they all
work on the same store and simulator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import Forbidden, NotFound, OverLimit
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute import states

SERVICE = "compute"
SERVER = "server"
FLAVOR = "flavor"
KEYPAIR = "keypair"
SERVER_GROUP = "server_group"

#: the newest microversion served; models default to it
MAX_VERSION = (2, 90)
MIN_VERSION = (2, 1)
Version = tuple[int, int]

#: the only availability zone (reference section 3)
ZONE = "nova"
HOST = "sandbox"


class ComputeBase:
    """State and helpers of the compute model."""

    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud
        self.store = cloud.store
        self.sim = cloud.sim

    # -- other services ----------------------------------------------------------------
    def service(self, name: str) -> Any | None:
        """Another service's model, or None when this cloud does not simulate it."""
        return self.cloud.services.get(name)

    # -- lookups -----------------------------------------------------------------------
    def server_doc(self, scope: CloudScope, server_id: str) -> dict[str, Any]:
        """The live server document ``scope`` may see; NotFound otherwise."""
        server = self.store.get(SERVER, server_id)
        if server is None or not visible(scope, server["tenant_id"]):
            raise NotFound(f"Instance {server_id} could not be found.", kind="itemNotFound")
        return server

    def project_servers(self, project_id: str) -> list[dict[str, Any]]:
        return self.store.find(SERVER, tenant_id=project_id)

    def check_quota(self, project_id: str, name: str, used: int, wanted: int) -> None:
        """Nova answers quota excess with 403 (reference section 3.2)."""
        try:
            self.sim.check_quota(project_id, name, used, wanted)
        except OverLimit as exc:
            raise Forbidden(exc.message, kind="forbidden") from exc

    # -- timed tasks -------------------------------------------------------------------
    def run_task(
        self,
        scope: CloudScope,
        server: dict[str, Any],
        operation: str,
        action: str,
        *,
        start: Mapping[str, Any],
        steps: list[dict[str, Any]],
        final: dict[str, Any],
        hook: str | None = None,
    ) -> None:
        """Put ``server`` in its ``start`` state now, then ``steps`` and ``final`` over time.

        The whole task lasts ``sim.delay("compute", "server", action)`` seconds; an outcome
        fault for ``compute.<operation>`` ends it in the fault's state with a ``fault``.
        """
        server.update(start)
        server["updated"] = self.cloud.timestamp()
        self.store.put(SERVER, server)
        delay = self.sim.delay(SERVICE, SERVER, action)
        if math.isinf(delay):
            return
        rule = self.sim.outcome(scope, SERVICE, operation)
        if rule is not None:
            final = {
                **states.state((rule.final_state or "ERROR").lower(), None),
                "fault": {
                    "code": rule.status,
                    "message": rule.message,
                    "created": self.cloud.timestamp(),
                },
            }
            hook = None
        step = delay / (len(steps) + 1)
        for changes in steps:
            self.store.schedule(SERVER, server["id"], step, changes)
        final = {**final, "updated": self.cloud.timestamp()}
        self.store.schedule(SERVER, server["id"], step, final, hook)


def visible(scope: CloudScope, project_id: str | None) -> bool:
    """Another project's object is invisible (404) unless the caller is admin."""
    return scope.is_admin or project_id == scope.project_id


def require_admin(scope: CloudScope, what: str) -> None:
    if not scope.is_admin:
        raise Forbidden(
            f"Policy doesn't allow {what} to be performed.",
            kind="forbidden",
        )


def at_least(version: Version, wanted: str) -> bool:
    major, _, minor = wanted.partition(".")
    return version >= (int(major), int(minor))
