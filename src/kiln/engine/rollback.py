"""Rollback and cancel: what happens after a traversal fails or is cancelled.

Rollback is just another traversal (convergence.md 6.1): a failed CREATE
converges to the empty template (every resource deleted, ROLLBACK_COMPLETE);
a failed UPDATE converges back to the previous template. It starts only when
the failed traversal asked for it (the stack's ``disable_rollback`` is false,
or ``cancel_update`` asked to roll back) and is still the stack's current one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import tasks as tasks_db
from kiln.db import templates as tdb
from kiln.db import traversals as trdb
from kiln.db.errors import NotFound
from kiln.engine.plan import CONVERGE_STEPS, build_plan

if TYPE_CHECKING:
    from kiln.engine.service import StackService

EMPTY_TEMPLATE = {"heat_template_version": "2013-05-23"}


def roll_back(service: StackService, traversal_id: str) -> bool:
    """Start the rollback of a failed or cancelled traversal; False if none is due."""
    deps = service.deps
    with dbe.read(deps.db) as conn:
        try:
            traversal = trdb.get_traversal(conn, traversal_id)
        except NotFound:
            return False
        stack = sdb.get_stack(conn, traversal.stack_id)
    if (
        not traversal.rollback_on_failure
        or traversal.action not in ("CREATE", "UPDATE")
        or stack.current_traversal_id != traversal.id
        or stack.deleted_at is not None
    ):
        return False
    now = deps.clock.now()
    with dbe.write(deps.db) as conn:
        locked = sdb.lock_stack(conn, stack.id)  # see update_stack
        if locked.version != stack.version or locked.current_traversal_id != traversal.id:
            return False  # another action started meanwhile: it decides
        if traversal.action == "CREATE":
            target_id = tdb.store_raw_template(conn, EMPTY_TEMPLATE, {}, {}, now=now)
        else:
            if stack.prev_raw_template_id is None:
                return False
            target_id = stack.prev_raw_template_id
            sdb.set_template(
                conn,
                stack.id,
                raw_template_id=target_id,
                prev_raw_template_id=stack.raw_template_id,
                now=now,
                expected_version=stack.version,
            )
        compiled = service.runner.compiled_for(conn, stack, target_id)
        stored = rdb.list_resources(conn, stack.id)
        plan = build_plan(
            service._plan_input(stack.id, stack.root_id, compiled.definition, target_id, stored),
            CONVERGE_STEPS,
        )
        rdb.create_resources(conn, [_with_template(r, target_id) for r in plan.new_rows], now=now)
        service._start(conn, stack.id, traversal.id, "ROLLBACK", target_id, plan, now, None, False)
    service.wake()
    return True


def cancel(service: StackService, stack_id: str, *, rollback: bool) -> bool:
    """Ask the stack's running traversal to stop (and then roll back, if asked)."""
    deps = service.deps
    with dbe.write(deps.db) as conn:
        stack = sdb.get_stack(conn, stack_id, show_deleted=False)
        if stack.current_traversal_id is None:
            return False
        tid = stack.current_traversal_id
        if not trdb.request_cancel(conn, tid):
            return False
        trdb.set_rollback_on_failure(conn, tid, rollback)
        tasks_db.hurry_tasks(conn, tid, now=deps.clock.now())
    service.wake()
    return True


def _with_template(row: rdb.NewResource, template_id: str) -> rdb.NewResource:
    from dataclasses import replace

    return replace(row, raw_template_id=template_id)
