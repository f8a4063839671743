"""The invariants of convergence.md 6.6, checked against a scenario's database and cloud.

Each ``check_*`` function raises :class:`InvariantViolation` (an AssertionError)
naming what is wrong. :func:`check_all` runs those that apply: after every
step (``final=False``) the ones that hold at any time, at quiescence
(``final=True``) all of them. The numbers are the section's:

1. no physical object created twice per client token; no cloud object unknown
   to the database (at quiescence);
2. no traversal lost: RUNNING ones have claimable or claimed work; at
   quiescence every traversal is COMPLETE, FAILED, CANCELLED or SUPERSEDED;
3. ownership is live: a claimed task belongs to a dead engine (live ones run
   whole steps) and its lease ends within one term of the death; a row
   IN_PROGRESS has a claimable or claimed task; an action in flight (phase
   REQUESTED or POLLING) owns its row; nothing is left live at quiescence;
4. fencing: tested directly (tests/scenarios), as the harness never lets a
   dead engine write;
5. dependency order: a node's step starts only when every predecessor is DONE
   (checked before each step), and completes after them (from the step log);
6. one stack outcome per traversal, written only by the current traversal;
7. convergence: the cloud holds exactly the last template's objects with its
   properties, and the stack exactly one live row per resource;
8. bounded work: every step finishes its task, polls, waits for a row, or is
   a crash (then redone once by the next owner).

Imports: anything (test support).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import events as evdb
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import tables
from kiln.db import tasks as tdb
from kiln.db import traversals as trdb
from kiln.engine.compiled import RowState
from kiln.engine.plan import current_rows
from kiln.engine.steps import StepRunner
from kiln.schema.properties import coerce_properties
from kiln.template.functions.base import resolve_top
from kiln.testing.fake_cloud import CLOUD_PROPERTIES, THING_TYPE, FakeCloud, Thing

if TYPE_CHECKING:
    from kiln.testing.scenario import Scenario, StepRecord

LIVE_STATES = ("READY", "CLAIMED", "WAITING_RESOURCE", "WAITING_CHILD")
IN_FLIGHT = ("REQUESTED", "POLLING")


class InvariantViolation(AssertionError):
    """A convergence invariant does not hold."""


def _fail(message: str) -> None:
    raise InvariantViolation(message)


# -- 1 ---------------------------------------------------------------------------------------
def check_no_double_create(cloud: FakeCloud) -> None:
    twice = {token: n for token, n in cloud.create_counts().items() if n > 1}
    if twice:
        _fail(f"objects created more than once per client token: {twice}")


def check_no_orphans(conn: Connection, cloud: FakeCloud) -> None:
    """Every object in the cloud belongs to a row that records its physical id."""
    rows = rdb.get_resources(conn, [o.token for o in cloud.live()])
    for obj in cloud.live():
        row = rows.get(obj.token)
        if row is None:
            _fail(f"orphan: cloud object {obj.id} ({obj.name}) has no resource row {obj.token}")
        elif row.physical_id != obj.id:
            _fail(
                f"orphan: cloud object {obj.id} ({obj.name}) is not the physical id of its row "
                f"{row.id} ({row.name} {row.action}_{row.status}, physical id {row.physical_id})"
            )


# -- 2 ---------------------------------------------------------------------------------------
def traversals_of(conn: Connection, stack_ids: Iterable[str]) -> list[trdb.Traversal]:
    return [t for sid in stack_ids for t in trdb.list_traversals(conn, sid)]


def check_traversals(conn: Connection, stack_ids: Iterable[str], *, final: bool) -> None:
    for traversal in traversals_of(conn, stack_ids):
        if traversal.state in trdb.FINAL_STATES:
            continue
        if final:
            counts = tdb.count_by_state(conn, traversal.id)
            _fail(
                f"traversal {traversal.id} ({traversal.action}) is {traversal.state} at "
                f"quiescence; its tasks: {counts}"
            )
        counts = tdb.count_by_state(conn, traversal.id)
        if traversal.remaining_nodes and not any(counts.get(s) for s in LIVE_STATES):
            _fail(f"traversal {traversal.id} is lost: no claimable or claimed task ({counts})")


# -- 3 ---------------------------------------------------------------------------------------
def check_ownership(sc: Scenario, conn: Connection, *, final: bool) -> None:
    N = tables.node_task
    dead = {e.id: e.died_at for e in sc.engines if not e.alive}
    claimed = [
        tdb.NodeTask(**r._mapping) for r in conn.execute(sa.select(N).where(N.c.state == "CLAIMED"))
    ]
    for task in claimed:
        died = dead.get(task.lease_owner or "")
        if died is None:
            _fail(f"task {task.node_key} is CLAIMED by live {task.lease_owner} between steps")
        elif task.lease_expires_at is None or task.lease_expires_at > died + sc.lease:
            _fail(f"task {task.node_key} of dead {task.lease_owner} holds a lease past one term")
    R = tables.resource
    rows = {
        r.id: r
        for r in conn.execute(
            sa.select(R.c.id, R.c.name, R.c.owner_traversal_id, R.c.status).where(
                R.c.stack_id.in_(sc.stacks)
            )
        )
    }
    live = conn.execute(
        sa.select(N).where(N.c.stack_id.in_(sc.stacks), N.c.state.in_(LIVE_STATES))
    ).all()
    worked_on = {t.result_resource_id or t.resource_id for t in live}
    for row in rows.values():
        if row.status == "IN_PROGRESS" and row.id not in worked_on:
            _fail(f"resource {row.name} ({row.id}) is IN_PROGRESS with no live task")
    # An action in flight owns its row: that is what newer traversals wait on.
    for t in live:
        target = rows.get(t.result_resource_id or t.resource_id)
        if t.phase in IN_FLIGHT and target and target.owner_traversal_id != t.traversal_id:
            _fail(
                f"{t.node_key} of {t.traversal_id} has an action in flight ({t.phase}) on "
                f"{target.name} but the row is owned by {target.owner_traversal_id}"
            )
    if final and live:
        _fail(f"live tasks at quiescence: {[(t.node_key, t.state) for t in live]}")


# -- 5 ---------------------------------------------------------------------------------------
def check_predecessors_done(conn: Connection, task: tdb.NodeTask) -> None:
    """Before a step of a RUNNING traversal's task: all its predecessors are DONE."""
    preds = trdb.predecessors(conn, task.traversal_id, task.node_key)
    if not preds:
        return
    N = tables.node_task
    states = dict(
        conn.execute(
            sa.select(N.c.node_key, N.c.state).where(
                N.c.traversal_id == task.traversal_id, N.c.node_key.in_(preds)
            )
        ).all()
    )
    pending = sorted(k for k in preds if states.get(k) != "DONE")
    if pending:
        _fail(f"{task.node_key} started before its predecessors {pending} were DONE")


