"""Build plain Python data and a tree of positions from libyaml's event stream.

:class:`EventBuilder` pulls events from a ``CParser`` and assembles dicts, lists
and scalars with an explicit stack, so deep nesting costs no Python recursion,
recording where every mapping key and list item starts. Scalars are typed by
:mod:`kiln.template.yaml_typing`; merge keys, ``!!set``, ``!!omap`` and
``!!pairs`` are handled here. The nesting depth and the node count after alias
expansion are bounded while building (aliases become shared references, but
each one counts the full size of what it refers to). Every failure is raised as
:class:`YamlProblem`. Imports: PyYAML (events only), kiln.template.source_map,
kiln.template.yaml_typing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from kiln.template.source_map import MarkChildren, MarkNode
from kiln.template.yaml_typing import (
    MAP,
    MERGE,
    RESOLVERS,
    SEQ,
    SET,
    STR,
    TagError,
    container_tag,
    resolve,
    scalar_value,
    wrong_node,
)

if TYPE_CHECKING:
    from yaml._yaml import CParser

MAX_DEPTH = 100
"""Containers may nest at most this deep (real templates stay below ~20)."""

MAX_NODES = 1_000_000
"""Bound on scalars plus containers after expanding aliases.

An alias-free document of the default maximum size (512 KiB) cannot reach it,
since every node takes at least one character; a template of 1000 resources has
a few tens of thousands. Only alias bombs do.
"""

TOO_DEEP = f"nesting depth exceeds maximum allowed depth ({MAX_DEPTH})"
_MERGE_KEY = object()  # a `<<` key: merge the value's entries into this mapping
_IN_PROGRESS = object()  # an anchor whose node is still open (alias would be recursive)


class YamlProblem(Exception):
    """What went wrong, where (0-based line/column, if known) and at which data path."""

    def __init__(
        self,
        problem: str,
        line: int | None = None,
        column: int | None = None,
        *,
        context: str | None = None,
        context_line: int | None = None,
        context_column: int | None = None,
        path: tuple[str | int, ...] = (),
        limit: bool = False,
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column
        self.context = context
        self.context_line = context_line
        self.context_column = context_column
        self.path = path
        self.limit = limit  # a size limit was hit, rather than a syntax/typing error


class _Frame:
    """An open mapping or sequence."""

    __slots__ = (
        "anchor",
        "column",
        "is_map",
        "items",
        "key",
        "key_mark",
        "line",
        "marks",
        "merged",
        "merged_marks",
        "start_count",
        "tag",
    )

    def __init__(
        self, is_map: bool, tag: str, anchor: str | None, line: int, column: int, count: int
    ) -> None:
        self.is_map = is_map
        self.tag = tag
        self.anchor = anchor
        self.line = line
        self.column = column
        self.start_count = count
        self.items: Any = {} if is_map else []
        self.marks: Any = {} if is_map else []
        self.key: Any = _IN_PROGRESS  # _IN_PROGRESS here means "expecting a key"
        self.key_mark: MarkNode = (0, 0, None)  # where the pending key is
        self.merged: dict[Any, Any] | None = None
        self.merged_marks: dict[Any, MarkNode] | None = None


class EventBuilder:
    """One pass over the event stream of one document."""

    def __init__(self, parser: CParser) -> None:
        self.parser = parser
        self.stack: list[_Frame] = []
        self.anchors: dict[str, Any] = {}  # name -> (data, children, size) or _IN_PROGRESS
        self.count = 0
        self.root: Any = None
        self.root_mark: MarkNode | None = None

    def run(self) -> tuple[Any, MarkNode | None]:
        # The hot loop: untagged scalars in mappings and sequences are handled
        # inline (with a local node count); everything rarer goes through the
        # helper methods, which keep self.count.
        get_event = self.parser.get_event
        stack = self.stack
        resolvers = RESOLVERS
        expect_key, merge_key = _IN_PROGRESS, _MERGE_KEY
        top: _Frame | None = None
        typed_cache: dict[str, Any] = {}
        count = 0
        documents = 0
        while True:
            event: Any = get_event()
            cls = type(event)
            if cls is ScalarEvent:
                value: str = event.value
                if event.tag is not None:
                    data: Any = self.scalar_data(event)
                elif not event.implicit[0] or (value and value[0] not in resolvers):
                    data = value
                else:
                    # Keys repeat a lot (name, type, properties...): type each
                    # short plain text once. Results are immutable, so shared.
                    data = typed_cache.get(value, expect_key)
                    if data is expect_key:
                        data = self.scalar_data(event)
                        if len(value) <= 64 and data is not merge_key:
                            typed_cache[value] = data
                count += 1
                if event.anchor is not None:
                    self.anchors[event.anchor] = (data, None, 1)
                if top is None:
                    mark = event.start_mark
                    self.add(data, mark.line, mark.column, None)
                elif top.is_map:
                    key = top.key
                    if key is expect_key:
                        mark = event.start_mark
                        top.key, top.key_mark = data, (mark.line, mark.column, None)
                    elif key is merge_key:
                        mark = event.start_mark
                        self.add(data, mark.line, mark.column, None)  # raises: not a mapping
                    else:
                        top.key = expect_key
                        top.items[key] = data
                        top.marks[key] = top.key_mark
                else:
                    mark = event.start_mark
                    top.items.append(data)
                    top.marks.append((mark.line, mark.column, None))
                continue
            if cls is MappingStartEvent or cls is SequenceStartEvent:
                is_map = cls is MappingStartEvent
                if event.tag is None and event.anchor is None and len(stack) < MAX_DEPTH:
                    mark = event.start_mark
                    tag = MAP if is_map else SEQ
                    top = _Frame(is_map, tag, None, mark.line, mark.column, count)
                    stack.append(top)
                    count += 1
                    continue
                self.count = count
                top = self.open(event, is_map)
                count = self.count
                continue
            if cls is MappingEndEvent or cls is SequenceEndEvent:
                frame = stack.pop()
                top = stack[-1] if stack else None
                if (
                    top is not None
                    and frame.anchor is None
                    and frame.merged is None
                    and (frame.tag is MAP or frame.tag is SEQ)
                ):
                    if not top.is_map:
                        top.items.append(frame.items)
                        top.marks.append((frame.line, frame.column, frame.marks))
                        continue
                    key = top.key
                    if key is not expect_key and key is not merge_key:
                        top.key = expect_key
                        top.items[key] = frame.items
                        key_mark = top.key_mark
                        top.marks[key] = (key_mark[0], key_mark[1], frame.marks)
                        continue
                self.count = count
                self.close(frame)
                count = self.count
                continue
            self.count = count
            if cls is AliasEvent:
                self.alias(event)
            elif cls is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.problem(
                        "expected a single document in the stream, but found another document",
                        event.start_mark,
                    )
            elif cls is StreamEndEvent:
                self.counted(0, event.start_mark)
                return self.root, self.root_mark
            # StreamStart and DocumentEnd carry nothing to build.
            count = self.count

    def problem(self, message: str, mark: Any, *, limit: bool = False) -> YamlProblem:
        return YamlProblem(message, mark.line, mark.column, path=self.path(), limit=limit)

    def path(self) -> tuple[str | int, ...]:
        """The data path of the node being built (best effort, for error messages)."""
        out: list[str | int] = []
        for frame in self.stack:
            if frame.is_map:
                if frame.key is _IN_PROGRESS or frame.key is _MERGE_KEY:
                    break
                key = frame.key
                out.append(key if isinstance(key, str | int) else str(key))
            else:
                out.append(len(frame.items))
        return tuple(out)

    def counted(self, size: int, mark: Any) -> None:
        # Scalars only add one each (bounded by the text size), so the limit
        # is checked where counts can jump: containers, aliases, the end.
        self.count += size
        if self.count > MAX_NODES:
            raise self.problem(
                f"node count after expanding aliases exceeds maximum allowed count ({MAX_NODES})",
                mark,
                limit=True,
            )

    def scalar_data(self, event: Any) -> Any:
        """The data of a scalar that has a tag or may be typed implicitly."""
        tag: str | None = event.tag
        if tag is None or tag == "!":  # untagged or non-specific: typed implicitly if plain
            tag = resolve(event.value) if event.implicit[0] else STR
        if tag == MERGE and self.stack:
            top = self.stack[-1]
            if top.is_map and top.key is _IN_PROGRESS:
                return _MERGE_KEY  # in key position: see merge()
        try:
            return scalar_value(tag, event.value)
        except TagError as exc:
            raise self.problem(str(exc), event.start_mark) from None

    def open(self, event: Any, is_map: bool) -> _Frame:
        mark = event.start_mark
        try:
            tag = container_tag(event.tag, is_map)
        except TagError as exc:
            raise self.problem(str(exc), mark) from None
        if len(self.stack) >= MAX_DEPTH:
            # No path: it would be a hundred segments long.
            raise YamlProblem(TOO_DEEP, mark.line, mark.column, limit=True)
        frame = _Frame(is_map, tag, event.anchor, mark.line, mark.column, self.count)
        self.counted(1, mark)
        if frame.anchor is not None:
            self.anchors[frame.anchor] = _IN_PROGRESS
        self.stack.append(frame)
        return frame

    def close(self, frame: _Frame) -> None:
        data, marks = frame.items, frame.marks
        if frame.is_map:
            if frame.key is not _IN_PROGRESS:  # cannot happen: libyaml pairs them
                raise YamlProblem("mapping ended after a key", frame.line, frame.column)
            if frame.merged is not None:
                assert frame.merged_marks is not None
                data = {**frame.merged, **data}
                marks = {**frame.merged_marks, **marks}
            if frame.tag == SET:
                data = dict.fromkeys(data)
        elif frame.tag != SEQ:
            data, marks = self.pairs(frame)
        size = self.count - frame.start_count
        if frame.anchor is not None:
            self.anchors[frame.anchor] = (data, marks, size)
        self.add(data, frame.line, frame.column, marks)

    def pairs(self, frame: _Frame) -> tuple[list[Any], list[MarkNode]]:
        """``!!omap``/``!!pairs``: one-entry mappings become [key, value] lists."""
        data: list[Any] = []
        marks: list[MarkNode] = []
        for item, mark in zip(frame.items, frame.marks):
            if not isinstance(item, dict) or len(item) != 1:
                found = f"{len(item)} items" if isinstance(item, dict) else type(item).__name__
                raise YamlProblem(
                    f"expected a mapping of length 1, but found {found}",
                    mark[0],
                    mark[1],
                    context="while constructing an ordered map",
                    context_line=frame.line,
                    context_column=frame.column,
                    path=self.path(),
                )
            ((key, value),) = item.items()
            key_mark = mark[2][key] if isinstance(mark[2], dict) else mark
            data.append([key, value])
            marks.append((mark[0], mark[1], [(key_mark[0], key_mark[1], None), key_mark]))
        return data, marks

    def alias(self, event: Any) -> None:
        mark = event.start_mark
        entry = self.anchors.get(event.anchor)
        if entry is None:
            raise self.problem(f"found undefined alias {event.anchor!r}", mark)
        if entry is _IN_PROGRESS:
            raise self.problem(f"found recursive alias {event.anchor!r}", mark)
        data, marks, size = entry
        if data is _MERGE_KEY:  # an anchored `<<` is a merge key only where a key goes
            top = self.stack[-1] if self.stack else None
            if top is None or not top.is_map or top.key is not _IN_PROGRESS:
                raise self.problem(wrong_node(MERGE, "scalar"), mark)
        self.counted(size, mark)
        # Shared, not copied: the size above bounds what a walk over it costs.
        self.add(data, mark.line, mark.column, marks)

    def add(self, data: Any, line: int, column: int, marks: MarkChildren) -> None:
        """Attach a finished node to the open container (or make it the root)."""
        if not self.stack:
            self.root, self.root_mark = data, (line, column, marks)
            return
        frame = self.stack[-1]
        if not frame.is_map:
            frame.items.append(data)
            frame.marks.append((line, column, marks))
        elif frame.key is _IN_PROGRESS:
            if isinstance(data, dict | list):
                raise YamlProblem(
                    "found unhashable key",
                    line,
                    column,
                    context="while constructing a mapping",
                    context_line=frame.line,
                    context_column=frame.column,
                    path=self.path(),
                )
            frame.key, frame.key_mark = data, (line, column, None)
        else:
            key = frame.key
            frame.key = _IN_PROGRESS
            if key is _MERGE_KEY:
                self.merge(frame, data, marks, line, column)
            else:
                frame.items[key] = data
                frame.marks[key] = (frame.key_mark[0], frame.key_mark[1], marks)

    def merge(self, frame: _Frame, data: Any, marks: Any, line: int, column: int) -> None:
        """``<<: mapping`` or ``<<: [mappings]`` (YAML 1.1 merge keys).

        An earlier merged mapping wins over a later one (also across several
        ``<<`` keys), and the mapping's own keys win over all merged ones.
        """
        if isinstance(data, dict):
            sources = [(data, marks)]
        elif isinstance(data, list):
            sources = []
            for item, mark in zip(data, marks):
                if not isinstance(item, dict):
                    raise self.merge_problem(frame, _kind_of(item), mark[0], mark[1])
                sources.append((item, mark[2]))
        else:
            raise self.merge_problem(frame, _kind_of(data), line, column, "or list of mappings ")
        if frame.merged is None:
            frame.merged, frame.merged_marks = {}, {}
        merged, merged_marks = frame.merged, frame.merged_marks
        assert merged_marks is not None
        for items, item_marks in sources:
            for key, value in items.items():
                if key not in merged:
                    merged[key] = value
                    if item_marks and key in item_marks:
                        merged_marks[key] = item_marks[key]

    def merge_problem(
        self, frame: _Frame, found: str, line: int, column: int, alt: str = ""
    ) -> YamlProblem:
        return YamlProblem(
            f"expected a mapping {alt}for merging, but found {found}",
            line,
            column,
            context="while constructing a mapping",
            context_line=frame.line,
            context_column=frame.column,
            path=self.path(),
        )


def _kind_of(data: Any) -> str:
    if isinstance(data, dict):
        return "mapping"
    return "sequence" if isinstance(data, list) else "scalar"
