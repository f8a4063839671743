"""A generic directed acyclic graph of dependencies, and the orders it defines.

An edge ``requirer -> required`` says that *requirer* depends on *required*: the
required node is created first and deleted last. Nodes are any hashable values;
the graph remembers the order nodes and edges were added, and every answer that
is a sequence follows that order, so equal call sequences give equal results
whatever the hash seed. Every algorithm is iterative (no recursion limit) and
linear in nodes plus edges, except :meth:`Graph.transitive_reduction`. Cycles
are reported as ``CircularDependencyException`` naming one cycle.
Imports: kiln.core and the stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Generic, TypeVar

from kiln.core.errors import CircularDependencyException

N = TypeVar("N", bound=Hashable)

Label = Callable[[N], str]


class Graph(Generic[N]):
    """Nodes and ``requirer -> required`` edges; self-loops and cycles can be stored."""

    __slots__ = ("_required_by", "_requires")

    def __init__(self) -> None:
        # dicts with None values are insertion-ordered sets; plain sets would make
        # iteration order depend on the hash seed.
        self._requires: dict[N, dict[N, None]] = {}
        self._required_by: dict[N, dict[N, None]] = {}

    # -- building ----------------------------------------------------------

    def add_node(self, node: N) -> None:
        """Add ``node`` (no effect if it is already there)."""
        if node not in self._requires:
            self._requires[node] = {}
            self._required_by[node] = {}

    def add_edge(self, requirer: N, required: N) -> None:
        """Record that ``requirer`` depends on ``required``; adds missing nodes, requirer first."""
        self.add_node(requirer)
        self.add_node(required)
        self._requires[requirer][required] = None
        self._required_by[required][requirer] = None

    def copy(self) -> Graph[N]:
        """An independent graph with the same nodes and edges, in the same order."""
        new: Graph[N] = Graph()
        new._requires = {n: dict(deps) for n, deps in self._requires.items()}
        new._required_by = {n: dict(deps) for n, deps in self._required_by.items()}
        return new

    # -- looking -----------------------------------------------------------

    def nodes(self) -> list[N]:
        """All nodes, in insertion order."""
        return list(self._requires)

    def edges(self) -> list[tuple[N, N]]:
        """All ``(requirer, required)`` pairs, grouped by requirer in insertion order."""
        return [(n, dep) for n, deps in self._requires.items() for dep in deps]

    def requires(self, node: N) -> set[N]:
        """The direct dependencies of ``node``; KeyError if it is not in the graph."""
        return set(self._requires[node])

    def required_by(self, node: N) -> set[N]:
        """The nodes that depend directly on ``node``; KeyError if it is not in the graph."""
        return set(self._required_by[node])

    def leaves(self) -> list[N]:
        """Nodes that require nothing (can be created first), in insertion order."""
        return [n for n, deps in self._requires.items() if not deps]

    def roots(self) -> list[N]:
        """Nodes nothing requires (can be deleted first), in insertion order."""
        return [n for n, users in self._required_by.items() if not users]

    def transitive_requires(self, node: N) -> set[N]:
        """Everything ``node`` depends on, directly or not (itself only through a cycle)."""
        return self._reach(node, self._requires)

    def transitive_required_by(self, node: N) -> set[N]:
        """Everything that depends on ``node``, directly or not (itself only through a cycle)."""
        return self._reach(node, self._required_by)

    def __contains__(self, node: object) -> bool:
        return node in self._requires

    def __len__(self) -> int:
        return len(self._requires)

    def __iter__(self) -> Iterator[N]:
        return iter(self._requires)

    def __repr__(self) -> str:
        edges = sum(len(deps) for deps in self._requires.values())
        return f"<Graph: {len(self._requires)} nodes, {edges} edges>"

    # -- orders ------------------------------------------------------------

    def find_cycle(self) -> list[N] | None:
        """One cycle as ``[a, b, ..., a]`` (each node requires the next), or None.

        The cycle is the first one a depth-first walk in insertion order meets,
        rotated to start at its earliest-inserted node; a self-loop is ``[a, a]``.
        """
        return self._walk()[1]

    def topological_order(self, *, label: Label[N] = str) -> list[N]:
        """Every node after all its requirements (creation order).

        Nodes come in insertion order, except that a node's not yet listed
        requirements are listed just before it (recursively, in the order its
        edges were added). Raises CircularDependencyException naming a cycle,
        each node written with ``label``.
        """
        order, cycle = self._walk()
        if cycle is not None:
            raise cycle_error(cycle, label)
        return order

    def reverse_topological_order(self, *, label: Label[N] = str) -> list[N]:
        """Every node before all its requirements (deletion order): creation order reversed."""
        order = self.topological_order(label=label)
        order.reverse()
        return order

    def levels(self, *, label: Label[N] = str) -> list[list[N]]:
        """Waves that can each run in parallel once the waves before them are done.

        A node goes in the earliest wave after all its requirements (wave 0 holds
        the leaves); each wave lists its nodes in insertion order. Raises
        CircularDependencyException when the graph has a cycle.
        """
        depth: dict[N, int] = {}
        for node in self.topological_order(label=label):
            deps = self._requires[node]
            depth[node] = 1 + max(depth[d] for d in deps) if deps else 0
        waves: list[list[N]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
        for node in self._requires:
            waves[depth[node]].append(node)
        return waves

    # -- derived graphs ----------------------------------------------------

    def subgraph(self, nodes: Iterable[N]) -> Graph[N]:
        """The given nodes and the edges between them, in this graph's order.

        Raises KeyError for a node that is not in this graph.
        """
        keep = set(nodes)
        for node in keep:
            if node not in self._requires:
                raise KeyError(node)
        sub: Graph[N] = Graph()
        for node, deps in self._requires.items():
            if node in keep:
                sub._requires[node] = {d: None for d in deps if d in keep}
                sub._required_by[node] = {u: None for u in self._required_by[node] if u in keep}
        return sub

    def transitive_reduction(self, *, label: Label[N] = str) -> Graph[N]:
        """The same nodes with only the edges no longer path implies.

        The result has the same reachability and the fewest edges (unique for a
        DAG). Cost is O(V*E/64) word operations in the worst case, using bit sets
        of transitive requirements that are freed once every user has read them.
        Raises CircularDependencyException when the graph has a cycle.
        """
        order = self.topological_order(label=label)
        position = {node: i for i, node in enumerate(order)}
        reach: dict[N, int] = {}  # bit i set = order[i] is a transitive requirement
        pending = {node: len(users) for node, users in self._required_by.items()}
        kept: dict[N, list[N]] = {}
        for node in order:
            deps = self._requires[node]
            # bits reachable through some direct dependency, at least one step down
            below = 0
            for dep in deps:
                below |= reach[dep]
            kept[node] = [dep for dep in deps if not (below >> position[dep]) & 1]
            mine = below
            for dep in deps:
                mine |= 1 << position[dep]
                pending[dep] -= 1
                if not pending[dep]:
                    del reach[dep]
            if pending[node]:
                reach[node] = mine
        reduced: Graph[N] = Graph()
        for node in self._requires:
            reduced.add_node(node)
        for node in self._requires:
            for dep in kept[node]:
                reduced.add_edge(node, dep)
        return reduced

    # -- internals ---------------------------------------------------------

    def _walk(self) -> tuple[list[N], list[N] | None]:
        """Depth-first over requirements: (post-order so far, first cycle met or None)."""
        requires = self._requires
        order: list[N] = []
        done: set[N] = set()
        # the current path from the walk's start, with each node's place on it and
        # an iterator over the requirements of that node still to visit
        path: list[N] = []
        on_path: dict[N, int] = {}
        pending: list[Iterator[N]] = []
        for start in requires:
            if start in done:
                continue
            path.append(start)
            on_path[start] = 0
            pending.append(iter(requires[start]))
            while pending:
                for dep in pending[-1]:
                    if dep in on_path:
                        return order, self._rotate(path[on_path[dep] :])
                    if dep not in done:
                        on_path[dep] = len(path)
                        path.append(dep)
                        pending.append(iter(requires[dep]))
                        break
                else:
                    node = path.pop()
                    pending.pop()
                    del on_path[node]
                    done.add(node)
                    order.append(node)
        return order, None

    def _rotate(self, ring: list[N]) -> list[N]:
        """Close the cycle ``ring`` (without its repeated end) at its earliest-inserted node."""
        index = {node: i for i, node in enumerate(self._requires)}
        first = min(range(len(ring)), key=lambda i: index[ring[i]])
        ring = ring[first:] + ring[:first]
        ring.append(ring[0])
        return ring

    def _reach(self, node: N, step: dict[N, dict[N, None]]) -> set[N]:
        seen: set[N] = set()
        todo = list(step[node])
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(step[current])
        return seen


def cycle_error(cycle: list[N], label: Label[N] = str) -> CircularDependencyException:
    """The error for a cycle ``[a, b, a]``: 'Circular Dependency Found: a -> b -> a'."""
    return CircularDependencyException(
        "Circular Dependency Found: " + " -> ".join(label(node) for node in cycle)
    )
