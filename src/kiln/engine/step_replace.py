"""Replacing a resource, the old resource's replacement hooks, and going back to it.

A replacement (convergence.md 1.8) is a new row that ``replaces`` the old one; the
task's result moves to it and its create runs. The new row is inserted first, while
the traversal is still current (so nothing is prepared for a replacement that will
never come). Then, when the old resource exists and its plugin frees something for
its successor (``prepare_for_replace``: a port's addresses, a server's ports, a key
pair's name), the hook pair runs on the OLD row, owned by the task, in phase
``PREPARING``: the plugin's data writes go to the old row, and they and the cookie
are stored before the check is polled, so a resumed step goes on from there. Only
then is the replacement created. A permanent error fails the old row
(``UPDATE_FAILED``, Heat's reason) and drops the new row, which never reached the
cloud.

Going back: a traversal that converges a replacement row made by an earlier
traversal, while the row it replaces is still there, complete, and wanted (its
template is this traversal's, as in a rollback, or its properties are the ones
asked for now), converges the old row instead: it is no longer ``replaced_by``
anything, the task's result moves to it, and ``restore_prev_rsrc`` undoes the
preparation (phase ``RESTORING``, told the replacement's physical id) before the
usual decision. The replacement row is then cleaned up like any row not kept.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db.completion import complete_task
from kiln.db.errors import ConcurrentUpdate
from kiln.db.resources import NewResource, ResourceChange
from kiln.db.resources import Resource as Row
from kiln.db.tasks import (
    record_progress,
    requeue_task,
    resource_in_flight,
    set_result_resource,
    wake_parked,
)
from kiln.engine.resource_context import EngineResourceContext
from kiln.engine.step_base import (
    AFTER_HANDLE,
    BEFORE_HANDLE,
    BEFORE_OUTCOME,
    REQUESTED,
    LazyData,
    ResourceBusy,
    _can_find_existing,
    _intent,
    _Loaded,
    _overrides,
    _reason,
    _with_result,
    next_poll,
)
from kiln.engine.step_cleanup import CleanupSteps
from kiln.plugin.resource import Resource

log = logging.getLogger(__name__)

PREPARING = "PREPARING"  # the old row's prepare_for_replace; the task's result is the new row
RESTORING = "RESTORING"  # going back: the old row's restore_prev_rsrc; the result is the old row

#: what the replacement's create keeps of a PREPARING cookie
_CREATE_KEYS = ("action", "properties", "metadata", "replaces")


class ReplacementSteps(CleanupSteps):
    """Replacements of a converge step, with the old resource's hooks."""

    def _start_converge(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        cleared_hook: str | None = None,
    ) -> list[str]:
        """Decide and start the converge of ``ld.row`` (implemented by the step runner)."""
        raise NotImplementedError

    def _begin(
        self,
        ld: _Loaded,
        plugin: Resource,
        ctx: EngineResourceContext,
        action: str,
        props: Mapping[str, Any],
        cookie: dict[str, Any],
    ) -> list[str]:
        """Start the plugin's action and poll it once (implemented by the step runner)."""
        raise NotImplementedError

    # -- which plugin -----------------------------------------------------------------------
    def _old_plugin(self, ld: _Loaded, old: Row) -> type[Resource] | None:
        """The implementation that made ``old`` (a type change replaces it with another)."""
        definition = ld.compiled.definition.resources.get(old.name)
        if definition is not None and definition.type == old.type:
            return self._plugin_for(ld.compiled, old.name, old.type)
        return self.deps.registry.plugin(old.type)

    def _to_prepare(self, ld: _Loaded, old: Row) -> type[Resource] | None:
        """The old row's plugin when it has something to prepare for its replacement."""
        if old.physical_id is None or old.action == "INIT":
            return None
        if old.action == "DELETE" and old.status == "COMPLETE":
            return None
        old_cls = self._old_plugin(ld, old)
        if old_cls is None or not _overrides(old_cls, "prepare_for_replace"):
            return None
        return old_cls

    def _old_context(self, ld: _Loaded, old_cls: type[Resource]) -> EngineResourceContext:
        """The old row's context, with the properties it was made with."""
        row = ld.row
        props = self._stored_properties(old_cls, row)
        return self._context(ld, row, old_cls, "UPDATE", props, row.metadata)

    # -- replace ----------------------------------------------------------------------------
    def _start_replacement(
        self, ld: _Loaded, plugin_cls: type[Resource], props: dict[str, Any], metadata: Any
    ) -> list[str]:
        old = ld.row
        old_cls = self._to_prepare(ld, old)
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
        find = _can_find_existing(plugin_cls)
        with dbe.write(self.deps.db) as conn:
            current = sdb.current_traversal_for_rows(conn, old.stack_id) == ld.task.traversal_id
            prepare = current and old_cls is not None
            if mine and not prepare:  # the old row is not being acted on any more
                rdb.release_resource(conn, old.id, traversal_id=ld.task.traversal_id, now=now)
            if current:
                if prepare:
                    ld.own(conn, now)  # the old row: its hook acts on it
                created = rdb.create_resource(conn, new, now=now)
                set_result_resource(conn, ld.task.lease, resource_id=created.id, now=now)
                if prepare:
                    record_progress(conn, ld.task.lease, now=now, phase=PREPARING, cookie=cookie)
                else:
                    ld.row, ld.owned = created, False
                    if find:
                        # Record the intent before the create, as for any create that a
                        # resumed step must look up instead of repeating.
                        ld.own(conn, now)
                        record_progress(
                            conn, ld.task.lease, now=now, phase=REQUESTED, cookie=cookie
                        )
        if not current:
            # A newer traversal was planned meanwhile, without this row: it decides.
            return self._abandon(ld.task)
        ld.task = _with_result(ld.task, created.id)
        if prepare:
            ld.task = replace(ld.task, phase=PREPARING, cookie=cookie)
            ld.row, ld.owned = created, False
            return self._prepare_old(ld, plugin_cls, props, metadata, cookie)
        if find:
            ld.task = replace(ld.task, phase=REQUESTED, cookie=cookie)
        return self._create_replacement(ld, plugin_cls, props, metadata, cookie)

    def _create_replacement(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        cookie: dict[str, Any],
    ) -> list[str]:
        created = ld.row
        ctx = self._context(ld, created, plugin_cls, "CREATE", props, metadata)
        plugin = plugin_cls(ctx)
        try:
            return self._begin(ld, plugin, ctx, "CREATE", props, cookie)
        except Exception as err:
            retry = self._retry_transient(ld, ctx, "CREATE", err)
            if retry is not None:
                return retry
            return self._fail(ld, created, "CREATE", _reason(err, created.name), ctx)

    # -- prepare_for_replace (phase PREPARING) ----------------------------------------------
    def _prepare_old(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        cookie: dict[str, Any],
    ) -> list[str]:
        """Run the old row's prepare_for_replace pair, then create the replacement."""
        old_id = cookie["replaces"]
        with dbe.read(self.deps.db) as conn:
            old = rdb.get_resources(conn, [old_id]).get(old_id)
        old_cls = None if old is None else self._old_plugin(ld, old)
        if old is None or old_cls is None:  # nothing left to prepare
            return self._prepared(ld, None, None, plugin_cls, props, metadata, cookie)
        held = (
            old.owner_traversal_id == ld.task.traversal_id
            and old.owner_epoch == ld.task.lease_epoch
        )
        old_ld = replace(ld, row=old, owned=held)
        ctx = self._old_context(old_ld, old_cls)
        plugin = old_cls(ctx)
        try:
            if not cookie.get("prepared"):
                self._check_lease(ld.task)
                self._fault(BEFORE_HANDLE, ld.task)
                started = plugin.prepare_for_replace()
                self._fault(AFTER_HANDLE, ld.task)
                cookie = {**cookie, "plugin": started, "prepared": True, "polls": 0}
                self._save_hook_progress(ld, old_ld, ctx, PREPARING, cookie)
            done, cookie = self._polled(plugin.check_prepare_for_replace_complete, cookie, "UPDATE")
        except Exception as err:
            retry = self._retry_transient(ld, ctx, "UPDATE", err, data_of=old_ld)
            if retry is not None:
                return retry
            return self._fail_prepare(ld, old_ld, ctx, err)
        if not done:
            return self._requeue_hook_poll(ld, old_ld, plugin, ctx, PREPARING, cookie)
        return self._prepared(ld, old_ld, ctx, plugin_cls, props, metadata, cookie)

    def _prepared(
        self,
        ld: _Loaded,
        old_ld: _Loaded | None,
        ctx: EngineResourceContext | None,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        cookie: dict[str, Any],
    ) -> list[str]:
        """The old resource is prepared: let go of it and create the replacement."""
        now = self.deps.clock.now()
        create_cookie = {k: cookie[k] for k in _CREATE_KEYS if k in cookie}
        find = _can_find_existing(plugin_cls)
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            if old_ld is not None and ctx is not None:
                old_ld.own(conn, now)
                self._write_context(conn, old_ld, ctx)
                rdb.release_resource(
                    conn, old_ld.row.id, traversal_id=ld.task.traversal_id, now=now
                )
            if ld.finishing:
                # The traversal is over: its successor decides what to do with both rows.
                self._finish_without_action(conn, ld, old_ld)
            elif find:
                ld.own(conn, now)
                record_progress(conn, ld.task.lease, now=now, phase=REQUESTED, cookie=create_cookie)
            else:
                record_progress(conn, ld.task.lease, now=now, phase=None, cookie=None)
        if ld.finishing:
            return []
        ld.task = replace(
            ld.task, phase=REQUESTED if find else None, cookie=create_cookie if find else None
        )
        return self._create_replacement(ld, plugin_cls, props, metadata, create_cookie)

    def _fail_prepare(
        self, ld: _Loaded, old_ld: _Loaded, ctx: EngineResourceContext, err: BaseException
    ) -> list[str]:
        """A permanent error: the old resource's update failed (Heat's reason); the
        replacement row, which never reached the cloud, is dropped."""
        old, new_id = old_ld.row, ld.row.id
        now = self.deps.clock.now()

        def drop_replacement(conn: Any) -> None:
            set_result_resource(conn, ld.task.lease, resource_id=old.id, now=now)
            rdb.delete_resource(conn, new_id)

        return self._fail(old_ld, old, "UPDATE", _reason(err, old.name), ctx, also=drop_replacement)

    # -- going back (phase RESTORING) -------------------------------------------------------
    def _row_to_go_back_to(self, ld: _Loaded, props: dict[str, Any]) -> Row | None:
        """The row ``ld.row`` replaces, when this traversal should converge it instead."""
        new = ld.row
        if new.replaces is None or new.raw_template_id == ld.traversal.raw_template_id:
            return None  # not a replacement, or this traversal's own
        with dbe.read(self.deps.db) as conn:
            old = rdb.get_resources(conn, [new.replaces]).get(new.replaces)
            if (
                old is None
                or old.type != new.type
                or old.status != "COMPLETE"
                or old.action in ("INIT", "DELETE")
            ):
                return None
            if old.raw_template_id != ld.traversal.raw_template_id and old.properties != props:
                return None  # not what this traversal asks for
            owner = old.owner_traversal_id
            if owner not in (None, ld.task.traversal_id) and resource_in_flight(
                conn, owner, old.id
            ):
                raise ResourceBusy(old.id)  # an older traversal is acting on it: look again
        return old

    def _go_back(
        self, ld: _Loaded, plugin_cls: type[Resource], props: dict[str, Any], metadata: Any
    ) -> list[str] | None:
        """Converge the row that ``ld.row`` replaces instead (None: not wanted)."""
        old = self._row_to_go_back_to(ld, props)
        if old is None:
            return None
        new = ld.row
        old_cls = self._old_plugin(ld, old)
        restore = old_cls is not None and _overrides(old_cls, "restore_prev_rsrc")
        cookie = {
            **_intent("UPDATE", props, metadata),
            "replacement": new.id,
            "replacement_physical_id": new.physical_id,
        }
        phase = RESTORING if restore else None
        now = self.deps.clock.now()
        tid = ld.task.traversal_id
        ld.row, ld.owned = old, False
        with dbe.write(self.deps.db) as conn:
            current = sdb.current_traversal_for_rows(conn, old.stack_id) == tid
            if current:
                ld.own(conn, now)
                rdb.write_owned_resource(
                    conn,
                    old.id,
                    ResourceChange(replaced_by=None),
                    traversal_id=tid,
                    epoch=ld.task.lease_epoch,
                    now=now,
                )
                self._forget_shared_object(conn, new.id, old.physical_id, now)
                set_result_resource(conn, ld.task.lease, resource_id=old.id, now=now)
                record_progress(
                    conn, ld.task.lease, now=now, phase=phase, cookie=cookie if restore else None
                )
        if not current:
            return self._abandon(ld.task)
        log.info("%s: going back to %s, which %s replaced", old.name, old.id, new.id)
        ld.row = replace(old, replaced_by=None, owner_traversal_id=tid)
        ld.task = replace(
            _with_result(ld.task, old.id), phase=phase, cookie=cookie if restore else None
        )
        if restore:
            return self._restore_old(ld, plugin_cls, props, metadata, cookie)
        return self._start_converge(ld, plugin_cls, props, metadata)

    @staticmethod
    def _forget_shared_object(
        conn: Any, replacement_id: str, physical_id: str | None, now: Any
    ) -> None:
        """Both rows name one object (a key pair is its name): the replacement forgets
        it, so that its cleanup does not delete what the old row has again."""
        if physical_id is None:
            return
        row = rdb.get_resources(conn, [replacement_id]).get(replacement_id)
        if row is None or row.physical_id != physical_id:
            return
        try:
            forget = ResourceChange(physical_id=None)
            rdb.update_resource(conn, row.id, forget, now=now, expected_version=row.version)
        except ConcurrentUpdate:
            raise ResourceBusy(row.id) from None

    def _restore_old(
        self,
        ld: _Loaded,
        plugin_cls: type[Resource],
        props: dict[str, Any],
        metadata: Any,
        cookie: dict[str, Any],
    ) -> list[str]:
        """Run the old row's restore_prev_rsrc pair, then converge it as usual."""
        old = ld.row
        old_cls = self._old_plugin(ld, old) or plugin_cls
        ctx = self._old_context(ld, old_cls)
        plugin = old_cls(ctx)
        try:
            if not cookie.get("restoring"):
                self._check_lease(ld.task)
                self._fault(BEFORE_HANDLE, ld.task)
                started = plugin.restore_prev_rsrc(cookie.get("replacement_physical_id"))
                self._fault(AFTER_HANDLE, ld.task)
                cookie = {**cookie, "plugin": started, "restoring": True, "polls": 0}
                self._save_hook_progress(ld, ld, ctx, RESTORING, cookie)
            done, cookie = self._polled(plugin.check_restore_prev_rsrc_complete, cookie, "UPDATE")
        except Exception as err:
            retry = self._retry_transient(ld, ctx, "UPDATE", err)
            if retry is not None:
                return retry
            return self._fail(ld, old, "UPDATE", _reason(err, old.name), ctx)
        if not done:
            return self._requeue_hook_poll(ld, ld, plugin, ctx, RESTORING, cookie)
        now = self.deps.clock.now()
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            ld.own(conn, now)
            self._write_context(conn, ld, ctx)
            self._forget_shared_object(conn, cookie["replacement"], ctx.physical_id, now)
            if ld.finishing:
                rdb.release_resource(conn, old.id, traversal_id=ld.task.traversal_id, now=now)
                self._finish_without_action(conn, ld, ld)
            else:
                record_progress(conn, ld.task.lease, now=now, phase=None, cookie=None)
        if ld.finishing:
            return []
        ld.task = replace(ld.task, phase=None, cookie=None)
        return self._start_converge(ld, plugin_cls, props, metadata)

    # -- shared -----------------------------------------------------------------------------
    def _save_hook_progress(
        self,
        ld: _Loaded,
        old_ld: _Loaded,
        ctx: EngineResourceContext,
        phase: str,
        cookie: dict[str, Any],
    ) -> None:
        """Store what the hook recorded (on the old row) and its cookie, before its check."""
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            old_ld.own(conn, now)
            self._write_context(conn, old_ld, ctx)
            record_progress(conn, ld.task.lease, now=now, phase=phase, cookie=cookie)
        ld.task = replace(ld.task, phase=phase, cookie=cookie)
        ctx.stored_data = LazyData(self.deps.db, old_ld.row.id)  # the check reads what was stored

    def _requeue_hook_poll(
        self,
        ld: _Loaded,
        old_ld: _Loaded,
        plugin: Resource,
        ctx: EngineResourceContext,
        phase: str,
        cookie: dict[str, Any],
    ) -> list[str]:
        """The hook is not done: store its progress and poll again when due."""
        hint = plugin.poll_after(cookie.get("plugin"))
        cookie, delay = next_poll(cookie, hint)
        now = self.deps.clock.now()
        self._fault(BEFORE_OUTCOME, ld.task)
        with dbe.write(self.deps.db) as conn:
            old_ld.own(conn, now)
            self._write_context(conn, old_ld, ctx)
            requeue_task(
                conn,
                ld.task.lease,
                now=now,
                not_before=now + timedelta(seconds=delay),
                phase=phase,
                cookie=cookie,
            )
        return []

    def _finish_without_action(self, conn: Any, ld: _Loaded, old_ld: _Loaded | None) -> None:
        """A traversal that is over finished its hook: end the task, wake who waits."""
        now = self.deps.clock.now()
        for row_id in {ld.row.id, *([old_ld.row.id] if old_ld is not None else [])}:
            wake_parked(conn, stack_id=ld.stack.id, resource_id=row_id, now=now)
        complete_task(conn, ld.task.lease, now=now, successors=())