def check_dependency_order(conn: Connection, steps: list[StepRecord]) -> None:
    first: dict[tuple[str, str], int] = {}
    done: dict[tuple[str, str], int] = {}
    for step in steps:
        key = (step.traversal_id, step.node_key)
        first.setdefault(key, step.seq)
        if step.outcome == "done":
            done.setdefault(key, step.seq)
    for traversal_id in sorted({t for t, _ in first}):
        for before, after in trdb.list_edges(conn, traversal_id):
            started = first.get((traversal_id, after))
            if started is None:
                continue
            finished = done.get((traversal_id, before))
            if finished is None or finished > started:
                _fail(f"{after} ran (step {started}) before {before} was done ({finished})")


# -- 6 ---------------------------------------------------------------------------------------
def check_outcomes(sc: Scenario, conn: Connection) -> None:
    for stack_id in sc.stacks:
        stack = sdb.get_stack(conn, stack_id)
        traversals = trdb.list_traversals(conn, stack_id)
        finished = 0
        for t in traversals:
            writes = sc.outcomes.get(t.id, 0)
            expected = 1 if t.state in ("COMPLETE", "FAILED", "CANCELLED") else 0
            finished += expected
            if writes != expected:
                _fail(f"traversal {t.id} ({t.action} {t.state}) wrote {writes} stack outcomes")
        current = next((t for t in traversals if t.id == stack.current_traversal_id), None)
        outcome = (current.action, current.state) if current is not None else ("", "")
        if outcome[1] == "CANCELLED":
            outcome = (outcome[0], "FAILED")
        if outcome[1] in ("COMPLETE", "FAILED") and (stack.action, stack.status) != outcome:
            _fail(
                f"stack {stack.name} is {stack.action}_{stack.status} but its current "
                f"traversal ended {outcome}"
            )
        events = evdb.list_events(conn, [stack_id])
        ends = [
            e
            for e in events
            # the stack's own events (a resource of type OS::Heat::Stack is not one)
            if e.resource_type == "OS::Heat::Stack"
            and e.physical_resource_id == stack_id
            and e.resource_name == stack.name
            and e.status in ("COMPLETE", "FAILED")
        ]
        if len(ends) != finished:
            _fail(f"stack {stack.name}: {len(ends)} outcome events for {finished} outcomes")


