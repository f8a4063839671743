"""Building an engine on a fresh database for tests (one process, virtual clock)."""

from __future__ import annotations

import itertools
import pathlib
import random
import uuid
from dataclasses import dataclass

from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.cloud.sandbox.identity.adapter import SandboxIdentity
from kiln.core.clock import VirtualClock
from kiln.db.engine import create_engine
from kiln.db.migrate import upgrade
from kiln.engine.cloud_constraints import register_cloud_constraints
from kiln.engine.service import Caller, StackRequest, StackService
from kiln.engine.steps import EngineDeps
from kiln.engine.worker import Worker
from kiln.plugin.registry import PluginRegistry
from kiln.schema.custom import CustomConstraints
from kiln.template.loader import load_template

REGISTRY = PluginRegistry.discover()
CALLER = Caller("project-1", "user-1")


@dataclass
class Harness:
    service: StackService
    worker: Worker
    clock: VirtualClock
    deps: EngineDeps

    def create(self, template: str, name: str = "s", **kw: object) -> str:
        request = StackRequest(name=name, template=load_template(template).data, **kw)  # type: ignore[arg-type]
        return self.service.create_stack(CALLER, request)

    def update(self, stack_id: str, template: str, **kw: object) -> None:
        stack = self.service.get_stack(stack_id)
        request = StackRequest(name=stack.name, template=load_template(template).data, **kw)  # type: ignore[arg-type]
        self.service.update_stack(CALLER, stack_id, request)

    def run(self) -> int:
        return self.worker.run_until_idle()

    def outputs(self, stack_id: str) -> dict[str, object]:
        return {k: v.value for k, v in self.service.outputs(stack_id).items()}


def make_harness(
    tmp_path: pathlib.Path, seed: int = 1, registry: PluginRegistry | None = None
) -> Harness:
    registry = registry or REGISTRY
    db = create_engine(f"sqlite:///{tmp_path / 'kiln.db'}")
    upgrade(db)
    clock = VirtualClock()
    counter = itertools.count()
    rng = random.Random(seed)
    deps = EngineDeps(
        db=db,
        registry=registry,
        custom=registry.custom_constraints(CustomConstraints.offline()),
        clock=clock,
        engine_id="engine-1",
        rng=rng,
        new_id=lambda: str(uuid.UUID(int=rng.getrandbits(128) ^ next(counter), version=4)),
    )
    return Harness(StackService(deps), Worker(deps), clock, deps)


def sandbox_harness(
    tmp_path: pathlib.Path, cloud: SandboxCloud, *, identity: SandboxIdentity | None = None
) -> Harness:
    """A harness whose engine acts on the in-process sandbox (with its Keystone's stack
    user domain when ``identity`` is given), cloud-backed constraints included."""
    harness = make_harness(tmp_path)
    harness.deps.cloud = SandboxConnector(cloud, identity=identity)
    register_cloud_constraints(harness.deps.custom)
    return harness
