"""Where each part of a loaded document is in its text.

A :class:`SourceMap` answers "which line and column does the path
``("resources", "web", "properties", "flavor")`` come from?". It holds a tree
of marks parallel to the loaded data: a mapping entry is marked at its key, a
list item at the item. For JSON input the tree is built only when first asked
for (by :func:`json_marks`, a small scanner over the already validated text),
so that the fast JSON path pays nothing unless an error needs a position.
Imports: kiln.core only.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from kiln.core.paths import Location, PathSegment

# (line, column, children), 0-based as the parser reports them. children is a
# dict (key -> MarkNode) for a mapping, a list of MarkNode for a sequence, and
# None for a scalar.
MarkNode = tuple[int, int, "MarkChildren"]
MarkChildren = dict[Any, MarkNode] | list[MarkNode] | None

MarkBuilder = Callable[[], MarkNode | None]


class SourceMap:
    """Line and column of every mapping key and list item of one document."""

    __slots__ = ("_builder", "_root", "name")

    def __init__(
        self,
        name: str,
        root: MarkNode | None = None,
        *,
        builder: MarkBuilder | None = None,
    ) -> None:
        self.name = name
        self._root = root
        # Set only while the tree has not been computed yet.
        self._builder = builder if root is None else None

    @staticmethod
    def empty(name: str) -> SourceMap:
        """A map that knows no positions: ``locate`` always returns None."""
        return SourceMap(name)

    @staticmethod
    def lazy(name: str, builder: MarkBuilder) -> SourceMap:
        """A map whose tree is computed by ``builder`` on the first ``locate``."""
        return SourceMap(name, builder=builder)

    def _tree(self) -> MarkNode | None:
        if self._builder is not None:
            builder, self._builder = self._builder, None
            try:
                self._root = builder()
            except Exception:
                # Positions are a convenience for error messages; never let
                # computing them turn into an error of its own.
                self._root = None
        return self._root

    def locate(self, path: tuple[PathSegment, ...]) -> Location | None:
        """The position of the deepest known prefix of ``path``; None if none is known."""
        try:
            node = self._tree()
            if node is None:
                return None
            for segment in path:
                child = _child(node[2], segment)
                if child is None:
                    break
                node = child
            return Location(self.name, node[0] + 1, node[1] + 1)
        except Exception:
            return None

    def __repr__(self) -> str:
        return f"SourceMap({self.name!r})"


def _child(children: MarkChildren, segment: Any) -> MarkNode | None:
    if isinstance(children, dict):
        return children.get(segment)
    if isinstance(children, list) and isinstance(segment, int) and 0 <= segment < len(children):
        item: MarkNode = children[segment]
        return item
    return None


# A JSON token: a string, a punctuation mark, or a bare literal (number, true,
# false, null, NaN, Infinity), each after optional whitespace.
_JSON_TOKEN = re.compile(
    r'[ \t\r\n]*(?:("(?:[^"\\]|\\.)*")|([{}\[\],:])|([^ \t\r\n{}\[\],:"]+))', re.S
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def json_marks(text: str) -> MarkNode | None:
    """The mark tree of a JSON text that ``json.loads`` accepted, built without recursion.

    Keys are decoded with ``json.loads`` so that they equal the loaded data's
    keys; a later duplicate key replaces the earlier one, as in the data.
    """
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]

    def position(offset: int) -> tuple[int, int]:
        line = bisect_right(starts, offset) - 1
        return line, offset - starts[line]

    # Open containers: [children, pending key, key position, own position].
    stack: list[list[Any]] = []
    root: MarkNode | None = None
    expect_key = False
    for match in _JSON_TOKEN.finditer(text):
        string, punct = match.group(1), match.group(2)
        if punct in (",", ":"):
            if punct == ",":
                expect_key = bool(stack) and isinstance(stack[-1][0], dict)
            continue
        line, column = position(match.start(match.lastindex or 0))  # where the token starts
        if punct in ("{", "["):
            stack.append([{} if punct == "{" else [], None, None, (line, column)])
            expect_key = punct == "{"
            continue
        if punct in ("}", "]"):
            children, _, _, (line, column) = stack.pop()
            node: MarkNode = (line, column, children)
        elif expect_key and string is not None:
            stack[-1][1], stack[-1][2] = json.loads(string), (line, column)
            expect_key = False
            continue
        else:
            node = (line, column, None)
        if not stack:
            root = node
            continue
        children, key, key_position, _ = stack[-1]
        if isinstance(children, dict):  # a mapping entry is marked at its key
            children[key] = (key_position[0], key_position[1], node[2])
        else:
            children.append(node)
    return root
