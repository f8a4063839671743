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

import json
import logging
import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.engine import Engine

from kiln.core.clock import Clock
from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.db import traversals as trdb
from kiln.db.completion import complete_task, fail_task
from kiln.db.errors import FencedOut
from kiln.db.events import NewEvent, add_events
from kiln.db.resources import NewResource, ResourceChange
from kiln.db.resources import Resource as Row
from kiln.db.stacks import StackStatus
from kiln.db.tasks import (
    NodeTask,
    record_progress,
    requeue_task,
    resource_in_flight,
    set_result_resource,
    wake_parked,
)
from kiln.engine.compiled import ALL_ATTRIBUTES, CompiledCache, CompiledStack, RowState
from kiln.engine.plan import CONVERGE, converge_key
from kiln.engine.resource_context import EngineResourceContext
from kiln.plugin.decisions import StoredResource, decide_resource_update
from kiln.plugin.registry import PluginRegistry
from kiln.plugin.resource import Resource, UpdateReplace
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import coerce_properties
from kiln.template.functions.base import resolve_top
from kiln.template.stack import StackIdentity

log = logging.getLogger(__name__)

REQUESTED = "REQUESTED"
POLLING = "POLLING"

START = "start"
BEFORE_HANDLE = "before_handle"
AFTER_HANDLE = "after_handle"
BEFORE_OUTCOME = "before_outcome"
AFTER_OUTCOME = "after_outcome"
FAULT_POINTS = (START, BEFORE_HANDLE, AFTER_HANDLE, BEFORE_OUTCOME, AFTER_OUTCOME)


@dataclass
class EngineDeps:
    """What every step needs, wired once by the composition root."""

    db: Engine
    registry: PluginRegistry
    custom: CustomConstraints
    clock: Clock
    engine_id: str
    lease: timedelta = timedelta(seconds=15)
    clients: Mapping[str, Any] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.SystemRandom)
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    #: called after a traversal failed (the service starts a rollback if asked to)
    on_traversal_failed: Callable[[str], None] = field(default=lambda _tid: None)
    cache: CompiledCache | None = None
    #: test hook called at each named step boundary (FAULT_POINTS); None in production
    fault_point: Callable[[str, NodeTask], None] | None = None

    def compiled_cache(self) -> CompiledCache:
        if self.cache is None:
            self.cache = CompiledCache(self.registry, self.custom)
        return self.cache


def poll_delay(polls: int) -> float:
    """Seconds before the next poll: quick at first, then backing off to 2 s."""
    return float(min(0.1 * (1.5**polls), 2.0))


class ResourceBusy(Exception):
    """The resource row is being changed by another task right now."""


@dataclass
class _Loaded:
    task: NodeTask
    traversal: trdb.Traversal
    stack: sdb.Stack
    compiled: CompiledStack
    row: Row
    owned: bool = False
    preds: dict[str, Row] | None = None
    #: the traversal is over: finish the action in flight, do not propagate
    finishing: bool = False
    #: another traversal's task has an action in flight on the row
    blocked: bool = False

    def own(self, conn: Any, now: Any) -> None:
        """Take ownership of the row for this step's writes (CAS on its version)."""
        if self.owned:
            return
        if not rdb.claim_resource(
            conn,
            self.row.id,
            traversal_id=self.task.traversal_id,
            epoch=self.task.lease_epoch,
            expected_version=self.row.version,
            now=now,
        ):
            raise ResourceBusy(self.row.id)
        self.owned = True


class _RowGone(Exception):
    """The task's row was deleted (by an older traversal that finished deleting it)."""

    def __init__(self, traversal: trdb.Traversal, stack: sdb.Stack) -> None:
        super().__init__(traversal.id)
        self.traversal = traversal
        self.stack = stack