# -- 7 ---------------------------------------------------------------------------------------
def check_convergence(sc: Scenario, conn: Connection, stack_id: str) -> None:
    """A stack whose last traversal completed matches its template, in the DB and the cloud."""
    stack = sdb.get_stack(conn, stack_id)
    if stack.status != "COMPLETE":
        return
    rows = rdb.list_resources(conn, stack_id)
    tokens = {r.id for r in rows}
    mine = [o for o in sc.cloud.live() if o.token in tokens]
    if stack.action == "DELETE":
        if rows or mine:
            _fail(f"deleted stack {stack.name} keeps rows {rows} or objects {mine}")
        return
    runner = StepRunner(sc.engines[0].deps)
    compiled = runner.compiled_for(conn, stack, stack.raw_template_id)
    definitions = compiled.definition.resources
    names = Counter(r.name for r in rows)
    extra = {n: c for n, c in names.items() if n not in definitions or c != 1}
    missing = sorted(set(definitions) - set(names))
    if extra or missing:
        _fail(f"stack {stack.name}: rows per name {dict(names)}; missing {missing}")
    live = current_rows(rows)
    state = RowState(compiled.definition, live)
    things = 0
    for name, definition in definitions.items():
        row = live[name]
        if row.status != "COMPLETE" or row.action not in ("CREATE", "UPDATE"):
            _fail(f"{name} is {row.action}_{row.status} in a COMPLETE stack")
        if definition.type != THING_TYPE:
            continue
        things += 1
        raw = resolve_top(definition.properties, state) or {}
        typed, errors = coerce_properties(Thing.properties_schema, raw, sc.custom)
        if errors:
            _fail(f"{name}: template properties do not type: {errors}")
        expected = {k: typed[k] for k in CLOUD_PROPERTIES}
        if {k: row.properties.get(k) for k in CLOUD_PROPERTIES} != expected:
            _fail(f"{name}: row properties {row.properties} are not the template's {expected}")
        obj = sc.cloud.objects.get(row.physical_id or "")
        if obj is None:
            _fail(f"{name}: no cloud object {row.physical_id}")
            return
        if obj.token != row.id or obj.status != "ACTIVE" or obj.properties != expected:
            _fail(f"{name}: cloud object {obj} is not ACTIVE with {expected}")
    if len(mine) != things:
        _fail(f"stack {stack.name}: {len(mine)} cloud objects for {things} Thing resources")


# -- 8 ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Work:
    """What the engines did, from the step log."""

    executions: int
    by_outcome: dict[str, int]
    terminal_per_task: dict[tuple[str, str], int]
    crashed: int  # steps during which the engine was killed

    def count(self, outcome: str) -> int:
        return self.by_outcome.get(outcome, 0)

    @property
    def tasks(self) -> int:
        return len(self.terminal_per_task)


def work_of(steps: list[StepRecord]) -> Work:
    outcomes: Counter[str] = Counter(s.outcome for s in steps)
    terminal: dict[tuple[str, str], int] = defaultdict(int)
    for s in steps:
        terminal[(s.traversal_id, s.node_key)] += s.outcome in ("done", "failed")
    return Work(len(steps), dict(outcomes), dict(terminal), sum(s.crashed for s in steps))


def check_bounded_work(sc: Scenario, *, final: bool) -> None:
    work = sc.work()
    twice = {k: n for k, n in work.terminal_per_task.items() if n > 1}
    if twice:
        _fail(f"tasks finished more than once: {twice}")
    odd = {o: n for o, n in work.by_outcome.items() if o not in ("done", "failed", "poll", "wait")}
    if set(odd) - {"crash"}:
        _fail(f"steps that neither finished, polled nor waited: {odd}")
    if work.crashed != sc.crashes or work.count("crash") > sc.crashes:
        _fail(f"{work.crashed} crashed steps recorded for {sc.crashes} crashes")
    # Each poll is a status query the cloud answered "not yet" (Thing is the only poller).
    if sc.only_things and work.count("poll") > sum(sc.cloud.polls_seen.values()):
        _fail(
            f"{work.count('poll')} poll steps for {sum(sc.cloud.polls_seen.values())} "
            "pending cloud states"
        )
    if final:
        unfinished = [k for k, n in work.terminal_per_task.items() if n == 0]
        for traversal_id, node_key in unfinished:
            _fail(f"task {node_key} of {traversal_id} ran but never finished")


# -- all ------------------------------------------------------------------------------------------
def check_all(sc: Scenario, *, final: bool) -> None:
    check_no_double_create(sc.cloud)
    with sc.read() as conn:
        check_traversals(conn, sc.stacks, final=final)
        check_ownership(sc, conn, final=final)
        check_bounded_work(sc, final=final)
        if not final:
            return
        check_no_orphans(conn, sc.cloud)
        check_dependency_order(conn, sc.steps)
        check_outcomes(sc, conn)
        for stack_id in sc.stacks:
            check_convergence(sc, conn, stack_id)
