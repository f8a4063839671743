"""Engine workers: claim ready tasks, run their steps, sweep, heartbeat.

The database is the queue. A ``Notifier`` only wakes sleeping workers sooner;
a lost wake-up costs latency, never work, because idle workers look at the
queue again after a short interval anyway. ``run_until_idle`` drives the same
loop synchronously (tests, benchmarks, the deterministic scenario harness),
moving a virtual clock to the next due poll when nothing is ready.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import socket
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from kiln.core.clock import VirtualClock
from kiln.db import engine as dbe
from kiln.db import engines as edb
from kiln.db import repair
from kiln.db import tasks as tdb
from kiln.db import traversals as trdb
from kiln.db.errors import FencedOut, NotFound
from kiln.db.stacks import StackStatus, update_stack_status
from kiln.engine.steps import EngineDeps, StepRunner

log = logging.getLogger(__name__)

#: how long a task whose step raised waits before it is run again
HAND_BACK_DELAY = timedelta(seconds=2)


class Notifier:
    """In-process wake-ups: a condition workers wait on.

    ``forward`` (set by a scaled-out engine) also tells the other engines, e.g. with
    ``kiln.rpc.wakeup.WakeupNotifier.notify``; a wake-up that came from them is
    taken with ``notify_local``, so it is not sent around again.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.forward: Callable[[], None] | None = None

    def notify(self) -> None:
        self._event.set()
        if self.forward is not None:
            self.forward()

    def notify_local(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> None:
        self._event.wait(timeout)
        self._event.clear()


class Worker:
    """Claims and runs tasks for one engine."""

    def __init__(
        self,
        deps: EngineDeps,
        *,
        batch: int = 32,  # measured: 16 costs ~10% on 1000 one-second waits; larger
        # batches serialise slow (cloud) steps behind one worker
        notifier: Notifier | None = None,
    ) -> None:
        self.deps = deps
        self.batch = batch
        self.notifier = notifier or Notifier()
        self.runner = StepRunner(deps)

    def claim(self, limit: int | None = None) -> list[tdb.NodeTask]:
        with dbe.write(self.deps.db) as conn:
            return tdb.claim_tasks(
                conn,
                self.deps.engine_id,
                now=self.deps.clock.now(),
                lease=self.deps.lease,
                limit=self.batch if limit is None else min(limit, self.batch),
                per_stack_limit=self.deps.max_concurrent_tasks_per_stack,
            )

    def step_once(self) -> int:
        """Claim a batch and run one step of each; returns how many ran."""
        tasks = self.claim()
        ready = 0
        for task in tasks:
            ready += len(self.runner.run(task))
        # This worker claims again at once; wake the others only when there is
        # more than it takes (waking them for one task only makes them contend).
        if ready > self.batch:
            self.notifier.notify()
        return len(tasks)

    def next_wake(self) -> datetime | None:
        with dbe.read(self.deps.db) as conn:
            return tdb.next_wake_at(
                conn,
                now=self.deps.clock.now(),
                per_stack_limit=self.deps.max_concurrent_tasks_per_stack,
            )

    def run_until_idle(self, *, max_steps: int = 1_000_000, sweep: bool = True) -> int:
        """Run until no task is ready or due (moving a virtual clock forward)."""
        steps = 0
        while steps < max_steps:
            ran = self.step_once()
            steps += ran
            if ran:
                continue
            if sweep:
                sweep_once(self.deps)
            due = self.next_wake()
            if due is None:
                return steps
            clock = self.deps.clock
            if isinstance(clock, VirtualClock):
                clock.set(due)
            else:
                wait = (due - clock.now()).total_seconds()
                if wait > 0:
                    self.notifier.wait(min(wait, 1.0))
        return steps


def sweep_once(deps: EngineDeps) -> None:
    """Hand expired leases back, repair lost traversals, fail overdue ones."""
    now = deps.clock.now()
    with dbe.write(deps.db) as conn:
        reclaimed = tdb.reclaim_expired(conn, now=now)
        overdue = trdb.list_overdue(conn, now=now)
        for lost in repair.lost_traversals(conn):
            ready = repair.repair_traversal(conn, lost, now=now)
            log.warning("sweeper: traversal %s was lost; %d tasks made ready", lost, len(ready))
    if reclaimed:
        log.info("sweeper: %d expired task leases handed back", reclaimed)
    for traversal in overdue:
        _fail_overdue(deps, traversal, now)


def _fail_overdue(deps: EngineDeps, traversal: trdb.Traversal, now: datetime) -> None:
    reason = "Timed out"
    with dbe.write(deps.db) as conn:
        if not trdb.finish_traversal(
            conn, traversal.id, state="FAILED", now=now, failure_reason=reason
        ):
            return
        update_stack_status(
            conn,
            traversal.stack_id,
            traversal_id=traversal.id,
            outcome=StackStatus(traversal.action, "FAILED", reason),
            now=now,
        )
    deps.on_traversal_failed(traversal.id)


class EngineRuntime:
    """An engine process's threads: a claimer, workers, heartbeat and sweeper.

    The claimer takes ready tasks from the database in batches, never more than the
    idle workers plus a small prefetch, and hands them to the workers through a queue;
    each worker runs one step at a time. So a slow step (a cloud call with latency)
    holds one worker, never the batch it was claimed with, and a claimed task starts
    within about one step's time (well inside its lease).
    """

    def __init__(
        self,
        deps: EngineDeps,
        *,
        threads: int = 4,
        heartbeat_interval: float = 5.0,
        idle_poll: float = 1.0,
        notifier: Notifier | None = None,
        prefetch: int | None = None,
    ) -> None:
        self.deps = deps
        self.notifier = notifier or Notifier()
        deps.wake = self.notifier.notify
        self.threads = threads
        self.claimer = Worker(deps, notifier=self.notifier)
        #: tasks claimed beyond the idle workers, so a worker that frees up finds one
        self.prefetch = max(threads, 28) if prefetch is None else prefetch
        #: the fewest tasks worth a claim while others still wait in the queue
        self.claim_batch = max(1, min(8, self.prefetch // 4))
        self.heartbeat_interval = heartbeat_interval
        self.idle_poll = idle_poll
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._queue: queue.SimpleQueue[tdb.NodeTask | None] = queue.SimpleQueue()
        self._room = threading.Condition()
        self._free = threads  # workers not running a step
        self._queued = 0  # claimed tasks not started yet
        self._unreleased: list[tdb.NodeTask] = []  # failed steps' tasks not handed back yet
        #: (traversal id, node key) of the tasks claimed and not finished: the leases the
        #: heartbeat renews
        self._held: set[tuple[str, str]] = set()

    def start(self) -> None:
        with dbe.write(self.deps.db) as conn:
            edb.register_engine(
                conn,
                self.deps.engine_id,
                host=socket.gethostname(),
                pid=os.getpid(),
                now=self.deps.clock.now(),
            )
        for i in range(self.threads):
            self._spawn(f"kiln-worker-{i}", functools.partial(self._work, StepRunner(self.deps)))
        self._spawn("kiln-claimer", self._claim)
        self._spawn("kiln-heartbeat", self._heartbeat)

    def _spawn(self, name: str, target: Callable[[], None]) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _claim(self) -> None:
        while not self._stop.is_set():
            with self._room:
                room = self._free + self.prefetch - self._queued
                # While tasks are still queued, claim in batches: a claim costs a query
                # over the queue, and claiming one task per freed worker made claims the
                # database's largest cost.
                if room <= 0 or (self._queued > 0 and room < self.claim_batch):
                    self._room.wait(self.idle_poll)
                    continue
            try:
                tasks = self.claimer.claim(limit=room)
            except Exception:  # the database may be away for a moment
                log.exception("claiming tasks failed")
                tasks = []
            if tasks:
                with self._room:
                    self._queued += len(tasks)
                    self._held.update((t.traversal_id, t.node_key) for t in tasks)
                for task in tasks:
                    self._queue.put(task)
                continue
            self.notifier.wait(self._idle_wait(self.claimer))

    def _work(self, runner: StepRunner) -> None:
        while True:
            task = self._queue.get()
            if task is None:
                return
            with self._room:
                self._queued -= 1
                self._free -= 1
            try:
                ready = runner.run(task)
            except Exception:  # a bug, or the database cut in mid-step: not the worker's end
                log.exception("engine step failed; its task goes back to the queue")
                self._hand_back(task)
                ready = []
            finally:
                with self._room:
                    self._free += 1
                    self._held.discard((task.traversal_id, task.node_key))
                    self._room.notify()
            if ready:  # successors are due now: claim them at once
                self.notifier.notify()

    def _hand_back(self, task: tdb.NodeTask) -> None:
        """Give a task whose step raised back to the queue, to run again from its stored
        phase as after a crash (sooner than its lease would expire). While the database
        is away, the heartbeat thread tries again, renewing the lease meanwhile."""
        now = self.deps.clock.now()
        try:
            with dbe.write(self.deps.db) as conn:
                tdb.requeue_task(
                    conn, task.lease, now=now, not_before=now + HAND_BACK_DELAY, retry=True
                )
        except FencedOut:
            return  # someone else has it now
        except Exception:
            log.warning("could not hand task %s back yet", task.node_key, exc_info=True)
            with self._room:
                self._unreleased.append(task)

    def _hand_back_unreleased(self) -> None:
        with self._room:
            pending, self._unreleased = self._unreleased, []
        for task in pending:
            self._hand_back(task)

    def _idle_wait(self, worker: Worker) -> float:
        """Sleep until the next poll is due, at most ``idle_poll`` (the bus is only a hint)."""
        try:
            due = worker.next_wake()
        except Exception:
            log.exception("could not read the next wake-up time")
            return self.idle_poll
        if due is None:
            return self.idle_poll
        wait = (due - self.deps.clock.now()).total_seconds()
        return min(max(wait, 0.0), self.idle_poll)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.heartbeat_interval):
            try:
                self._hand_back_unreleased()
                self._beat()
                sweep_once(self.deps)
            except Exception:  # the database may be away for a moment: beat again later
                log.exception("heartbeat or sweep failed")

    def _beat(self) -> None:
        now = self.deps.clock.now()
        try:
            with dbe.write(self.deps.db) as conn:
                with self._room:
                    held = set(self._held)
                    held.update((t.traversal_id, t.node_key) for t in self._unreleased)
                edb.heartbeat(conn, self.deps.engine_id, now=now, lease=self.deps.lease, held=held)
        except NotFound:
            # An operator removed this engine's row (kiln manage service clean) while it
            # was away: its leases may have been taken over, which fencing handles; it
            # only needs to be listed again.
            log.warning("engine %s was not registered; registering again", self.deps.engine_id)
            with dbe.write(self.deps.db) as conn:
                edb.register_engine(
                    conn, self.deps.engine_id, host=socket.gethostname(), pid=os.getpid(), now=now
                )

    def wake(self) -> None:
        self.notifier.notify()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self.notifier.notify()
        with self._room:
            self._room.notify_all()
        for _ in range(self.threads):
            self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout)
