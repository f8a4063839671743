"""Cleanup steps: deleting a stored row the new template does not keep.

A row kept by the template (and not replaced) is a no-op; a row never created
is just forgotten; otherwise the plugin deletes the physical resource (unless
the deletion policy retains it), polled like every other action.
"""

from __future__ import annotations

import logging

from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db.completion import complete_task
from kiln.db.events import NewEvent, add_events
from kiln.db.resources import Resource as Row
from kiln.db.resources import ResourceChange
from kiln.db.tasks import (
    NodeTask,
    wait_task,
    wake_parked,
)
from kiln.engine.plan import converge_key
from kiln.engine.resource_context import EngineResourceContext
from kiln.engine.step_base import (
    AFTER_HANDLE,
    BEFORE_HANDLE,
    BEFORE_OUTCOME,
    HOOK,
    HOOK_AFTER,
    REQUESTED,
    _can_find_existing,
    _Loaded,
    _overrides,
    _reason,
)
from kiln.engine.step_endings import StepEndings

log = logging.getLogger(__name__)


def _with_phase(task: NodeTask, phase: str | None) -> NodeTask:
    from dataclasses import replace

    return replace(task, phase=phase)


class CleanupSteps(StepEndings):
    """CLEANUP nodes of a traversal."""

    # -- cleanup ----------------------------------------------------------------------------
    def _cleanup(self, ld: _Loaded) -> list[str]:
        row = ld.row
        current = self._is_current(ld, row)
        never_created = (
            row.action == "INIT" and row.physical_id is None and row.owner_traversal_id is None
        )
        if current or never_created or (row.action == "DELETE" and row.status == "COMPLETE"):
            return self._finish_cleanup(ld, row, delete_row=not current, event=False)
        definition = ld.compiled.definition.resources.get(row.name)
        policy = definition.deletion_policy if definition is not None else "Delete"
        if definition is not None and definition.external_id is not None:
            policy = "Retain"  # an adopted external resource is never deleted by the stack
        if policy == "Retain" and ld.traversal.action in ("DELETE", "UPDATE", "ROLLBACK"):
            return self._finish_cleanup(ld, row, delete_row=True, event=True)
        plugin_cls = self._plugin_for(ld.compiled, row.name, row.type)
        if plugin_cls is None:
            return self._fail(
                ld, row, "DELETE", f"The Resource Type ({row.type}) could not be found."
            )
        ctx = self._context(
            ld, row, plugin_cls, "DELETE", self._stored_properties(plugin_cls, row), row.metadata
        )
        plugin = plugin_cls(ctx)
        cookie = ld.task.cookie or {}
        cleared = cookie.get("hook") if ld.task.phase == HOOK else None
        if ld.task.phase in (None, HOOK) and self._hook_pending(ld, "pre-delete", cleared):
            return self._pause_for_hook(ld, "pre-delete", "DELETE")
        if ld.task.phase == HOOK:
            ld.task = _with_phase(ld.task, None)
        try:
            if ld.task.phase in (None, REQUESTED):
                if ctx.physical_id is None and _can_find_existing(plugin_cls):
                    # A create may have reached the cloud without its id recorded.
                    found = plugin.find_existing()
                    if found is not None:
                        ctx.set_physical_id(found)
                snapshot = policy == "Snapshot" and plugin_cls.supports_snapshot
                if ld.task.phase is None and (snapshot or _overrides(plugin_cls, "handle_delete")):
                    self._record_intent(ld, {"action": "DELETE"})
                self._check_lease(ld.task)
                self._fault(BEFORE_HANDLE, ld.task)
                started = plugin.handle_snapshot_delete() if snapshot else plugin.handle_delete()
                cookie = {"action": "DELETE", "plugin": started, "polls": 0}
                if snapshot:
                    cookie["snapshot"] = True
                self._fault(AFTER_HANDLE, ld.task)
                first = True
            else:
                first = False
            check = (
                plugin.check_snapshot_delete_complete
                if cookie.get("snapshot")
                else plugin.check_delete_complete
            )
            done, cookie = self._polled(check, cookie, "DELETE")
            if done:
                return self._finish_cleanup(
                    ld, row, delete_row=True, event=True, ctx=ctx, started=first
                )
            return self._requeue_poll(ld, plugin, ctx, "DELETE", cookie, first=first)
        except Exception as err:
            retry = self._retry_transient(ld, ctx, "DELETE", err)
            if retry is not None:
                return retry
            return self._fail(ld, row, "DELETE", _reason(err, row.name), ctx)

    def _is_current(self, ld: _Loaded, row: Row) -> bool:
        """A row the new template keeps (cleanup of it is a no-op)."""
        if ld.traversal.action == "DELETE" or row.replaced_by is not None:
            return False
        return self._kept(ld, row)

    def _kept(self, ld: _Loaded, row: Row) -> bool:
        """Whether this traversal's converge of the name ended on this very row.

        Not merely "the name is in the template": an older row of the name that
        an unfinished replacement left unreplaced must go too.
        """
        key = converge_key(row.name)
        with dbe.read(self.deps.db) as conn:
            kept = rdb.resources_of_tasks(conn, ld.task.traversal_id, [key]).get(key)
        return kept is not None and kept.id == row.id

    def _finish_cleanup(
        self,
        ld: _Loaded,
        row: Row,
        *,
        delete_row: bool,
        event: bool,
        ctx: EngineResourceContext | None = None,
        started: bool = False,
    ) -> list[str]:
        now = self.deps.clock.now()
        events = []
        if event:
            if started:
                events.append(self._event(ld, row, "DELETE", "IN_PROGRESS", "state changed", ctx))
            events.append(self._event(ld, row, "DELETE", "COMPLETE", "state changed", ctx))
            if delete_row and self._hook_pending(ld, "post-delete", None):
                return self._pause_after_delete(ld, row, ctx, events)
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            done = complete_task(
                conn, ld.task.lease, now=now, events=events, successors=self._successors(conn, ld)
            )
            if delete_row:
                rdb.delete_resource(conn, row.id)
            if ld.finishing:
                wake_parked(conn, stack_id=ld.stack.id, resource_id=row.id, now=now)
            self._after_completion(conn, ld, done.traversal_completed)
        return list(done.ready)

    def _pause_after_delete(
        self,
        ld: _Loaded,
        row: Row,
        ctx: EngineResourceContext | None,
        events: list[NewEvent],
    ) -> list[str]:
        """post-delete: the row is recorded DELETE_COMPLETE; dependents wait for the signal.

        When woken, the cleanup of a DELETE_COMPLETE row just forgets it.
        """
        now = self.deps.clock.now()
        reason = "DELETE paused until Hook post-delete is cleared"
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, now)
            rdb.write_owned_resource(
                conn,
                row.id,
                ResourceChange(action="DELETE", status="COMPLETE", status_reason=reason),
                traversal_id=ld.task.traversal_id,
                epoch=ld.task.lease_epoch,
                now=now,
                release=True,
            )
            add_events(
                conn, [*events, self._event(ld, row, "DELETE", "COMPLETE", reason, ctx)], now=now
            )
            wait_task(
                conn,
                ld.task.lease,
                now=now,
                state="WAITING_HOOK",
                phase=HOOK_AFTER,
                cookie={"hook": "post-delete"},
            )
        return []
