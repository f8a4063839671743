"""The child-stack machinery shared by ResourceGroup, ResourceChain and OS::Heat::Stack."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.plugin import ResourceFailure
from kiln.plugin.nested import ChildState
from kiln.resources.heat._child_stack import member_order, wait_for_child
from kiln.testing.plugin_context import FakeNestedStacks


class OneState(FakeNestedStacks):
    """A stacks client whose only child is always in one state."""

    def __init__(self, found: ChildState | None) -> None:
        super().__init__()
        self.found = found

    def state(self, stack_id: str) -> ChildState | None:
        return self.found


@pytest.mark.parametrize(
    ("found", "action", "done"),
    [
        (ChildState("CREATE", "IN_PROGRESS"), "CREATE", False),
        (ChildState("CREATE", "COMPLETE"), "CREATE", True),
        (ChildState("CREATE", "COMPLETE"), "UPDATE", False),  # the update has not started
        (ChildState("UPDATE", "COMPLETE"), "UPDATE", True),
        (ChildState("DELETE", "IN_PROGRESS"), "DELETE", False),
        (None, "DELETE", True),
    ],
)
def test_waiting_for_a_child(found: ChildState | None, action: str, done: bool) -> None:
    assert wait_for_child(OneState(found), {"stack": "c"}, action) is done


@pytest.mark.parametrize(
    ("found", "action", "message"),
    [
        (ChildState("CREATE", "FAILED", "boom"), "CREATE", "Nested stack CREATE failed: boom"),
        (ChildState("UPDATE", "FAILED", "x"), "UPDATE", "Nested stack UPDATE failed: x"),
        (None, "UPDATE", "The nested stack c is gone"),
    ],
)
def test_a_failed_or_vanished_child_fails(
    found: ChildState | None, action: str, message: str
) -> None:
    with pytest.raises(ResourceFailure, match=message):
        wait_for_child(OneState(found), {"stack": "c"}, action)


@pytest.mark.parametrize("cookie", [None, {}, {"stack": None}, "x"])
def test_no_child_means_nothing_to_wait_for(cookie: Any) -> None:
    assert wait_for_child(OneState(ChildState("CREATE", "IN_PROGRESS")), cookie, "DELETE")


def test_members_sort_by_index_then_name() -> None:
    names = ["10", "2", "b", "0", "a", "²"]
    assert sorted(names, key=member_order) == ["0", "2", "10", "a", "b", "²"]
