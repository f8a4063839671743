"""deletion_policy Snapshot: a snapshot is taken before the resource is deleted."""

from __future__ import annotations

import pathlib
from typing import Any, ClassVar

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.plugin import Resource, resource_type
from kiln.plugin.registry import PluginRegistry

#: what the fake cloud saw, in order
CALLS: list[str] = []


@resource_type("Test::Snapshotting")
class Snapshotting(Resource):
    """A type whose cloud objects can be snapshotted (a volume, say)."""

    supports_snapshot: ClassVar[bool] = True

    def handle_create(self) -> Any:
        self.ctx.set_physical_id(f"obj-{self.ctx.name}")
        return None

    def handle_snapshot(self) -> Any:
        CALLS.append(f"snapshot {self.ctx.physical_id}")
        return {"polls": 0}

    def check_snapshot_complete(self, cookie: Any) -> bool:
        cookie["polls"] += 1
        return bool(cookie["polls"] >= 2)  # takes one more poll, as a cloud would

    def handle_delete(self) -> Any:
        CALLS.append(f"delete {self.ctx.physical_id}")
        return None


TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  kept:
    type: Test::Snapshotting
    deletion_policy: Snapshot
  plain:
    type: Test::Snapshotting
"""


@pytest.fixture
def h(tmp_path: pathlib.Path) -> Harness:
    registry = PluginRegistry.discover()
    registry.register(Snapshotting)
    CALLS.clear()
    return make_harness(tmp_path, registry=registry)


def test_snapshot_then_delete_on_stack_delete(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    h.service.delete_stack(CALLER, sid)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE"), stack.status_reason
    assert CALLS.index("snapshot obj-kept") < CALLS.index("delete obj-kept")
    assert "snapshot obj-plain" not in CALLS
    assert "delete obj-plain" in CALLS


def test_snapshot_policy_applies_when_an_update_removes_the_resource(h: Harness) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    h.update(sid, TEMPLATE.split("  plain:")[0])
    h.run()
    assert h.service.get_stack(sid).status == "COMPLETE"
    assert CALLS == ["delete obj-plain"]  # removed without a snapshot; "kept" stays
    CALLS.clear()
    h.update(sid, "heat_template_version: 2018-08-31\nresources: {}\n")
    h.run()
    assert CALLS == ["snapshot obj-kept", "delete obj-kept"]
