"""How a step ends: completion bookkeeping, failure, cancel, parking, abandoning,
and pausing at a breakpoint hook."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from sqlalchemy import exc as sa_exc

from kiln.cloud.api.errors import CloudError, Conflict, Unavailable
from kiln.db import engine as dbe
from kiln.db import events as evdb
from kiln.db import resources as rdb
from kiln.db import snapshots as sndb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.db import traversals as trdb
from kiln.db.completion import complete_task, fail_task
from kiln.db.errors import NotFound
from kiln.db.events import NewEvent, add_events
from kiln.db.resources import NewResource, ResourceChange
from kiln.db.resources import Resource as Row
from kiln.db.stacks import StackStatus
from kiln.db.tasks import (
    NodeTask,
    hurry_resource_tasks,
    record_progress,
    requeue_task,
    set_result_resource,
    wait_task,
    wake_parked,
)
from kiln.engine.plan import CONVERGE, current_rows
from kiln.engine.resource_context import EngineResourceContext
from kiln.engine.step_base import (  # noqa: F401
    AFTER_OUTCOME,
    BEFORE_OUTCOME,
    HOOK,
    POLLING,
    REQUESTED,
    StepBase,
    _Loaded,
    _reason,
    _with_result,
    next_poll,
)
from kiln.plugin.nested import ChildWait
from kiln.plugin.resource import Resource

log = logging.getLogger(__name__)

#: how often a transient cloud error is retried per action, and the backoff
TRANSIENT_RETRIES = 8
TRANSIENT_BASE_DELAY = 0.5
TRANSIENT_MAX_DELAY = 15.0


def is_transient_for(err: BaseException, action: str) -> bool:
    """Whether a failed cloud call is worth repeating (reference resource-types 0.3, 0.4).

    5xx, timeouts and 429 always; a 409 only while deleting (Heat retries a delete
    that conflicts: a load balancer still pending, a port still bound).
    """
    if isinstance(err, Unavailable) or (isinstance(err, CloudError) and err.http_status == 429):
        return True
    if is_database_outage(err):  # a plugin's own database work (a nested stack's rows)
        return True
    return isinstance(err, Conflict) and action == "DELETE"


def is_database_outage(err: BaseException) -> bool:
    """The database went away (connection cut, server restarting): the pool reconnects."""
    if isinstance(err, sa_exc.DBAPIError) and err.connection_invalidated:
        return True
    return isinstance(err, sa_exc.OperationalError | sa_exc.InterfaceError)


def _child_done(conn: Any, stack_id: str | None, action: str) -> bool:
    """Whether the child stack ``stack_id`` finished ``action`` (or failed, or is gone)."""
    if stack_id is None:
        return False
    try:
        child = sdb.get_stack(conn, stack_id)
    except NotFound:
        return True
    return child.status == "FAILED" or (child.status == "COMPLETE" and child.action == action)


class StepEndings(StepBase):
    """The ways a step ends, shared by converge and cleanup steps."""

    # -- endings ------------------------------------------------------------------------------
    def _after_completion(self, conn: Any, ld: _Loaded, completed: bool) -> None:
        if completed:
            self._stack_completed(conn, ld.traversal, ld.stack)

    def _stack_completed(self, conn: Any, traversal: trdb.Traversal, stack: sdb.Stack) -> None:
        now = self.deps.clock.now()
        action = traversal.action
        if stack.owner_id is not None and stack.parent_resource is not None:
            # the parent resource polls this stack: its next poll is due now
            self._hurry_parent(conn, stack, now)
        if action == "DELETE":
            sdb.soft_delete_stack(conn, stack.id, now=now)
            if stack.owner_id is None and stack.trust_id:
                self.trust_to_give_back = stack.trust_id  # once this step has committed
            if stack.owner_id is None:
                project = sdb.get_stack(conn, stack.id).stack_user_project_id  # fresh
                if project:
                    self.stack_users_to_remove = (stack, project)
        if action == "SNAPSHOT":
            self._fill_snapshots(conn, stack, now)
        add_events(
            conn,
            [
                NewEvent(
                    uuid=self.deps.new_id(),
                    stack_id=stack.id,
                    resource_name=stack.name,
                    resource_type="OS::Heat::Stack",
                    action=action,
                    status="COMPLETE",
                    status_reason=f"Stack {action} completed successfully",
                    physical_resource_id=stack.id,
                )
            ],
            now=now,
        )
        evdb.prune_events(conn, stack.id, keep=self.deps.max_events_per_stack)

    def _hurry_parent(self, conn: Any, stack: sdb.Stack, now: Any) -> None:
        """Make the parent resource's poll of ``stack`` due now, and have the engine's
        claimer look once this step's transaction is committed."""
        assert stack.owner_id is not None and stack.parent_resource is not None
        if hurry_resource_tasks(conn, stack.owner_id, stack.parent_resource, now=now):
            self.wake_after_step = True

    def _fill_snapshots(self, conn: Any, stack: sdb.Stack, now: Any) -> None:
        """The stack's snapshots in progress get their data: template, environment,
        files, and each resource's physical id and private data (what handle_snapshot
        recorded, backup ids for instance)."""
        raw = tdb.get_raw_template(conn, stack.raw_template_id)
        rows = current_rows(rdb.list_resources(conn, stack.id))
        data = {
            "template": raw.template,
            "environment": raw.environment,
            "files": raw.files,
            "resources": {
                name: {
                    "type": row.type,
                    "resource_id": row.physical_id,
                    "resource_data": {
                        k: json.loads(v.value)
                        for k, v in rdb.get_resource_data(conn, row.id).items()
                    },
                }
                for name, row in rows.items()
            },
        }
        for snapshot in sndb.list_snapshots(conn, stack.id):
            if snapshot.status == "IN_PROGRESS":
                sndb.update_snapshot(
                    conn,
                    snapshot.id,
                    now=now,
                    status="COMPLETE",
                    data=data,
                    status_reason="Stack SNAPSHOT completed successfully",
                )

    def _fail(
        self,
        ld: _Loaded,
        row: Row,
        action: str,
        reason: str,
        ctx: EngineResourceContext | None = None,
        also: Callable[[Any], None] | None = None,
    ) -> list[str]:
        """Fail the task and the stack action; ``also`` writes more in the same transaction."""
        now = self.deps.clock.now()
        resource_reason = reason
        stack_reason = f"Resource {action} failed: {reason}"
        change = ResourceChange(action=action, status="FAILED", status_reason=resource_reason)
        if action == "CREATE" and ctx is not None and ctx.physical_id is not None:
            # what exists in the cloud was made with these: the next update compares to them
            change = replace(change, properties=dict(ctx.properties))
        events = [self._event(ld, row, action, "FAILED", resource_reason, ctx)]
        stack_events = [
            NewEvent(
                uuid=self.deps.new_id(),
                stack_id=ld.stack.id,
                resource_name=ld.stack.name,
                resource_type="OS::Heat::Stack",
                action=ld.traversal.action,
                status="FAILED",
                status_reason=stack_reason,
                physical_resource_id=ld.stack.id,
            ),
        ]
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, now)
            if ctx is not None:
                self._write_context(conn, ld, ctx)
            if also is not None:
                also(conn)
            won = fail_task(
                conn,
                ld.task.lease,
                now=now,
                reason=stack_reason,
                resource_id=row.id,
                resource_change=change,
                events=events,
                stack_outcome=StackStatus(ld.traversal.action, "FAILED", stack_reason),
                winner_events=stack_events,
            )
            if ld.finishing:
                wake_parked(conn, stack_id=ld.stack.id, resource_id=row.id, now=now)
            stack = ld.stack
            if won and stack.owner_id is not None and stack.parent_resource is not None:
                self._hurry_parent(conn, stack, now)
        if won:
            self.deps.on_traversal_failed(ld.traversal.id)
        return []

    def _abandon(self, task: NodeTask) -> list[str]:
        """A task of a traversal that is over, not started: finish it without propagating.

        A cancelled traversal is still RUNNING: the first of its tasks to stop
        ends it CANCELLED, and the stack FAILED (before the count-down, which
        would otherwise end it COMPLETE, or never, with successors left BLOCKED).
        """
        now = self.deps.clock.now()
        self._fault(BEFORE_OUTCOME, task)
        with dbe.write(self.deps.db) as conn:
            reason = "Stack cancelled"
            cancelled = trdb.finish_traversal(
                conn, task.traversal_id, state="CANCELLED", now=now, failure_reason=reason
            )
            if cancelled:
                self._stack_cancelled(conn, trdb.get_traversal(conn, task.traversal_id), now)
            complete_task(conn, task.lease, now=now, successors=())
        if cancelled:
            self.deps.on_traversal_failed(task.traversal_id)  # rolls back if asked to
        return []

    def _stack_cancelled(self, conn: Any, traversal: trdb.Traversal, now: Any) -> None:
        action = traversal.action
        reason = f"Stack {action} cancelled"
        if not sdb.update_stack_status(
            conn,
            traversal.stack_id,
            traversal_id=traversal.id,
            outcome=StackStatus(action, "FAILED", reason),
            now=now,
        ):
            return
        if traversal.rollback_on_failure and action in ("CREATE", "UPDATE"):
            # Heat goes from a cancelled update straight to ROLLBACK_IN_PROGRESS; a
            # FAILED stack event first would end heatclient's `stack cancel --wait`.
            return
        stack = sdb.get_stack(conn, traversal.stack_id)
        add_events(
            conn,
            [
                NewEvent(
                    uuid=self.deps.new_id(),
                    stack_id=stack.id,
                    resource_name=stack.name,
                    resource_type="OS::Heat::Stack",
                    action=action,
                    status="FAILED",
                    status_reason=reason,
                    physical_resource_id=stack.id,
                )
            ],
            now=now,
        )

    def _park(self, ld: _Loaded) -> list[str]:
        """Wait for another traversal's task to finish its action on the row.

        That task wakes this one when it lets go of the row; if it died, its
        lease runs out, the sweeper frees it and it finishes; so one lease is
        the longest wait before looking again.
        """
        now = self.deps.clock.now()
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            requeue_task(conn, ld.task.lease, now=now, not_before=now + self.deps.lease)
        return []

    def _row_gone(self, task: NodeTask, traversal: trdb.Traversal, stack: sdb.Stack) -> list[str]:
        """The row was deleted by an older traversal's delete, finished while we waited."""
        if traversal.state != "RUNNING":
            return self._abandon(task)
        now = self.deps.clock.now()
        if task.kind == CONVERGE:
            # The resource is wanted: converge a new row (a create).
            with dbe.read(self.deps.db) as conn:
                compiled = self.compiled_for(conn, stack, traversal.raw_template_id)
            new = NewResource(
                id=self.deps.new_id(),
                stack_id=stack.id,
                root_stack_id=stack.root_id,
                name=task.resource_name,
                type=compiled.definition.resources[task.resource_name].type,
                raw_template_id=traversal.raw_template_id,
            )
            with dbe.write(self.deps.db) as conn:
                current = sdb.current_traversal_for_rows(conn, stack.id) == task.traversal_id
                if current:
                    rdb.create_resource(conn, new, now=now)
                    set_result_resource(conn, task.lease, resource_id=new.id, now=now)
            if not current:  # superseded while we looked (see sdb.lock_stack)
                return self._abandon(task)
            return self._run(_with_result(task, new.id))
        self._fault(BEFORE_OUTCOME, task)
        with dbe.write(self.deps.db) as conn:
            done = complete_task(conn, task.lease, now=now)
            if done.traversal_completed:
                self._stack_completed(conn, traversal, stack)
        return list(done.ready)

    def _record_intent(self, ld: _Loaded, cookie: dict[str, Any]) -> None:
        """Own the row and record phase REQUESTED before an action reaches the cloud."""
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, now)
            record_progress(conn, ld.task.lease, now=now, phase=REQUESTED, cookie=cookie)
        # a transient retry requeues with the task's cookie: it must be this intent
        ld.task = replace(ld.task, phase=REQUESTED, cookie=cookie)

    # -- hooks -----------------------------------------------------------------------------------
    _HOOK_ACTIONS = {
        "pre-create": "CREATE",
        "pre-update": "UPDATE",
        "pre-delete": "DELETE",
        "post-create": "CREATE",
        "post-update": "UPDATE",
        "post-delete": "DELETE",
    }

    def _hook_pending(self, ld: _Loaded, hook: str, cleared: str | None) -> bool:
        """Whether ``hook`` is set on the resource for this stack action and not cleared."""
        if hook == cleared or ld.traversal.action != self._HOOK_ACTIONS.get(hook):
            return False
        registry = ld.compiled.definition.environment.registry
        return hook in registry.hooks_for(ld.task.resource_name)

    def _pause_for_hook(self, ld: _Loaded, hook: str, action: str) -> list[str]:
        """Wait until the hook is cleared (a signal with ``unset_hook``)."""
        now = self.deps.clock.now()
        reason = f"{action} paused until Hook {hook} is cleared"
        with dbe.write(self.deps.db) as conn:
            add_events(
                conn, [self._event(ld, ld.row, action, "IN_PROGRESS", reason, None)], now=now
            )
            wait_task(
                conn,
                ld.task.lease,
                now=now,
                state="WAITING_HOOK",
                phase=HOOK,
                cookie={"hook": hook},
            )
        return []

    def _retry_transient(
        self,
        ld: _Loaded,
        ctx: EngineResourceContext | None,
        action: str,
        err: BaseException,
        *,
        data_of: _Loaded | None = None,
    ) -> list[str] | None:
        """A cloud error worth repeating (5xx, timeout; 409 while deleting): run the same
        step again after a backoff, from the phase and cookie it has stored. None once
        :data:`TRANSIENT_RETRIES` retries of the action are used up (the step fails).
        ``data_of``: the row ``ctx`` belongs to when it is not the task's (a replaced row)."""
        if not is_transient_for(err, action):
            return None
        cookie = dict(ld.task.cookie or {})
        retries = int(cookie.get("transient_retries", 0)) + 1
        if retries > TRANSIENT_RETRIES:
            return None
        cookie["transient_retries"] = retries
        delay = min(TRANSIENT_MAX_DELAY, TRANSIENT_BASE_DELAY * (2 ** (retries - 1)))
        log.info("%s: %s failed (%s); retry %d in %.1f s", ld.row.name, action, err, retries, delay)
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            if ctx is not None:
                owner = data_of or ld
                owner.own(conn, now)
                self._write_context(conn, owner, ctx)
            requeue_task(
                conn,
                ld.task.lease,
                now=now,
                not_before=now + timedelta(seconds=delay),
                cookie=cookie,
            )
        return []

    def _polled(
        self, check: Callable[[Any], bool], cookie: dict[str, Any], action: str
    ) -> tuple[bool, dict[str, Any]]:
        """Poll the action; a transient cloud error counts as "not done yet" (the poll is
        repeated after the usual delay) until :data:`TRANSIENT_RETRIES` are used up."""
        try:
            return bool(check(cookie.get("plugin"))), cookie
        except Exception as err:
            retries = int(cookie.get("transient_retries", 0)) + 1
            if not is_transient_for(err, action) or retries > TRANSIENT_RETRIES:
                raise
            log.info("%s poll failed (%s); retry %d", action, err, retries)
            return False, {**cookie, "transient_retries": retries}

    def _requeue_poll(
        self,
        ld: _Loaded,
        plugin: Resource,
        ctx: EngineResourceContext,
        action: str,
        cookie: dict[str, Any],
        *,
        first: bool,
    ) -> list[str]:
        """The action is not done: record progress and come back when the next poll is due."""
        hint = plugin.poll_after(cookie.get("plugin"))
        cookie, delay = next_poll(cookie, hint)
        now = self.deps.clock.now()
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, now)
            self._write_context(conn, ld, ctx)
            if first:
                add_events(
                    conn,
                    [self._event(ld, ld.row, action, "IN_PROGRESS", "state changed", ctx)],
                    now=now,
                )
            if isinstance(hint, ChildWait) and _child_done(conn, ctx.physical_id, action):
                # The child finished after this step looked: its completion found no
                # waiting task to hurry (this one was running), so look again now.
                delay = 0.0
            requeue_task(
                conn,
                ld.task.lease,
                now=now,
                not_before=now + timedelta(seconds=delay),
                phase=POLLING,
                cookie=cookie,
            )
        return []
