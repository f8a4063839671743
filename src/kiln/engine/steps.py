"""Running one step of one claimed task, and writing its outcome.

A step reads what it needs (traversal, resource row, predecessor rows), makes
the pure decision, calls at most one plugin hook pair (``handle_*`` once,
``check_*_complete`` once) and writes the outcome in one fenced transaction:
requeued with a poll cookie, completed (propagating to successors), or failed.
The plugin never waits: between polls the task is back in the queue and any
engine may take it. Phases recorded in ``node_task.phase``:

- None: nothing started; the step decides what to do.
- ``REQUESTED``: an action is about to reach the cloud: an update, a delete,
  or a create of a plugin that can look its object up. The row is owned and
  the cookie holds the resolved properties. A resumed create first asks
  ``find_existing``; a resumed update or delete is sent again.
- ``POLLING``: the action was started; ``cookie`` holds what the plugin needs
  and the properties the action was started with (a resumed step uses them).
- ``PREPARING`` / ``RESTORING``: a replacement's hooks on the old row
  (``prepare_for_replace``, ``restore_prev_rsrc``): see ``step_replace.py``.

A step of a traversal that is over (superseded or failed) abandons its task
if it had not started; if its action is in flight it finishes the action
without propagating, then lets go of the row and wakes the newer traversal's
task for it, which waits meanwhile (parked READY, a lease later at most), so
it decides from the row's true state (Heat's re-trigger, made durable).

Fault points: ``EngineDeps.fault_point`` (None in production, so it costs one
attribute test) is called with a point name and the task at each step
boundary: ``start`` (claimed, nothing read), ``before_handle`` and
``after_handle`` (around a plugin's ``handle_*`` call), ``before_outcome``
(just before the transaction that writes the step's outcome) and
``after_outcome`` (that transaction committed). The scenario harness raises a
``BaseException`` there to kill an engine mid-step (kiln.testing.scenario).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from kiln.cloud.api.scope import calling_for
from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db.completion import complete_task
from kiln.db.errors import FencedOut
from kiln.db.events import NewEvent, add_events
from kiln.db.resources import Resource as Row
from kiln.db.resources import ResourceChange
from kiln.db.tasks import (
    NodeTask,
    requeue_task,
    wait_task,
    wake_parked,
)
from kiln.engine.compiled import RowState
from kiln.engine.nested import TEMPLATE_KEY, TemplateResource
from kiln.engine.plan import ACTION, CONVERGE
from kiln.engine.resource_context import EngineResourceContext
from kiln.engine.stack_users import delete_stack_user_project
from kiln.engine.step_base import (
    AFTER_HANDLE,
    AFTER_OUTCOME,
    BEFORE_HANDLE,
    BEFORE_OUTCOME,
    FAULT_POINTS,
    HOOK,
    HOOK_AFTER,
    REQUESTED,
    START,
    EngineDeps,
    LeaseTooShort,
    ResourceBusy,
    _can_find_existing,
    _intent,
    _Loaded,
    _overrides,
    _reason,
    _RowGone,
    poll_delay,
)
from kiln.engine.step_replace import PREPARING, RESTORING, ReplacementSteps
from kiln.plugin.decisions import StoredResource, UpdateDecision, decide_resource_update
from kiln.plugin.resource import Resource, UpdateReplace
from kiln.template.functions.base import resolve_top

log = logging.getLogger(__name__)

__all__ = [
    "FAULT_POINTS",
    "EngineDeps",
    "ResourceBusy",
    "StepRunner",
    "poll_delay",
]


class StepRunner(ReplacementSteps):
    """Runs one step of a claimed task: converge or clean up one resource."""

    # -- entry ------------------------------------------------------------------------
    def run(self, task: NodeTask) -> list[str]:
        """Run one step; returns the node keys that became ready (to wake engines)."""
        self._fault(START, task)
        self.wake_after_step = False
        self.trust_to_give_back = None
        self.stack_users_to_remove = None
        try:
            with calling_for(f"{task.stack_id}/{task.resource_name}"):
                ready = self._run(task)
        except FencedOut:
            log.info(
                "task %s/%s was taken over; dropping this step", task.traversal_id, task.node_key
            )
            return []
        except LeaseTooShort:
            # Give the task back at once: the next claim comes with a fresh lease.
            now = self.deps.clock.now()
            with dbe.write(self.deps.db) as conn:
                requeue_task(conn, task.lease, now=now, not_before=now)
            return []
        except ResourceBusy:
            now = self.deps.clock.now()
            with dbe.write(self.deps.db) as conn:
                requeue_task(conn, task.lease, now=now, not_before=now + timedelta(seconds=0.5))
            return []
        self._fault(AFTER_OUTCOME, task)
        if self.wake_after_step:  # a parent's wait was cut short: claim it now
            self.deps.wake()
        if self.stack_users_to_remove is not None:
            self.remove_stack_users(*self.stack_users_to_remove)
        if self.trust_to_give_back is not None:
            self.give_back_trust(self.trust_to_give_back)
        return ready

    def remove_stack_users(self, stack: Any, project_id: str) -> None:
        """Delete a deleted stack tree's stack-domain project; failures are only logged."""
        cloud = self.deps.scoped_cloud(stack)
        try:
            if cloud is not None:
                delete_stack_user_project(cloud.client("identity"), project_id)
        except Exception:  # the stack is gone either way; an empty project is harmless
            log.warning("could not delete stack user project %s", project_id, exc_info=True)

    def give_back_trust(self, trust_id: str) -> None:
        """Delete a stack's trust (the stack is gone); failures are only logged."""
        delete_trust = getattr(self.deps.cloud, "delete_trust", None)
        if delete_trust is None:
            return
        try:
            delete_trust(trust_id)
        except Exception:  # the stack is gone either way; an orphan trust only expires
            log.warning("could not delete trust %s", trust_id, exc_info=True)

    def _run(self, task: NodeTask) -> list[str]:
        try:
            loaded = self._load(task)
        except _RowGone as gone:
            return self._row_gone(task, gone.traversal, gone.stack)
        if loaded is None:
            return self._abandon(task)
        if loaded.blocked:
            return self._park(loaded)
        if task.kind == CONVERGE:
            return self._converge(loaded)
        if task.kind == ACTION:
            return self._act(loaded)
        return self._cleanup(loaded)

    # -- suspend, resume, check ----------------------------------------------------------------
    def _act(self, ld: _Loaded) -> list[str]:
        """Run the traversal's action (SUSPEND, RESUME, CHECK) on one resource."""
        row, action = ld.row, ld.traversal.action
        if row.action == "INIT":  # never created: nothing to act on
            return self._complete(ld, row, None, None, requires_only=True)
        plugin_cls = self._plugin_for(ld.compiled, row.name, row.type)
        if plugin_cls is None:
            return self._fail(
                ld, row, action, f"The Resource Type ({row.type}) could not be found."
            )
        props = self._stored_properties(plugin_cls, row)
        ctx = self._context(ld, row, plugin_cls, action, props, row.metadata)
        plugin = plugin_cls(ctx)
        try:
            if ld.task.phase is None:
                return self._begin(ld, plugin, ctx, action, props, {"action": action})
            return self._poll(ld, plugin, ctx, action, ld.task.cookie or {}, first=False)
        except Exception as err:
            retry = self._retry_transient(ld, ctx, action, err)
            if retry is not None:
                return retry
            return self._fail(ld, row, action, _reason(err, row.name), ctx)

    # -- converge ---------------------------------------------------------------------------
    def _converge(self, ld: _Loaded) -> list[str]:
        if ld.task.phase == HOOK_AFTER:  # the action finished before its post-* hook
            ld.owned = False
            return self._complete(ld, ld.row, None, None, requires_only=True)
        name = ld.task.resource_name
        definition = ld.compiled.definition.resources[name]
        plugin_cls = self._plugin_for(ld.compiled, name, definition.type)
        if plugin_cls is None:
            return self._fail(
                ld, ld.row, "CREATE", f"The Resource Type ({definition.type}) could not be found."
            )
        cookie = ld.task.cookie or {}
        cleared = cookie.get("hook") if ld.task.phase == HOOK else None
        if ld.task.phase is not None and "properties" in cookie:
            # An action in flight goes on with what it started with, even if
            # predecessors changed since (a newer traversal will update it).
            props, metadata = dict(cookie["properties"]), cookie.get("metadata")
        else:
            try:
                preds = self._predecessors(ld, definition.requires)
                state = RowState(ld.compiled.definition, preds)
                props_raw = resolve_top(definition.properties, state) or {}
                metadata = resolve_top(definition.metadata, state)
                props = self._typed(plugin_cls, props_raw)
                if plugin_cls is TemplateResource:
                    # A changed provider template must update the nested stack too.
                    props[TEMPLATE_KEY] = self.provider_spec(ld, name, props).identity()
                elif plugin_cls.owns_child_stack:
                    props[TEMPLATE_KEY] = self._environment_identity(ld)
            except KilnError as err:
                action = "CREATE" if ld.row.action == "INIT" else "UPDATE"
                return self._fail(ld, ld.row, action, err.full_message)
        if ld.task.phase in (None, HOOK):
            return self._start_converge(ld, plugin_cls, props, metadata, cleared_hook=cleared)
        if ld.task.phase == PREPARING:
            return self._prepare_old(ld, plugin_cls, props, metadata, cookie)
        if ld.task.phase == RESTORING:
            return self._restore_old(ld, plugin_cls, props, metadata, cookie)
        action = cookie.get("action", "CREATE")
        row = ld.row
        ctx = self._context(ld, row, plugin_cls, action, props, metadata)
        plugin = plugin_cls(ctx)
        try:
            if ld.task.phase == REQUESTED:
                # The action may or may not have reached the cloud before a crash.
                if action == "CREATE":
                    found = plugin.find_existing()
                    if found is not None:
                        ctx.set_physical_id(found)
                        return self._poll(ld, plugin, ctx, action, cookie, first=True)
                return self._begin(ld, plugin, ctx, action, props, cookie)
            return self._poll(ld, plugin, ctx, action, cookie, first=False)
        except UpdateReplace:
            return self._start_replacement(ld, plugin_cls, props, metadata)
        except Exception as err:
            retry = self._retry_transient(ld, ctx, action, err)
            if retry is not None:
                return retry
            return self._fail(ld, row, action, _reason(err, row.name), ctx)

    def _start_converge(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        cleared_hook: str | None = None,
    ) -> list[str]:
        row = ld.row
        owner = row.owner_traversal_id
        if row.action == "INIT" and ld.traversal.action == "ADOPT" and row.physical_id:
            # Abandon data named the physical resource: take it over, do not create.
            return self._adopt_external(ld, plugin_cls, props, metadata, row.physical_id)
        went_back = self._go_back(ld, plugin_cls, props, metadata)
        if went_back is not None:  # a rollback to the row this one replaces
            return went_back
        if row.action == "INIT" and (
            row.physical_id is not None or owner not in (None, ld.task.traversal_id)
        ):
            # A create another traversal started and never finished (cancelled):
            # what it made is unknown, so start afresh; the row's cleanup removes it.
            return self._start_replacement(ld, plugin_cls, props, metadata)
        definition = ld.compiled.definition.resources[row.name]
        if row.action == "INIT" or (row.action == "DELETE" and row.status == "COMPLETE"):
            action = "CREATE"
            if self._hook_pending(ld, "pre-create", cleared_hook):
                return self._pause_for_hook(ld, "pre-create", "CREATE")
            if definition.external_id is not None:
                return self._adopt_external(ld, plugin_cls, props, metadata, definition.external_id)
        else:
            if self._implementation_changed(ld, row, plugin_cls):
                # The type now resolves to another implementation (registry change).
                return self._start_replacement(ld, plugin_cls, props, metadata)
            ctx = self._context(ld, row, plugin_cls, "UPDATE", row.properties, row.metadata)
            registry = ld.compiled.definition.environment.registry
            # The engine's own identity key is not a property: a change of it
            # (environment, files, provider template) means an update in place.
            stored_props = {k: v for k, v in row.properties.items() if k != TEMPLATE_KEY}
            new_props = {k: v for k, v in props.items() if k != TEMPLATE_KEY}
            try:
                decision = decide_resource_update(
                    plugin_cls(ctx),
                    StoredResource(row.action, row.status, stored_props, row.metadata or None),
                    new_props,
                    metadata,
                    restricted=registry.restricted_actions_for(row.name),
                )
                if decision.kind == "unchanged" and row.properties.get(TEMPLATE_KEY) != props.get(
                    TEMPLATE_KEY
                ):
                    decision = UpdateDecision("update", {TEMPLATE_KEY: props.get(TEMPLATE_KEY)})
            except KilnError as err:  # restricted_actions forbids what the update needs
                return self._fail(ld, row, "UPDATE", _reason(err, row.name))
            if decision.kind == "unchanged":
                return self._complete(ld, row, None, None, requires_only=True)
            if self._hook_pending(ld, "pre-update", cleared_hook):
                return self._pause_for_hook(ld, "pre-update", "UPDATE")
            if decision.kind == "replace":
                return self._start_replacement(ld, plugin_cls, props, metadata)
            action = "UPDATE"
        ctx = self._context(ld, row, plugin_cls, action, props, metadata)
        plugin = plugin_cls(ctx)
        cookie = _intent(action, props, metadata)
        try:
            if _overrides(plugin_cls, f"handle_{action.lower()}") and (
                action == "UPDATE" or _can_find_existing(plugin_cls)
            ):
                self._record_intent(ld, cookie)
            return self._begin(ld, plugin, ctx, action, props, cookie)
        except UpdateReplace:
            return self._start_replacement(ld, plugin_cls, props, metadata)
        except Exception as err:
            retry = self._retry_transient(ld, ctx, action, err)
            if retry is not None:
                return retry
            return self._fail(ld, row, action, _reason(err, row.name), ctx)

    def _implementation_changed(self, ld: _Loaded, row: Row, plugin_cls: type[Resource]) -> bool:
        if row.raw_template_id == ld.traversal.raw_template_id:
            return False
        with dbe.read(self.deps.db) as conn:
            before = self.compiled_for(conn, ld.stack, row.raw_template_id)
        if row.name not in before.definition.resources:
            return False
        return self._plugin_for(before, row.name, row.type) is not plugin_cls

    def _adopt_external(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        external_id: str,
    ) -> list[str]:
        """``external_id``: take the existing physical resource over and check it exists."""
        row = ld.row
        ctx = self._context(ld, row, plugin_cls, "CREATE", props, metadata)
        ctx.set_physical_id(external_id)
        plugin = plugin_cls(ctx)
        try:
            plugin.check_check_complete(plugin.handle_check())
        except Exception:
            return self._fail(
                ld,
                row,
                "CREATE",
                f"Invalid external resource: Resource {external_id} ({row.type}) can not be found.",
            )
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, self.deps.clock.now())
            self._write_context(conn, ld, ctx)
        ld.owned = True
        return self._complete(ld, row, plugin, ctx, action="CREATE", started=True)

    def _begin(
        self,
        ld: _Loaded,
        plugin: Resource,
        ctx: EngineResourceContext,
        action: str,
        props: Mapping[str, Any],
        cookie: dict[str, Any],
    ) -> list[str]:
        if action == "UPDATE":
            changed = {k: v for k, v in props.items() if ld.row.properties.get(k) != v}
            changed.update({k: None for k in ld.row.properties if k not in props})
            self._check_lease(ld.task)
            self._fault(BEFORE_HANDLE, ld.task)
            plugin_cookie = plugin.handle_update(props, changed)
        else:
            self._check_lease(ld.task)
            self._fault(BEFORE_HANDLE, ld.task)
            plugin_cookie = getattr(plugin, f"handle_{action.lower()}")()
        self._fault(AFTER_HANDLE, ld.task)
        cookie = {**cookie, **_intent(action, props, ctx.metadata), "plugin": plugin_cookie}
        cookie["polls"] = 0
        return self._poll(ld, plugin, ctx, action, cookie, first=True)

    def _poll(
        self,
        ld: _Loaded,
        plugin: Resource,
        ctx: EngineResourceContext,
        action: str,
        cookie: dict[str, Any],
        *,
        first: bool,
    ) -> list[str]:
        check = getattr(plugin, f"check_{action.lower()}_complete")
        done, cookie = self._polled(check, cookie, action)
        if done:
            return self._complete(ld, ld.row, plugin, ctx, action=action, started=first)
        return self._requeue_poll(ld, plugin, ctx, action, cookie, first=first)

    def _complete(
        self,
        ld: _Loaded,
        row: Row,
        plugin: Resource | None,
        ctx: EngineResourceContext | None,
        *,
        action: str = "",
        started: bool = False,
        requires_only: bool = False,
    ) -> list[str]:
        definition = ld.compiled.definition.resources[row.name]
        requires = self._required_rows(ld, definition.requires)
        now = self.deps.clock.now()
        events: list[NewEvent] = []
        if requires_only:
            change = ResourceChange(requires=requires, raw_template_id=ld.traversal.raw_template_id)
        else:
            assert plugin is not None and ctx is not None
            change = ResourceChange(
                action=action,
                status="COMPLETE",
                status_reason="state changed",
                physical_id=ctx.physical_id,
                raw_template_id=ld.traversal.raw_template_id,
                requires=requires,
                properties=dict(ctx.properties),
                metadata=ctx.metadata if isinstance(ctx.metadata, dict) else {},
                reference_id=plugin.reference_id(),
                attributes=self._attributes(ld.compiled, plugin, row.name),
            )
            if started:
                events.append(self._event(ld, row, action, "IN_PROGRESS", "state changed", ctx))
            events.append(self._event(ld, row, action, "COMPLETE", "state changed", ctx))
        post_hook = f"post-{action.lower()}"
        if not requires_only and self._hook_pending(ld, post_hook, None):
            return self._pause_after(ld, row, ctx, change, events, post_hook, action)
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            if ctx is not None:
                self._write_context(conn, ld, ctx, physical=False)
            replaces = row.replaces if not requires_only else None
            if replaces is not None and action == "CREATE":
                rdb.mark_replaced(conn, replaces, row.id, now=now)
            done = complete_task(
                conn,
                ld.task.lease,
                now=now,
                resource_id=row.id,
                resource_change=change,
                events=events,
                result_resource_id=row.id,
                successors=self._successors(conn, ld),
                resource_version=None if ld.owned else row.version,
            )
            if ld.finishing:
                wake_parked(conn, stack_id=ld.stack.id, resource_id=row.id, now=now)
            self._after_completion(conn, ld, done.traversal_completed)
        return list(done.ready)

    def _pause_after(
        self,
        ld: _Loaded,
        row: Row,
        ctx: EngineResourceContext | None,
        change: ResourceChange,
        events: list[NewEvent],
        hook: str,
        action: str,
    ) -> list[str]:
        """A post-* hook: record the finished action, then wait before propagating."""
        now = self.deps.clock.now()
        reason = f"{action} paused until Hook {hook} is cleared"
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, now)
            if ctx is not None:
                self._write_context(conn, ld, ctx, physical=False)
            rdb.write_owned_resource(
                conn,
                row.id,
                change,
                traversal_id=ld.task.traversal_id,
                epoch=ld.task.lease_epoch,
                now=now,
                release=True,
            )
            if row.replaces is not None and action == "CREATE":
                rdb.mark_replaced(conn, row.replaces, row.id, now=now)
            add_events(
                conn, [*events, self._event(ld, row, action, "COMPLETE", reason, ctx)], now=now
            )
            wait_task(
                conn,
                ld.task.lease,
                now=now,
                state="WAITING_HOOK",
                phase=HOOK_AFTER,
                cookie={"hook": hook},
            )
        return []
