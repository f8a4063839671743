"""Stack snapshots (heat-api.md 2.5, N1-N5; objects 3.9).

Create answers 200 with the snapshot itself (not wrapped), in progress; the
stack goes to SNAPSHOT_IN_PROGRESS. Restore converges the stack back to the
snapshot (202). Unknown snapshots are Heat's ``SnapshotNotFound`` (404).
"""

from __future__ import annotations

import falcon

from kiln.api.faults import bad_request
from kiln.api.native import stack_views as views
from kiln.api.native.support import ApiDeps, Endpoint, Route, accepted, authorize, body
from kiln.rpc import messages as m

SNAPSHOTS = "/{tenant_id}/stacks/{stack_name}/{stack_id}/snapshots"
SNAPSHOT = SNAPSHOTS + "/{snapshot_id}"


class SnapshotCollection(Endpoint):
    """N1 (POST) and N2 (GET)."""

    def on_post(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:snapshot")
        name = body(req).get("name")
        if name is not None and not isinstance(name, str):
            raise bad_request("The snapshot name must be a string")
        found = self.deps.call(
            m.CreateSnapshot(
                ctx.rpc(),
                stack_id,
                name,
                max_snapshots=self.deps.settings.max_snapshots_per_stack,
                stack_name=stack_name,
            )
        )
        resp.media = views.snapshot(found)

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:list_snapshots")
        found = self.deps.call(m.ListSnapshots(ctx.rpc(), stack_id, stack_name=stack_name))
        resp.media = {"snapshots": [views.snapshot(s) for s in found.snapshots]}


class SnapshotItem(Endpoint):
    """N3 (GET) and N4 (DELETE)."""

    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        snapshot_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:show_snapshot")
        found = self.deps.call(
            m.SnapshotRef(ctx.rpc(), stack_id, snapshot_id, "show", stack_name=stack_name)
        )
        resp.media = {"snapshot": views.snapshot(found)}

    def on_delete(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        snapshot_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:delete_snapshot")
        self.deps.call(
            m.SnapshotRef(ctx.rpc(), stack_id, snapshot_id, "delete", stack_name=stack_name)
        )
        resp.status = falcon.HTTP_204


class SnapshotRestore(Endpoint):
    """N5: no body needed."""

    def on_post(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        tenant_id: str,
        stack_name: str,
        stack_id: str,
        snapshot_id: str,
    ) -> None:
        ctx = authorize(self.deps, req, "stacks:restore_snapshot")
        self.deps.call(
            m.SnapshotRef(ctx.rpc(), stack_id, snapshot_id, "restore", stack_name=stack_name)
        )
        accepted(resp, req)


def routes(deps: ApiDeps) -> list[Route]:
    return [
        (SNAPSHOTS, SnapshotCollection(deps)),
        (SNAPSHOT, SnapshotItem(deps)),
        (SNAPSHOT + "/restore", SnapshotRestore(deps)),
    ]