class StepRunner:
    """Runs one step of a claimed task."""

    def __init__(self, deps: EngineDeps) -> None:
        self.deps = deps
        self._templates: dict[str, tdb.RawTemplate] = {}
        self._stacks: dict[str, sdb.Stack] = {}  # identity only: name, project, root
        self._edges: dict[str, dict[str, list[str]]] = {}  # traversal -> node -> successors

    # -- entry ------------------------------------------------------------------------
    def run(self, task: NodeTask) -> list[str]:
        """Run one step; returns the node keys that became ready (to wake engines)."""
        self._fault(START, task)
        try:
            ready = self._run(task)
        except FencedOut:
            log.info(
                "task %s/%s was taken over; dropping this step", task.traversal_id, task.node_key
            )
            return []
        except ResourceBusy:
            now = self.deps.clock.now()
            with dbe.write(self.deps.db) as conn:
                requeue_task(conn, task.lease, now=now, not_before=now + timedelta(seconds=0.5))
            return []
        self._fault(AFTER_OUTCOME, task)
        return ready

    def _fault(self, point: str, task: NodeTask) -> None:
        if self.deps.fault_point is not None:
            self.deps.fault_point(point, task)

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
        return self._cleanup(loaded)

    # -- loading ------------------------------------------------------------------------
    def _raw_template(self, conn: Any, template_id: str) -> tdb.RawTemplate:
        found = self._templates.get(template_id)
        if found is None:
            found = tdb.get_raw_template(conn, template_id)
            self._templates[template_id] = found
        return found

    def compiled_for(self, conn: Any, stack: sdb.Stack, template_id: str) -> CompiledStack:
        raw = self._raw_template(conn, template_id)
        identity = StackIdentity(name=stack.name, id=stack.id, project_id=stack.project_id)
        return self.deps.compiled_cache().get(
            template_id, raw.template, raw.environment, raw.files, identity
        )

    def _load(self, task: NodeTask) -> _Loaded | None:
        """What the step needs; None when the traversal is over and the task had not started."""
        with dbe.read(self.deps.db) as conn:
            traversal = trdb.get_traversal(conn, task.traversal_id)
            if traversal.cancel_requested or (traversal.state != "RUNNING" and task.phase is None):
                return None
            stack = self._stacks.get(task.stack_id)
            if stack is None:
                stack = self._stacks.setdefault(task.stack_id, sdb.get_stack(conn, task.stack_id))
            assert task.resource_id is not None
            row_id = task.result_resource_id or task.resource_id
            row = rdb.get_resources(conn, [row_id]).get(row_id)
            if row is None:
                raise _RowGone(traversal, stack)
            template_id = traversal.raw_template_id
            if task.kind != CONVERGE:
                template_id = row.raw_template_id
            compiled = self.compiled_for(conn, stack, template_id)
            loaded = _Loaded(
                task, traversal, stack, compiled, row, finishing=traversal.state != "RUNNING"
            )
            owner = row.owner_traversal_id
            if task.phase is None and owner is not None and owner != task.traversal_id:
                loaded.blocked = resource_in_flight(conn, owner, row.id)
            if task.kind == CONVERGE:
                definition = compiled.definition.resources.get(task.resource_name)
                if definition is not None and definition.requires:
                    keys = [converge_key(n) for n in definition.requires]
                    found = rdb.resources_of_tasks(conn, task.traversal_id, keys)
                    loaded.preds = {key[2:]: r for key, r in found.items()}
        return loaded

    # -- converge ---------------------------------------------------------------------------
    def _converge(self, ld: _Loaded) -> list[str]:
        name = ld.task.resource_name
        definition = ld.compiled.definition.resources[name]
        plugin_cls = self.deps.registry.plugin(definition.type)
        if plugin_cls is None:
            return self._fail(
                ld, ld.row, "CREATE", f"The Resource Type ({definition.type}) could not be found."
            )
        cookie = ld.task.cookie or {}
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
            except KilnError as err:
                action = "CREATE" if ld.row.action == "INIT" else "UPDATE"
                return self._fail(ld, ld.row, action, err.full_message)
        if ld.task.phase is None:
            return self._start_converge(ld, plugin_cls, props, metadata)
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
            return self._fail(ld, row, action, _reason(err, row.name), ctx)

    def _start_converge(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
    ) -> list[str]:
        row = ld.row
        owner = row.owner_traversal_id
        if row.action == "INIT" and (
            row.physical_id is not None or owner not in (None, ld.task.traversal_id)
        ):
            # A create another traversal started and never finished (cancelled):
            # what it made is unknown, so start afresh; the row's cleanup removes it.
            return self._start_replacement(ld, plugin_cls, props, metadata)
        if row.action == "INIT" or (row.action == "DELETE" and row.status == "COMPLETE"):
            action = "CREATE"
        else:
            ctx = self._context(ld, row, plugin_cls, "UPDATE", row.properties, row.metadata)
            decision = decide_resource_update(
                plugin_cls(ctx),
                StoredResource(row.action, row.status, row.properties, row.metadata or None),
                props,
                metadata,
            )
            if decision.kind == "unchanged":
                return self._complete(ld, row, None, None, requires_only=True)
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
            return self._fail(ld, row, action, _reason(err, row.name), ctx)

    def _start_replacement(
        self, ld: _Loaded, plugin_cls: type[Resource], props: dict[str, Any], metadata: Any
    ) -> list[str]:
        old = ld.row
        new = NewResource(
            id=self.deps.new_id(),
            stack_id=old.stack_id,
            root_stack_id=old.root_stack_id,
            name=old.name,
            type=ld.compiled.definition.resources[old.name].type,
            raw_template_id=ld.traversal.raw_template_id,
            replaces=old.id,
        )
        now = self.deps.clock.now()
        cookie = {**_intent("CREATE", props, metadata), "replaces": old.id}
        mine = ld.owned or old.owner_traversal_id == ld.task.traversal_id
        with dbe.write(self.deps.db) as conn:
            created = rdb.create_resource(conn, new, now=now)
            set_result_resource(conn, ld.task.lease, resource_id=created.id, now=now)
            if mine:  # the old row is not being acted on any more
                rdb.release_resource(conn, old.id, traversal_id=ld.task.traversal_id, now=now)
            ld.row, ld.owned = created, False
            if _can_find_existing(plugin_cls):
                # Record the intent before the create, as for any create that a
                # resumed step must look up instead of repeating.
                ld.own(conn, now)
                record_progress(conn, ld.task.lease, now=now, phase=REQUESTED, cookie=cookie)
        ld.task = _with_result(ld.task, created.id)
        ctx = self._context(ld, created, plugin_cls, "CREATE", props, metadata)
        plugin = plugin_cls(ctx)
        try:
            return self._begin(ld, plugin, ctx, "CREATE", props, cookie)
        except Exception as err:
            return self._fail(ld, created, "CREATE", _reason(err, created.name), ctx)

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
            self._fault(BEFORE_HANDLE, ld.task)
            plugin_cookie = plugin.handle_update(props, changed)
        else:
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
        done = getattr(plugin, f"check_{action.lower()}_complete")(cookie.get("plugin"))
        if done:
            return self._complete(ld, ld.row, plugin, ctx, action=action, started=first)
        polls = int(cookie.get("polls", 0)) + 1
        cookie = {**cookie, "polls": polls}
        hint = plugin.poll_after(cookie.get("plugin"))
        delay = poll_delay(polls) if hint is None else max(0.0, float(hint))
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
            requeue_task(
                conn,
                ld.task.lease,
                now=now,
                not_before=now + timedelta(seconds=delay),
                phase=POLLING,
                cookie=cookie,
            )
        return []

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
                attributes=self._attributes(ld, plugin, row.name),
            )
            if started:
                events.append(self._event(ld, row, action, "IN_PROGRESS", "state changed", ctx))
            events.append(self._event(ld, row, action, "COMPLETE", "state changed", ctx))
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
        if policy == "Retain" and ld.traversal.action in ("DELETE", "UPDATE", "ROLLBACK"):
            return self._finish_cleanup(ld, row, delete_row=True, event=True)
        plugin_cls = self.deps.registry.plugin(row.type)
        if plugin_cls is None:
            return self._fail(
                ld, row, "DELETE", f"The Resource Type ({row.type}) could not be found."
            )
        ctx = self._context(ld, row, plugin_cls, "DELETE", row.properties, row.metadata)
        plugin = plugin_cls(ctx)
        cookie = ld.task.cookie or {}
        try:
            if ld.task.phase in (None, REQUESTED):
                if ctx.physical_id is None and _can_find_existing(plugin_cls):
                    # A create may have reached the cloud without its id recorded.
                    found = plugin.find_existing()
                    if found is not None:
                        ctx.set_physical_id(found)
                if ld.task.phase is None and _overrides(plugin_cls, "handle_delete"):
                    self._record_intent(ld, {"action": "DELETE"})
                self._fault(BEFORE_HANDLE, ld.task)
                cookie = {"action": "DELETE", "plugin": plugin.handle_delete(), "polls": 0}
                self._fault(AFTER_HANDLE, ld.task)
                first = True
            else:
                first = False
            if plugin.check_delete_complete(cookie.get("plugin")):
                return self._finish_cleanup(
                    ld, row, delete_row=True, event=True, ctx=ctx, started=first
                )
            polls = int(cookie.get("polls", 0)) + 1
            cookie = {**cookie, "polls": polls}
            hint = plugin.poll_after(cookie.get("plugin"))
            delay = poll_delay(polls) if hint is None else max(0.0, float(hint))
            now = self.deps.clock.now()
            self._fault(BEFORE_OUTCOME, ld.task)
            with dbe.write(self.deps.db) as conn:
                ld.own(conn, now)
                self._write_context(conn, ld, ctx)
                if first:
                    add_events(
                        conn,
                        [self._event(ld, row, "DELETE", "IN_PROGRESS", "state changed", ctx)],
                        now=now,
                    )
                requeue_task(
                    conn,
                    ld.task.lease,
                    now=now,
                    not_before=now + timedelta(seconds=delay),
                    phase=POLLING,
                    cookie=cookie,
                )
            return []
        except Exception as err:
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

    # -- endings ------------------------------------------------------------------------------
    def _after_completion(self, conn: Any, ld: _Loaded, completed: bool) -> None:
        if completed:
            self._stack_completed(conn, ld.traversal, ld.stack)

    def _stack_completed(self, conn: Any, traversal: trdb.Traversal, stack: sdb.Stack) -> None:
        now = self.deps.clock.now()
        action = traversal.action
        if action == "DELETE":
            sdb.soft_delete_stack(conn, stack.id, now=now)
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

    def _fail(
        self,
        ld: _Loaded,
        row: Row,
        action: str,
        reason: str,
        ctx: EngineResourceContext | None = None,
    ) -> list[str]:
        now = self.deps.clock.now()
        resource_reason = reason
        stack_reason = f"Resource {action} failed: {reason}"
        change = ResourceChange(action=action, status="FAILED", status_reason=resource_reason)
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
            if trdb.finish_traversal(
                conn, task.traversal_id, state="CANCELLED", now=now, failure_reason=reason
            ):
                self._stack_cancelled(conn, trdb.get_traversal(conn, task.traversal_id), now)
            complete_task(conn, task.lease, now=now, successors=())
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
                rdb.create_resource(conn, new, now=now)
                set_result_resource(conn, task.lease, resource_id=new.id, now=now)
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

    # -- helpers ----------------------------------------------------------------------------
    def _successors(self, conn: Any, ld: _Loaded) -> list[str]:
        """The node's successors, from the traversal's edges read once per traversal.

        Empty for a traversal that is over: its completions do not propagate.
        """
        if ld.finishing:
            return []
        tid = ld.task.traversal_id
        edges = self._edges.get(tid)
        if edges is None:
            edges = {}
            for before, after in trdb.list_edges(conn, tid):
                edges.setdefault(before, []).append(after)
            self._edges[tid] = edges
            while len(self._edges) > 64:
                self._edges.pop(next(iter(self._edges)))
        return edges.get(ld.task.node_key, [])

    def _predecessors(self, ld: _Loaded, requires: frozenset[str]) -> dict[str, Row]:
        if not requires:
            return {}
        if ld.preds is None:
            keys = [converge_key(n) for n in requires]
            with dbe.read(self.deps.db) as conn:
                found = rdb.resources_of_tasks(conn, ld.task.traversal_id, keys)
            ld.preds = {key[2:]: row for key, row in found.items()}
        return ld.preds

    def _required_rows(self, ld: _Loaded, requires: frozenset[str]) -> list[str]:
        return sorted(row.id for row in self._predecessors(ld, requires).values())

    def _typed(self, plugin_cls: type[Resource], props: Mapping[str, Any]) -> dict[str, Any]:
        if plugin_cls.accepts_any_properties:
            return dict(props)
        typed, errors = coerce_properties(plugin_cls.properties_schema, props, self.deps.custom)
        if errors:
            raise errors[0]
        return {k: v for k, v in typed.items()}

    def _attributes(self, ld: _Loaded, plugin: Resource, name: str) -> dict[str, Any]:
        wanted = ld.compiled.wanted.get(name, set())
        if ALL_ATTRIBUTES in wanted:
            names = set(type(plugin).attributes_schema) | (wanted - {ALL_ATTRIBUTES})
        else:
            names = wanted
        out = {}
        for attr in sorted(names):
            if attr == "show":
                continue
            try:
                out[attr] = plugin.get_attribute(attr)
            except Exception:
                log.exception("attribute %s of %s failed", attr, name)
                out[attr] = None
        return out

    def _context(
        self,
        ld: _Loaded,
        row: Row,
        plugin_cls: type[Resource],
        action: str,
        props: Mapping[str, Any],
        metadata: Any,
    ) -> EngineResourceContext:
        db = self.deps.db

        class _LazyData(dict[str, rdb.ResourceDatum]):
            loaded = False

            def _load(self) -> None:
                if not self.loaded:
                    with dbe.read(db) as conn:
                        self.update(rdb.get_resource_data(conn, row.id))
                    self.loaded = True

            def get(self, key: str, default: Any = None) -> Any:
                self._load()
                return super().get(key, default)

        return EngineResourceContext(
            name=row.name,
            type_name=row.type,
            stack_name=ld.stack.name,
            stack_id=ld.stack.id,
            project_id=ld.stack.project_id,
            action=action,
            properties=props,
            metadata=metadata,
            resource_uuid=row.id,
            clock=self.deps.clock,
            stored_physical_id=row.physical_id,
            stored_data=_LazyData(),
            clients=self.deps.clients,
            name_limit=plugin_cls.physical_name_limit,
            rng=self.deps.rng,
        )

    def _write_context(
        self, conn: Any, ld: _Loaded, ctx: EngineResourceContext, physical: bool = True
    ) -> None:
        row = ld.row
        for key, pending in ctx.pending_data.items():
            if pending is None:
                rdb.delete_resource_data(conn, row.id, key)
            else:
                rdb.set_resource_data(conn, row.id, key, json.dumps(pending[0]), redact=pending[1])
        ctx.pending_data.clear()
        if physical and ctx.physical_id_changed:
            rdb.write_owned_resource(
                conn,
                row.id,
                ResourceChange(physical_id=ctx.physical_id),
                traversal_id=ld.task.traversal_id,
                epoch=ld.task.lease_epoch,
                now=self.deps.clock.now(),
            )

    def _event(
        self,
        ld: _Loaded,
        row: Row,
        action: str,
        status: str,
        reason: str,
        ctx: EngineResourceContext | None,
    ) -> NewEvent:
        physical = ctx.physical_id if ctx is not None else row.physical_id
        return NewEvent(
            uuid=self.deps.new_id(),
            stack_id=ld.stack.id,
            resource_name=row.name,
            resource_type=row.type,
            action=action,
            status=status,
            status_reason=reason,
            physical_resource_id=physical,
        )


def _can_find_existing(plugin_cls: type[Resource]) -> bool:
    return plugin_cls.find_existing is not Resource.find_existing


def _overrides(plugin_cls: type[Resource], hook: str) -> bool:
    """Whether the plugin implements ``hook`` (the base class's hooks do nothing)."""
    return getattr(plugin_cls, hook) is not getattr(Resource, hook)


def _intent(action: str, props: Mapping[str, Any], metadata: Any) -> dict[str, Any]:
    """The cookie of an action about to start: what a resumed step goes on with."""
    return {"action": action, "properties": dict(props), "metadata": metadata}


def _reason(err: BaseException, name: str) -> str:
    """Heat's form: ``<kind>: resources.<name>: <message>``."""
    if isinstance(err, KilnError):
        return f"{err.kind}: resources.{name}: {err.full_message}"
    return f"{type(err).__name__}: resources.{name}: {err}"


def _with_result(task: NodeTask, row_id: str) -> NodeTask:
    from dataclasses import replace

    return replace(task, result_resource_id=row_id)
