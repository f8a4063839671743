"""Traversal plans, built by small named steps (convergence.md 6.2-6.4).

A plan is the node and edge list one traversal runs. Two kinds of node:

- ``c:<name>`` CONVERGE: bring resource ``name`` to its definition in the new
  template (create, update in place, replace, or nothing);
- ``d:<row id>`` CLEANUP: delete a stored row that the new template does not
  keep (a removed resource, an earlier replaced row), or, for a current row,
  delete it only if this traversal replaced it.

Edges ``(a, b)`` mean b waits for a. A row is cleaned up only after its own
replacement converged, after every current resource that used it converged
(so it has moved to the new row), and after every row that required it was
cleaned up. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from kiln.db.resources import NewResource, Resource
from kiln.db.traversals import NodeSpec

CONVERGE = "CONVERGE"
CLEANUP = "CLEANUP"
ACTION = "ACTION"  # SUSPEND, RESUME or CHECK of one resource (the traversal's action)


def converge_key(name: str) -> str:
    return f"c:{name}"


def cleanup_key(resource_id: str) -> str:
    return f"d:{resource_id}"


def action_key(name: str) -> str:
    return f"a:{name}"


@dataclass
class Plan:
    """Nodes, edges, and the INIT rows to insert for resources new to the stack."""

    nodes: list[NodeSpec] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    new_rows: list[NewResource] = field(default_factory=list)
    _keys: set[str] = field(default_factory=set)
    _edges: set[tuple[str, str]] = field(default_factory=set)

    def add_node(self, spec: NodeSpec) -> None:
        if spec.node_key not in self._keys:
            self._keys.add(spec.node_key)
            self.nodes.append(spec)

    def add_edge(self, before: str, after: str) -> None:
        edge = (before, after)
        if before != after and edge not in self._edges and {before, after} <= self._keys:
            self._edges.add(edge)
            self.edges.append(edge)


@dataclass(frozen=True)
class PlanInput:
    """What a plan is built from."""

    stack_id: str
    root_stack_id: str
    raw_template_id: str
    requires: Mapping[str, Iterable[str]]  # enabled resource name -> names it requires
    types: Mapping[str, str]  # enabled resource name -> type
    stored: list[Resource]
    new_id: Callable[[], str]


def current_rows(stored: Iterable[Resource]) -> dict[str, Resource]:
    """The row each name is represented by: not replaced, not deleted.

    When an unfinished replacement left two such rows, the replacing one wins
    (creation times can be equal under a virtual clock), else the newest.
    """
    live = [
        r
        for r in stored
        if r.replaced_by is None and not (r.action == "DELETE" and r.status == "COMPLETE")
    ]
    being_replaced = {r.replaces for r in live if r.replaces is not None}
    out: dict[str, Resource] = {}
    for row in sorted(live, key=lambda r: (r.id not in being_replaced, r.created_at, r.id)):
        out[row.name] = row
    return out


# -- steps ---------------------------------------------------------------------------
def add_converge_nodes(plan: Plan, given: PlanInput) -> None:
    current = current_rows(given.stored)
    for name in given.requires:
        row = current.get(name)
        if row is None:
            new = NewResource(
                id=given.new_id(),
                stack_id=given.stack_id,
                root_stack_id=given.root_stack_id,
                name=name,
                type=given.types[name],
                raw_template_id=given.raw_template_id,
            )
            plan.new_rows.append(new)
            row_id = new.id
        else:
            row_id = row.id
        plan.add_node(NodeSpec(converge_key(name), name, CONVERGE, row_id, priority=1))


def add_converge_edges(plan: Plan, given: PlanInput) -> None:
    for name, requires in given.requires.items():
        for dep in sorted(requires):
            plan.add_edge(converge_key(dep), converge_key(name))


def add_cleanup_nodes(plan: Plan, given: PlanInput) -> None:
    # Cleanup first when both are ready (quota friendliness): lower priority value.
    for row in given.stored:
        if row.action == "DELETE" and row.status == "COMPLETE" and row.replaced_by is None:
            continue
        plan.add_node(NodeSpec(cleanup_key(row.id), row.name, CLEANUP, row.id, priority=0))


def add_cleanup_edges(plan: Plan, given: PlanInput) -> None:
    current = current_rows(given.stored)
    users: dict[str, list[str]] = {}
    for name, row in current.items():
        if name in given.requires:
            for required in row.requires:
                users.setdefault(required, []).append(name)
    for row in given.stored:
        key = cleanup_key(row.id)
        if row.name in given.requires:
            plan.add_edge(converge_key(row.name), key)
        for user in users.get(row.id, []):
            plan.add_edge(converge_key(user), key)
        for required in row.requires:
            plan.add_edge(key, cleanup_key(required))


CONVERGE_STEPS = (add_converge_nodes, add_converge_edges, add_cleanup_nodes, add_cleanup_edges)
DELETE_STEPS = (add_cleanup_nodes, add_cleanup_edges)


def build_plan(given: PlanInput, steps: Iterable[Callable[[Plan, PlanInput], None]]) -> Plan:
    plan = Plan()
    for step in steps:
        step(plan, given)
    return plan


def add_action_nodes(plan: Plan, given: PlanInput) -> None:
    current = current_rows(given.stored)
    for name in given.requires:
        row = current.get(name)
        if row is not None:
            plan.add_node(NodeSpec(action_key(name), name, ACTION, row.id))


def add_action_edges(plan: Plan, given: PlanInput) -> None:
    """Dependencies first (resume, check)."""
    for name, requires in given.requires.items():
        for dep in sorted(requires):
            plan.add_edge(action_key(dep), action_key(name))


def add_reverse_action_edges(plan: Plan, given: PlanInput) -> None:
    """Dependents first (suspend)."""
    for name, requires in given.requires.items():
        for dep in sorted(requires):
            plan.add_edge(action_key(name), action_key(dep))


ACTION_STEPS = {
    "SUSPEND": (add_action_nodes, add_reverse_action_edges),
    "RESUME": (add_action_nodes, add_action_edges),
    "CHECK": (add_action_nodes, add_action_edges),
    "SNAPSHOT": (add_action_nodes, add_action_edges),
}
