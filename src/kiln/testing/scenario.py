"""A deterministic scenario harness: N virtual engines, a virtual clock, crash injection.

A :class:`Scenario` owns one SQLite database (in a directory it is given), one
:class:`~kiln.core.clock.VirtualClock`, one :class:`~kiln.testing.fake_cloud.FakeCloud`,
a PluginRegistry of its own (the discovered plugins plus ``Test::Cloud::Thing``)
and N virtual engines: each its own ``engine_id``, EngineDeps, Worker and
StepRunner over the same database. :meth:`Scenario.step` makes one scheduling
decision: when a task is due, one live engine (round-robin, or chosen by a
seeded RNG) claims a batch and runs it; otherwise a live engine sweeps and the
clock jumps to the next due poll, lease expiry or deadline. Nothing is
threaded, so a seed replays a scenario exactly.

Crashes: :meth:`Scenario.crash_at` arms a :class:`CrashPlan`. The engines'
``EngineDeps.fault_point`` hook (kiln.engine.steps.FAULT_POINTS) raises
:class:`Crash` (a BaseException, so no ``except Exception`` in the engine
stops it) when a plan matches; the engine is dead from then on: its claimed
tasks stay CLAIMED with their lease until a live engine's sweep reclaims them
after the clock passed the lease. A plan may start a fresh engine (a new
process, new id) in the dead one's place.

Every step is recorded (:class:`StepRecord`) for the invariant checks of
kiln.testing.invariants, which :meth:`Scenario.check` runs (at quiescence, or
after every step with ``check_each_step``). Imports: anything (test support).
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.core.clock import VirtualClock
from kiln.db import engine as dbe
from kiln.db import engines as edb
from kiln.db import stacks as sdb
from kiln.db import tables
from kiln.db import tasks as tdb
from kiln.db import traversals as trdb
from kiln.db.migrate import upgrade
from kiln.engine.service import Caller, StackRequest, StackService
from kiln.engine.steps import EngineDeps, StepRunner
from kiln.engine.worker import Worker, sweep_once
from kiln.plugin.registry import PluginRegistry
from kiln.schema.custom import CustomConstraints
from kiln.template.loader import load_template
from kiln.testing import invariants
from kiln.testing.fake_cloud import CLIENT, THING_TYPE, FakeCloud, Thing, make_thing_template
from kiln.testing.invariants import InvariantViolation

CALLER = Caller("project-1", "user-1")
#: how far past a lease expiry the clock jumps (``reclaim_expired`` wants ``<``)
TICK = timedelta(milliseconds=1)

__all__ = [
    "CALLER",
    "Crash",
    "CrashPlan",
    "InvariantViolation",
    "Scenario",
    "StepRecord",
    "VirtualEngine",
    "make_thing_template",
]


class Crash(BaseException):
    """An injected engine crash; escapes every ``except Exception`` in the engine."""


@dataclass
class CrashPlan:
    """Kill the engine that reaches ``point`` for the ``occurrence``-th matching time.

    ``None`` filters match anything: ``resource`` is the task's resource name,
    ``kind`` CONVERGE or CLEANUP, ``action`` the traversal's (CREATE, UPDATE,
    DELETE), ``engine`` an engine id.
    """

    point: str
    resource: str | None = None
    kind: str | None = None
    action: str | None = None
    engine: str | None = None
    occurrence: int = 1
    restart: bool = True
    hits: int = 0
    fired_on: tuple[str, str] | None = None  # (engine id, node key) once fired


@dataclass(frozen=True)
class StepRecord:
    """One step of one task, as the harness saw it."""

    seq: int
    engine: str
    traversal_id: str
    node_key: str
    kind: str
    epoch: int
    #: what the step wrote: done, failed, poll, wait; crash (killed before writing
    #: anything), fenced (taken over while running)
    outcome: str
    at: datetime
    #: the engine was killed during this step (perhaps after its outcome was written)
    crashed: bool = False


@dataclass
class VirtualEngine:
    """One engine process of the scenario."""

    id: str
    deps: EngineDeps
    worker: Worker
    alive: bool = True
    died_at: datetime | None = None


class _RecordingRunner(StepRunner):
    """A StepRunner that checks dependency order before a step and records its outcome."""

    def __init__(self, deps: EngineDeps, scenario: Scenario) -> None:
        super().__init__(deps)
        self.scenario = scenario

    def run(self, task: tdb.NodeTask) -> list[str]:
        sc = self.scenario
        with dbe.read(sc.db) as conn:
            traversal = trdb.get_traversal(conn, task.traversal_id)
            before = sdb.get_stack(conn, task.stack_id)
            if traversal.state == "RUNNING":
                invariants.check_predecessors_done(conn, task)
        crashed = True
        try:
            ready = super().run(task)
            crashed = False
            return ready
        finally:
            with dbe.read(sc.db) as conn:
                after = tdb.get_task(conn, task.traversal_id, task.node_key)
                stack = sdb.get_stack(conn, task.stack_id)
            sc.note_stack_write(task.traversal_id, before, stack)
            sc.record(self.deps.engine_id, task, _classify(task, after), crashed)


def _classify(before: tdb.NodeTask, after: tdb.NodeTask) -> str:
    if after.state == "CLAIMED" and after.lease_epoch == before.lease_epoch:
        return "crash"  # still ours: nothing was written
    if after.state == "DONE":
        return "done"
    if after.state == "FAILED":
        return "failed"
    if after.lease_epoch != before.lease_epoch or after.state == "CLAIMED":
        return "fenced"
    polls_before = (before.cookie or {}).get("polls", 0)
    polls_after = (after.cookie or {}).get("polls", 0)
    if after.phase == before.phase and polls_after == polls_before:
        return "wait"
    return "poll" if polls_after > polls_before else "progress"


def _base_registry() -> PluginRegistry:
    registry = PluginRegistry.discover()
    registry.register(Thing)
    return registry


class Scenario:
    """One database, one virtual clock, one fake cloud and N virtual engines."""

    def __init__(
        self,
        directory: str | Path,
        *,
        engines: int = 2,
        seed: int = 0,
        interleave: str = "round_robin",
        lease: timedelta = timedelta(seconds=15),
        batch: int = 1,
        check_each_step: bool = False,
    ) -> None:
        if interleave not in ("round_robin", "random"):
            raise ValueError(f"unknown interleaving {interleave!r}")
        Path(directory).mkdir(parents=True, exist_ok=True)
        self.db = dbe.create_engine(f"sqlite:///{Path(directory) / 'scenario.sqlite'}")
        upgrade(self.db)
        self.clock = VirtualClock()
        self.cloud = FakeCloud()
        self.registry = _base_registry()
        self.custom = self.registry.custom_constraints(CustomConstraints.offline())
        self.interleave = interleave
        self.lease = lease
        self.batch = batch
        self.check_each_step = check_each_step
        self._ids = random.Random(seed)
        self._id_count = itertools.count()
        self._sched = random.Random(seed + 1)
        self._turn = 0
        self.engines: list[VirtualEngine] = []
        self.plans: list[CrashPlan] = []
        self.steps: list[StepRecord] = []
        self.stacks: list[str] = []
        self.outcomes: dict[str, int] = {}  # traversal id -> stack outcome writes
        self.actions: dict[str, str] = {}  # traversal id -> action
        self.crashes = 0
        #: whether every template used only types that never poll except Thing
        self.only_things = True
        self.service = StackService(self._deps("api"))
        for _ in range(engines):
            self.spawn_engine()

    # -- wiring ----------------------------------------------------------------------------
    def new_id(self) -> str:
        return str(uuid.UUID(int=self._ids.getrandbits(128) ^ next(self._id_count), version=4))

    def _deps(self, engine_id: str) -> EngineDeps:
        return EngineDeps(
            db=self.db,
            registry=self.registry,
            custom=self.custom,
            clock=self.clock,
            engine_id=engine_id,
            lease=self.lease,
            clients={CLIENT: self.cloud},
            rng=random.Random(engine_id),
            new_id=self.new_id,
            fault_point=self._fault,
        )

    def spawn_engine(self) -> VirtualEngine:
        """Start one more engine process (registered, heartbeating)."""
        engine_id = f"engine-{len(self.engines) + 1}"
        deps = self._deps(engine_id)
        worker = Worker(deps, batch=self.batch)
        worker.runner = _RecordingRunner(deps, self)
        engine = VirtualEngine(engine_id, deps, worker)
        with dbe.write(self.db) as conn:
            edb.register_engine(conn, engine_id, host="scenario", pid=0, now=self.clock.now())
        self.engines.append(engine)
        return engine

    @property
    def live(self) -> list[VirtualEngine]:
        return [e for e in self.engines if e.alive]

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with dbe.read(self.db) as conn:
            yield conn

    # -- crashes ------------------------------------------------------------------------------
    def crash_at(self, point: str, **match: Any) -> CrashPlan:
        """Arm a crash (see :class:`CrashPlan` for the filters)."""
        plan = CrashPlan(point, **match)
        self.plans.append(plan)
        return plan

    def _fault(self, point: str, task: tdb.NodeTask) -> None:
        fire: CrashPlan | None = None
        for plan in self.plans:
            if plan.fired_on is not None or plan.point != point:
                continue
            if not self._matches(plan, task):
                continue
            plan.hits += 1  # every armed plan counts the hit, even if another one fires
            if plan.hits == plan.occurrence and fire is None:
                fire = plan
        if fire is not None:
            owner = task.lease_owner or "?"
            fire.fired_on = (owner, task.node_key)
            raise Crash(f"{owner} crashed at {point} of {task.node_key}")

    def _matches(self, plan: CrashPlan, task: tdb.NodeTask) -> bool:
        if plan.resource is not None and task.resource_name != plan.resource:
            return False
        if plan.kind is not None and task.kind != plan.kind:
            return False
        if plan.engine is not None and task.lease_owner != plan.engine:
            return False
        return plan.action is None or self.action_of(task.traversal_id) == plan.action

    def action_of(self, traversal_id: str) -> str:
        if traversal_id not in self.actions:
            with self.read() as conn:
                self.actions[traversal_id] = trdb.get_traversal(conn, traversal_id).action
        return self.actions[traversal_id]

    def _kill(self, engine: VirtualEngine) -> None:
        engine.alive = False
        engine.died_at = self.clock.now()
        self.crashes += 1
        plan = next((p for p in self.plans if p.fired_on and p.fired_on[0] == engine.id), None)
        if (plan is None or plan.restart) or not self.live:
            self.spawn_engine()

    # -- recording ---------------------------------------------------------------------------
    def record(self, engine_id: str, task: tdb.NodeTask, outcome: str, crashed: bool) -> None:
        self.steps.append(
            StepRecord(
                len(self.steps) + 1,
                engine_id,
                task.traversal_id,
                task.node_key,
                task.kind,
                task.lease_epoch,
                outcome,
                self.clock.now(),
                crashed,
            )
        )

    def note_stack_write(self, traversal_id: str, before: sdb.Stack, after: sdb.Stack) -> None:
        """Invariant 6 while it happens: only the current traversal writes the stack."""
        if after.version == before.version:
            return
        if after.current_traversal_id != traversal_id:
            raise InvariantViolation(
                f"traversal {traversal_id} changed stack {after.id} whose current traversal "
                f"is {after.current_traversal_id}"
            )
        if after.status in ("COMPLETE", "FAILED"):
            self.outcomes[traversal_id] = self.outcomes.get(traversal_id, 0) + 1
            if self.outcomes[traversal_id] > 1:
                raise InvariantViolation(f"traversal {traversal_id} wrote two stack outcomes")

    # -- the API -----------------------------------------------------------------------------
    def _request(self, name: str, template: str | Mapping[str, Any], **kw: Any) -> StackRequest:
        data = load_template(template).data if isinstance(template, str) else template
        types = {spec.get("type") for spec in (data.get("resources") or {}).values()}
        self.only_things &= types <= {THING_TYPE, "OS::Heat::Value", "OS::Heat::None"}
        return StackRequest(name=name, template=dict(data), **kw)

    def _started(self, stack_id: str) -> str:
        with self.read() as conn:
            stack = sdb.get_stack(conn, stack_id)
            assert stack.current_traversal_id is not None
            traversal = trdb.get_traversal(conn, stack.current_traversal_id)
        self.actions[traversal.id] = traversal.action
        if traversal.state in ("COMPLETE", "FAILED"):  # an empty plan ends at once
            self.outcomes[traversal.id] = self.outcomes.get(traversal.id, 0) + 1
        return traversal.id

    def create(self, template: str | Mapping[str, Any], name: str = "s", **kw: Any) -> str:
        """Start creating a stack; returns its id."""
        stack_id = self.service.create_stack(CALLER, self._request(name, template, **kw))
        self.stacks.append(stack_id)
        self._started(stack_id)
        return stack_id

    def update(self, stack_id: str, template: str | Mapping[str, Any], **kw: Any) -> str:
        """Start updating a stack; returns the new traversal's id."""
        name = self.stack(stack_id).name
        self.service.update_stack(CALLER, stack_id, self._request(name, template, **kw))
        return self._started(stack_id)

    def delete(self, stack_id: str) -> str:
        """Start deleting a stack; returns the new traversal's id."""
        self.service.delete_stack(CALLER, stack_id)
        return self._started(stack_id)

    def stack(self, stack_id: str) -> sdb.Stack:
        with self.read() as conn:
            return sdb.get_stack(conn, stack_id)

    # -- scheduling ----------------------------------------------------------------------------
    def _pick(self) -> VirtualEngine:
        live = self.live
        if self.interleave == "random":
            return self._sched.choice(live)
        self._turn = (self._turn + 1) % len(live)
        return live[self._turn]

    def _due(self, conn: Connection) -> int:
        return tdb.count_ready(conn, now=self.clock.now())

    def step(self) -> bool:
        """One scheduling decision; False at quiescence (nothing due, nothing to wait for)."""
        with self.read() as conn:
            due = self._due(conn)
        if due:
            engine = self._pick()
            try:
                engine.worker.step_once()
            except Crash:
                self._kill(engine)
            if self.check_each_step:
                self.check(final=False)
            return True
        sweep_once(self.live[0].deps)
        with self.read() as conn:
            if self._due(conn):
                return True
            wake = self._next_event(conn)
        if wake is None:
            return False
        self.clock.set(wake)
        self._heartbeat()
        return True

    def _next_event(self, conn: Connection) -> datetime | None:
        N, TR = tables.node_task, tables.traversal
        now = self.clock.now()
        ready = conn.execute(
            sa.select(sa.func.min(N.c.not_before)).where(N.c.state == "READY")
        ).scalar_one()
        leases = conn.execute(
            sa.select(sa.func.min(N.c.lease_expires_at)).where(N.c.state == "CLAIMED")
        ).scalar_one()
        deadline = conn.execute(
            sa.select(sa.func.min(TR.c.deadline_at)).where(TR.c.state == "RUNNING")
        ).scalar_one()
        times = [t for t in (ready,) if t is not None]
        times += [t + TICK for t in (leases, deadline) if t is not None]
        later = [t for t in times if t > now]
        return min(later) if later else None

    def _heartbeat(self) -> None:
        with dbe.write(self.db) as conn:
            for engine in self.live:
                edb.heartbeat(conn, engine.id, now=self.clock.now(), lease=self.lease)

    def run(self, *, max_steps: int = 20_000, check: bool = True) -> int:
        """Step until quiescent; then check every invariant (unless ``check`` is False)."""
        for count in range(max_steps):
            if not self.step():
                if check:
                    self.check(final=True)
                return count
        raise InvariantViolation(f"no quiescence after {max_steps} scheduling decisions")

    def run_steps(self, count: int) -> None:
        """Make ``count`` scheduling decisions (stopping early at quiescence)."""
        for _ in range(count):
            if not self.step():
                return

    def run_until(self, predicate: Callable[[Scenario], bool], *, max_steps: int = 20_000) -> None:
        """Step until ``predicate(self)`` holds; InvariantViolation if quiescent before."""
        for _ in range(max_steps):
            if predicate(self):
                return
            if not self.step():
                break
        if not predicate(self):
            raise InvariantViolation("the scenario went quiet before the condition held")

    # -- checks ------------------------------------------------------------------------------------
    def check(self, *, final: bool = True) -> None:
        """Every invariant of convergence.md 6.6 that applies (see kiln.testing.invariants)."""
        invariants.check_all(self, final=final)

    def work(self) -> invariants.Work:
        return invariants.work_of(self.steps)

    def traversal_of(self, stack_id: str) -> trdb.Traversal:
        with self.read() as conn:
            stack = sdb.get_stack(conn, stack_id)
            assert stack.current_traversal_id is not None
            return trdb.get_traversal(conn, stack.current_traversal_id)
