"""Dependency graphs as text: a line-per-node listing and Graphviz DOT.

Both renderings are stable: equal graphs (built by the same calls) give equal
strings, so they can be compared against golden files. ``label`` turns a node
into the name that is printed.
Imports: kiln.graph.dag, kiln.core and the stdlib only.
"""

from __future__ import annotations

from kiln.graph.dag import Graph, Label, N


def render_text(graph: Graph[N], label: Label[N] = str, *, reduce: bool = False) -> str:
    """One line per node in topological order: ``name`` or ``name <- dep1, dep2``.

    Requirements are listed in topological order too. With ``reduce`` only the
    edges of the transitive reduction are shown. Every line ends with a newline;
    an empty graph gives "". Raises CircularDependencyException on a cycle.
    """
    if reduce:
        graph = graph.transitive_reduction(label=label)
    order = graph.topological_order(label=label)
    position = {node: i for i, node in enumerate(order)}
    lines = []
    for node in order:
        deps = sorted(graph.requires(node), key=position.__getitem__)
        name = label(node)
        lines.append(f"{name} <- {', '.join(label(d) for d in deps)}" if deps else name)
    return "".join(line + "\n" for line in lines)


def render_dot(
    graph: Graph[N], label: Label[N] = str, name: str = "kiln", *, reduce: bool = False
) -> str:
    """A Graphviz ``digraph`` with one edge from each requirer to what it requires.

    Every node is declared (so isolated ones show), in insertion order, then the
    edges grouped by requirer. Node IDs are the quoted labels, so labels must be
    unique (ValueError otherwise). Works on cyclic graphs unless ``reduce`` is set.
    """
    if reduce:
        graph = graph.transitive_reduction(label=label)
    ids: dict[N, str] = {}
    owner: dict[str, N] = {}
    for node in graph:
        text = label(node)
        if text in owner:
            raise ValueError(f"two nodes have the label {text!r}: {owner[text]!r} and {node!r}")
        owner[text] = node
        ids[node] = dot_quote(text)
    lines = [f"digraph {dot_quote(name)} {{"]
    lines.extend(f"  {ids[node]};" for node in graph)
    lines.extend(f"  {ids[requirer]} -> {ids[required]};" for requirer, required in graph.edges())
    lines.append("}")
    return "".join(line + "\n" for line in lines)


def dot_quote(text: str) -> str:
    """``text`` as a DOT double-quoted ID that Graphviz reads back (and labels) unchanged."""
    # Backslashes are doubled so that Graphviz's label escapes (\\n, \\l, \\N, ...) and
    # the backslash-newline line continuation never apply to user text.
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
        .replace("\r", "\\n")
    )
    return f'"{escaped}"'
