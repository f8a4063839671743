"""Tests for kiln.graph.render: golden text and DOT output, DOT quoting."""

from __future__ import annotations

import pytest

from kiln.core.errors import CircularDependencyException
from kiln.graph import Graph, dot_quote, render_dot, render_text


def stack_graph() -> Graph[str]:
    """A small stack: lb -> web -> (db, net), db -> net, plus a shortcut web -> net."""
    g: Graph[str] = Graph()
    for name in ("lb", "web", "db", "net", "logs"):
        g.add_node(name)
    g.add_edge("lb", "web")
    g.add_edge("web", "net")
    g.add_edge("web", "db")
    g.add_edge("db", "net")
    return g


def test_render_text_golden() -> None:
    assert render_text(stack_graph()) == ("net\ndb <- net\nweb <- net, db\nlb <- web\nlogs\n")


def test_render_text_reduced() -> None:
    assert render_text(stack_graph(), reduce=True) == (
        "net\ndb <- net\nweb <- db\nlb <- web\nlogs\n"
    )


def test_render_text_label() -> None:
    g: Graph[int] = Graph()
    g.add_edge(2, 1)
    g.add_edge(2, 0)
    assert render_text(g, label=lambda n: f"r{n}") == "r1\nr0\nr2 <- r1, r0\n"


def test_render_text_empty_and_cyclic() -> None:
    assert render_text(Graph[str]()) == ""
    g = stack_graph()
    g.add_edge("net", "lb")
    with pytest.raises(CircularDependencyException, match="lb -> web -> net -> lb"):
        render_text(g)


def test_render_dot_golden() -> None:
    assert render_dot(stack_graph()) == (
        'digraph "kiln" {\n'
        '  "lb";\n'
        '  "web";\n'
        '  "db";\n'
        '  "net";\n'
        '  "logs";\n'
        '  "lb" -> "web";\n'
        '  "web" -> "net";\n'
        '  "web" -> "db";\n'
        '  "db" -> "net";\n'
        "}\n"
    )


def test_render_dot_reduced_and_named() -> None:
    out = render_dot(stack_graph(), name="my stack", reduce=True)
    assert out.startswith('digraph "my stack" {\n')
    assert '"web" -> "net"' not in out
    assert '  "web" -> "db";\n' in out


def test_render_dot_cyclic_graph_is_allowed() -> None:
    g: Graph[str] = Graph()
    g.add_edge("a", "a")
    assert render_dot(g) == 'digraph "kiln" {\n  "a";\n  "a" -> "a";\n}\n'
    with pytest.raises(CircularDependencyException):
        render_dot(g, reduce=True)


def test_render_dot_escapes_names() -> None:
    g: Graph[str] = Graph()
    g.add_edge('say "hi"', "back\\slash")
    out = render_dot(g, name='x" -> "y')
    assert out == (
        'digraph "x\\" -> \\"y" {\n'
        '  "say \\"hi\\"";\n'
        '  "back\\\\slash";\n'
        '  "say \\"hi\\"" -> "back\\\\slash";\n'
        "}\n"
    )


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ("", '""'),
        ('a"b', '"a\\"b"'),
        ("a\\b", '"a\\\\b"'),
        ("a\\", '"a\\\\"'),  # a trailing backslash must not escape the closing quote
        ('\\"', '"\\\\\\""'),
        ("two\nlines", '"two\\nlines"'),
        ("dos\r\nline", '"dos\\nline"'),
        ("node; other", '"node; other"'),
        ("ünïcode", '"ünïcode"'),
    ],
)
def test_dot_quote(text: str, quoted: str) -> None:
    assert dot_quote(text) == quoted


def test_render_dot_rejects_duplicate_labels() -> None:
    g: Graph[tuple[str, bool]] = Graph()
    g.add_edge(("a", True), ("a", False))
    with pytest.raises(ValueError, match="two nodes have the label 'a'"):
        render_dot(g, label=lambda n: n[0])
    assert '"a/True" -> "a/False"' in render_dot(g, label=lambda n: f"{n[0]}/{n[1]}")
