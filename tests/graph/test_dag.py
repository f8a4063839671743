"""Tests for kiln.graph.dag: building, orders, cycles, levels and derived graphs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kiln.core.errors import CircularDependencyException, UserError
from kiln.graph import Graph, cycle_error


def graph_of(*edges: str, nodes: Iterable[str] = ()) -> Graph[str]:
    """Build a graph from ``"a>b"`` strings (a requires b), after the nodes in ``nodes``."""
    g: Graph[str] = Graph()
    for node in nodes:
        g.add_node(node)
    for edge in edges:
        requirer, required = edge.split(">")
        g.add_edge(requirer, required)
    return g


def assert_respects(g: Graph[str] | Graph[int], order: list[object]) -> None:
    position = {node: i for i, node in enumerate(order)}
    assert sorted(position.values()) == list(range(len(g)))
    assert set(position) == set(g.nodes())
    for requirer, required in g.edges():
        assert position[required] < position[requirer], (requirer, required)


# -- building and looking ---------------------------------------------------


def test_add_edge_adds_both_nodes_in_order() -> None:
    g = graph_of("b>a")
    assert g.nodes() == ["b", "a"]
    assert "a" in g and "b" in g and "c" not in g
    assert len(g) == 2
    assert list(g) == ["b", "a"]


def test_add_node_and_edge_are_idempotent() -> None:
    g = graph_of("a>b", "a>b", nodes="aab")
    assert g.nodes() == ["a", "b"]
    assert g.edges() == [("a", "b")]
    assert g.requires("a") == {"b"}
    assert g.required_by("b") == {"a"}
    assert g.requires("b") == set()


def test_requires_and_required_by_are_copies() -> None:
    g = graph_of("a>b")
    g.requires("a").add("zzz")
    g.required_by("b").add("zzz")
    assert g.requires("a") == {"b"}
    assert g.required_by("b") == {"a"}


def test_unknown_node_is_a_key_error() -> None:
    g = graph_of("a>b")
    with pytest.raises(KeyError):
        g.requires("x")
    with pytest.raises(KeyError):
        g.required_by("x")
    with pytest.raises(KeyError):
        g.subgraph(["a", "x"])


def test_leaves_and_roots() -> None:
    # d is isolated: both a leaf and a root
    g = graph_of("a>b", "a>c", "b>c", nodes="d")
    assert g.leaves() == ["d", "c"]
    assert g.roots() == ["d", "a"]


def test_transitive_requires_and_required_by() -> None:
    g = graph_of("a>b", "b>c", "x>c", "c>d")
    assert g.transitive_requires("a") == {"b", "c", "d"}
    assert g.transitive_requires("d") == set()
    assert g.transitive_required_by("c") == {"a", "b", "x"}
    cyclic = graph_of("a>b", "b>a")
    assert cyclic.transitive_requires("a") == {"a", "b"}


def test_copy_is_independent() -> None:
    g = graph_of("a>b")
    c = g.copy()
    c.add_edge("b", "z")
    assert g.nodes() == ["a", "b"]
    assert c.edges() == [("a", "b"), ("b", "z")]
    assert g.required_by("b") == {"a"}


def test_repr() -> None:
    assert repr(graph_of("a>b", "a>c")) == "<Graph: 3 nodes, 2 edges>"


# -- topological order ------------------------------------------------------


@pytest.mark.parametrize(
    ("edges", "nodes", "order"),
    [
        pytest.param([], "", [], id="empty"),
        pytest.param([], "cab", ["c", "a", "b"], id="no edges keeps insertion order"),
        pytest.param(["c>b", "b>a"], "", ["a", "b", "c"], id="chain"),
        pytest.param(["d>b", "d>c", "b>a", "c>a"], "abcd", ["a", "b", "c", "d"], id="diamond"),
        pytest.param(["d>b", "d>c", "b>a", "c>a"], "", ["a", "b", "c", "d"], id="diamond 2"),
        pytest.param(["a>b", "a>c", "a>d"], "", ["b", "c", "d", "a"], id="fan-out"),
        pytest.param(["b>a", "c>a", "d>a"], "", ["a", "b", "c", "d"], id="fan-in"),
        # requirements are pulled forward just before the node that needs them
        pytest.param(["b>z"], "abcz", ["a", "z", "b", "c"], id="pull forward"),
        pytest.param(["a>c", "a>b"], "abc", ["c", "b", "a"], id="edge order"),
    ],
)
def test_topological_order(edges: list[str], nodes: str, order: list[str]) -> None:
    g = graph_of(*edges, nodes=nodes)
    assert g.topological_order() == order
    assert g.reverse_topological_order() == order[::-1]
    assert_respects(g, list(g.topological_order()))


def test_order_is_deterministic_across_hash_seeds() -> None:
    # str hashes change with PYTHONHASHSEED; set iteration order would show here
    script = (
        "from kiln.graph import Graph, render_text\n"
        "g = Graph()\n"
        "names = [f'r{i}' for i in range(60)]\n"
        "for i, n in enumerate(names):\n"
        "    g.add_node(n)\n"
        "    for j in range(i):\n"
        "        if (i * 7 + j * 3) % 5 == 0:\n"
        "            g.add_edge(n, names[j])\n"
        "print(g.topological_order(), g.levels(), g.find_cycle())\n"
        "print(render_text(g.transitive_reduction()))\n"
        "g.add_edge('r3', 'r50')\n"
        "print(g.find_cycle())\n"
    )
    outputs = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert "r50" in outputs.pop()


def test_same_calls_give_same_order() -> None:
    def build() -> Graph[str]:
        return graph_of("web>net", "web>db", "db>net", "lb>web", "mon>web", nodes=["mon"])

    assert build().topological_order() == build().topological_order()
    assert build().topological_order() == ["net", "db", "web", "mon", "lb"]


# -- cycles -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "edges", "cycle"),
    [
        pytest.param("", ["a>a"], ["a", "a"], id="self-loop"),
        pytest.param("", ["a>b", "b>a"], ["a", "b", "a"], id="two"),
        pytest.param(
            "", ["a>b", "b>c", "c>d", "d>e", "e>a"], ["a", "b", "c", "d", "e", "a"], id="long"
        ),
        # the walk enters at c (from x); the cycle still starts at the earliest node, b
        pytest.param("xb", ["x>c", "b>c", "c>b"], ["b", "c", "b"], id="rotated to earliest"),
        pytest.param("", ["x>y", "y>b", "b>c", "c>b"], ["b", "c", "b"], id="tail excluded"),
        pytest.param("", ["a>b", "b>c", "c>b", "b>b"], ["b", "c", "b"], id="first met"),
    ],
)
def test_find_cycle(nodes: str, edges: list[str], cycle: list[str]) -> None:
    assert graph_of(*edges, nodes=nodes).find_cycle() == cycle


def test_find_cycle_on_acyclic_graphs_is_none() -> None:
    assert Graph[str]().find_cycle() is None
    assert graph_of("d>b", "d>c", "b>a", "c>a").find_cycle() is None


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        (["a>a"], "Circular Dependency Found: a -> a"),
        (["a>b", "b>a"], "Circular Dependency Found: a -> b -> a"),
        (["z>a", "a>b", "b>c", "c>a"], "Circular Dependency Found: a -> b -> c -> a"),
    ],
)
def test_cycle_raises_named_error(edges: list[str], message: str) -> None:
    g = graph_of(*edges)
    for method in (g.topological_order, g.reverse_topological_order, g.levels):
        with pytest.raises(CircularDependencyException) as info:
            method()
        assert info.value.message == message
        assert isinstance(info.value, UserError)
        assert info.value.kind == "CircularDependencyException"
    with pytest.raises(CircularDependencyException, match="Circular Dependency Found"):
        g.transitive_reduction()


def test_cycle_message_uses_label() -> None:
    g: Graph[tuple[str, bool]] = Graph()
    g.add_edge(("a", True), ("b", True))
    g.add_edge(("b", True), ("a", True))
    with pytest.raises(CircularDependencyException) as info:
        g.topological_order(label=lambda n: f"{n[0]}/{'update' if n[1] else 'cleanup'}")
    assert info.value.message == "Circular Dependency Found: a/update -> b/update -> a/update"


def test_cycle_error_helper() -> None:
    err = cycle_error([1, 2, 1], label=lambda n: f"#{n}")
    assert isinstance(err, CircularDependencyException)
    assert err.message == "Circular Dependency Found: #1 -> #2 -> #1"
    assert err.path == ()


# -- levels -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("edges", "nodes", "levels"),
    [
        pytest.param([], "", [], id="empty"),
        pytest.param([], "ba", [["b", "a"]], id="independent"),
        pytest.param(["c>b", "b>a"], "", [["a"], ["b"], ["c"]], id="chain"),
        pytest.param(["d>b", "d>c", "b>a", "c>a"], "", [["a"], ["b", "c"], ["d"]], id="diamond"),
        pytest.param(["a>b", "a>c", "a>d"], "", [["b", "c", "d"], ["a"]], id="fan-out"),
        # x needs only a, so it runs in wave 1 although c is in wave 2
        pytest.param(["c>b", "b>a", "x>a"], "", [["a"], ["b", "x"], ["c"]], id="earliest wave"),
        pytest.param(["c>a", "c>b", "b>a"], "", [["a"], ["b"], ["c"]], id="longest path"),
    ],
)
def test_levels(edges: list[str], nodes: str, levels: list[list[str]]) -> None:
    assert graph_of(*edges, nodes=nodes).levels() == levels


# -- derived graphs ---------------------------------------------------------


def test_subgraph_keeps_order_and_internal_edges() -> None:
    g = graph_of("d>b", "d>c", "b>a", "c>a", nodes="e")
    sub = g.subgraph(["d", "a", "b", "e"])
    assert sub.nodes() == ["e", "d", "b", "a"]
    assert sub.edges() == [("d", "b"), ("b", "a")]
    assert sub.required_by("a") == {"b"}
    assert sub.requires("d") == {"b"}
    assert g.subgraph([]).nodes() == []


def test_subgraph_of_cyclic_graph() -> None:
    g = graph_of("a>b", "b>a", "b>c")
    assert g.subgraph(["a", "b"]).find_cycle() == ["a", "b", "a"]
    assert g.subgraph(["b", "c"]).find_cycle() is None


@pytest.mark.parametrize(
    ("edges", "reduced"),
    [
        pytest.param(["c>b", "b>a", "c>a"], [("c", "b"), ("b", "a")], id="triangle"),
        pytest.param(
            ["d>b", "d>c", "b>a", "c>a", "d>a"],
            [("d", "b"), ("d", "c"), ("b", "a"), ("c", "a")],
            id="diamond with shortcut",
        ),
        pytest.param(
            ["e>d", "d>c", "c>b", "b>a", "e>a", "e>b", "d>a"],
            [("e", "d"), ("d", "c"), ("c", "b"), ("b", "a")],
            id="chain with shortcuts",
        ),
        pytest.param(["b>a", "c>a"], [("b", "a"), ("c", "a")], id="nothing to drop"),
    ],
)
def test_transitive_reduction(edges: list[str], reduced: list[tuple[str, str]]) -> None:
    g = graph_of(*edges, nodes="z")
    r = g.transitive_reduction()
    assert r.nodes() == g.nodes()
    assert sorted(r.edges()) == sorted(reduced)
    assert len(g.edges()) == len(edges)  # the original is untouched


# -- size -------------------------------------------------------------------

BIG = 100_000


def test_big_chain_needs_no_recursion() -> None:
    g: Graph[int] = Graph()
    for i in range(BIG - 1, 0, -1):  # inserted dependents first: the worst case for the walk
        g.add_edge(i, i - 1)
    assert g.find_cycle() is None
    order = g.topological_order()
    assert order == list(range(BIG))
    assert g.reverse_topological_order() == list(range(BIG - 1, -1, -1))
    levels = g.levels()
    assert len(levels) == BIG and levels[-1] == [BIG - 1]
    assert len(g.transitive_reduction().edges()) == BIG - 1
    assert len(g.transitive_required_by(0)) == BIG - 1

    g.add_edge(0, BIG - 1)
    cycle = g.find_cycle()
    assert cycle is not None
    assert len(cycle) == BIG + 1
    assert cycle[0] == cycle[-1] == BIG - 1
    with pytest.raises(CircularDependencyException):
        g.topological_order()


def test_big_fan_out() -> None:
    g: Graph[int] = Graph()
    for i in range(1, BIG):
        g.add_edge(0, i)
    assert g.topological_order()[-1] == 0
    assert g.levels() == [list(range(1, BIG)), [0]]


# -- properties -------------------------------------------------------------


@st.composite
def dags(draw: st.DrawFn, max_nodes: int = 25) -> Graph[int]:
    """A random DAG: edges only go from a higher to a lower number, inserted in random order."""
    n = draw(st.integers(0, max_nodes))
    names = draw(st.permutations(range(n)))
    pairs = [(i, j) for i in range(n) for j in range(i)]
    edges = draw(st.lists(st.sampled_from(pairs), max_size=60)) if pairs else []
    g: Graph[int] = Graph()
    for node in names:
        if draw(st.booleans()):
            g.add_node(node)
    for requirer, required in edges:
        g.add_edge(requirer, required)
    for node in names:
        g.add_node(node)
    return g


def reachable(g: Graph[int], start: int) -> set[int]:
    """Brute-force reachability, independent of the implementation."""
    seen: set[int] = set()
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for dep in g.requires(node):
            if dep not in seen:
                seen.add(dep)
                frontier.append(dep)
    return seen


@settings(max_examples=150, deadline=None)
@given(dags())
def test_property_orders_respect_every_edge(g: Graph[int]) -> None:
    assert g.find_cycle() is None
    order = g.topological_order()
    assert_respects(g, list(order))
    reverse = g.reverse_topological_order()
    assert reverse == order[::-1]
    position = {node: i for i, node in enumerate(reverse)}
    for requirer, required in g.edges():
        assert position[requirer] < position[required]


@settings(max_examples=150, deadline=None)
@given(dags())
def test_property_levels(g: Graph[int]) -> None:
    levels = g.levels()
    wave = {node: k for k, level in enumerate(levels) for node in level}
    assert sorted(wave) == sorted(g.nodes())
    assert sum(len(level) for level in levels) == len(g)
    for k, level in enumerate(levels):
        assert level, "no empty waves"
        assert level == [n for n in g.nodes() if wave[n] == k]  # insertion order inside a wave
        for node in level:
            assert all(wave[dep] < k for dep in g.requires(node))
            if k:  # as early as possible: something it needs ran in the wave before
                assert any(wave[dep] == k - 1 for dep in g.requires(node))


@settings(max_examples=100, deadline=None)
@given(dags(max_nodes=15))
def test_property_transitive_reduction(g: Graph[int]) -> None:
    r = g.transitive_reduction()
    assert r.nodes() == g.nodes()
    assert set(r.edges()) <= set(g.edges())
    for node in g:
        assert reachable(r, node) == reachable(g, node)
    for requirer, required in r.edges():
        # no edge of the reduction is implied by another path
        others = r.requires(requirer) - {required}
        assert not any(required in reachable(r, other) for other in others)


@settings(max_examples=100, deadline=None)
@given(dags(), st.data())
def test_property_subgraph(g: Graph[int], data: st.DataObject) -> None:
    keep = data.draw(st.sets(st.sampled_from(g.nodes()))) if len(g) else set()
    sub = g.subgraph(keep)
    assert sub.nodes() == [n for n in g.nodes() if n in keep]
    assert sub.edges() == [(a, b) for a, b in g.edges() if a in keep and b in keep]
    assert_respects(sub, list(sub.topological_order()))


@settings(max_examples=200, deadline=None)
@given(dags(), st.data())
def test_property_planted_cycle_is_found(g: Graph[int], data: st.DataObject) -> None:
    ring = data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=8, unique=True))
    for requirer, required in zip(ring, ring[1:] + ring[:1]):
        g.add_edge(requirer, required)
    cycle = g.find_cycle()
    assert cycle is not None
    assert len(cycle) >= 2 and cycle[0] == cycle[-1]
    assert len(set(cycle)) == len(cycle) - 1
    for requirer, required in pairwise(cycle):
        assert required in g.requires(requirer)
    with pytest.raises(CircularDependencyException) as info:
        g.topological_order()
    assert info.value.message == "Circular Dependency Found: " + " -> ".join(map(str, cycle))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=30),
)
def test_property_any_graph_is_ordered_or_has_a_cycle(edges: list[tuple[int, int]]) -> None:
    g: Graph[int] = Graph()
    for requirer, required in edges:
        g.add_edge(requirer, required)
    cycle = g.find_cycle()
    has_cycle = any(node in reachable(g, node) for node in g)
    assert (cycle is not None) == has_cycle
    if cycle is None:
        assert_respects(g, list(g.topological_order()))
    else:
        for requirer, required in pairwise(cycle):
            assert required in g.requires(requirer)
