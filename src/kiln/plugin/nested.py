"""What a plugin that owns a nested stack may ask of the engine.

Template resources, ResourceGroup, ResourceChain and OS::Heat::Stack all run a
child stack. They reach it through ``ctx.client("stacks")``, which the engine
binds to the parent stack and resource: the child is created with its parent
link, nested depth and root, and the parent's task polls its state without
ever waiting on it. A child inherits its parent's environment and files
(reference template-language 7.3): ``parent_environment`` and ``parent_files``
give them to a plugin that builds its child template itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class ChildState:
    """Where a child stack is: its action, status and reason."""

    action: str
    status: str
    reason: str = ""

    @property
    def in_progress(self) -> bool:
        return self.status == "IN_PROGRESS"


class NestedStacks(Protocol):
    """The child stacks of one resource."""

    def create(
        self,
        *,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        parameters: Mapping[str, Any],
        timeout_mins: int | None = None,
    ) -> str:
        """Start creating the child stack; returns its id."""
        ...

    def update(
        self,
        stack_id: str,
        *,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        parameters: Mapping[str, Any],
    ) -> None:
        """Start converging the child to a new template or parameters."""
        ...

    def delete(self, stack_id: str) -> None:
        """Start deleting the child (nothing happens if it is already gone)."""
        ...

    def state(self, stack_id: str) -> ChildState | None:
        """The child's state, or None when it no longer exists."""
        ...

    def outputs(self, stack_id: str) -> dict[str, Any]:
        """The child's outputs, resolved now (an output that fails reads as None)."""
        ...

    def resource(self, stack_id: str, name: str) -> tuple[Any, dict[str, Any]] | None:
        """A child resource's reference id and attributes, or None."""
        ...

    def resource_attribute(self, stack_id: str, name: str, attribute: str) -> Any:
        """Attribute ``attribute`` of child resource ``name``, computed now (None if absent).

        Unlike ``resource``, whose attributes are those the child's template reads,
        any attribute name may be asked for (a group's aggregated attributes).
        """
        ...

    def resource_attributes(self, stack_id: str, names: Sequence[str], attribute: str) -> list[Any]:
        """``resource_attribute`` of each of ``names``, in order, read in one go (a
        group's attribute over all its members)."""
        ...

    def parent_environment(self) -> dict[str, Any]:
        """The environment a child of this resource inherits (no ``parameters``).

        The parent's ``resource_registry`` (its per-resource section narrowed to
        this resource), ``parameter_defaults`` and ``event_sinks``.
        """
        ...

    def parent_files(self) -> dict[str, Any]:
        """The parent stack's ``files`` map, which a child shares."""
        ...


class ChildWait(float):
    """A ``poll_after`` that waits on the resource's child stack (its physical id): the
    engine polls again as soon as the child finishes; the seconds are only the safety
    net (a child failed by the sweeper)."""


CHILD_POLL_SECONDS = ChildWait(5.0)


def wait_for_child(stacks: NestedStacks, cookie: Any, action: str) -> bool:
    """Poll a child: True once ``action`` completed, False while it runs; raise if it failed.

    ``cookie`` is the owning resource's cookie, ``{"stack": <child id>}``.
    """
    from kiln.plugin.resource import ResourceFailure

    stack_id = cookie.get("stack") if isinstance(cookie, Mapping) else None
    if not stack_id:
        return True
    state = stacks.state(stack_id)
    if state is None:
        if action == "DELETE":
            return True
        raise ResourceFailure(f"The nested stack {stack_id} is gone")
    if state.in_progress:
        return False
    if state.status == "COMPLETE":
        # Another action's completion: the requested one has not started yet.
        return state.action == action
    raise ResourceFailure(f"Nested stack {action} failed: {state.reason}")
