"""Fuzz tests for kiln.template.loader: any input loads or fails with a KilnError.

Properties: for arbitrary text, arbitrary bytes and random YAML full of anchors,
aliases and tags, ``load_document`` returns a Document of plain data or raises a
KilnError subclass (never anything else), and ``locate`` answers every path of
the result without raising. For tag-free documents written by PyYAML's dumper,
the data equals what PyYAML's safe loader (timestamps as text) reads, and each
key is located where its text is.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.core.errors import KilnError, RequestLimitExceeded
from kiln.core.paths import Location
from kiln.template.loader import MAX_NODES, Document, load_document

FUZZ = settings(
    max_examples=250, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
FEWER = settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

PLAIN_TYPES = (str, int, float, bool, type(None), bytes)


def walk(data: Any, limit: int = 400) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, value) pairs breadth first, at most ``limit`` (aliases may share subtrees)."""
    queue: deque[tuple[tuple[Any, ...], Any]] = deque([((), data)])
    seen = 0
    while queue and seen < limit:
        path, value = queue.popleft()
        seen += 1
        yield path, value
        if isinstance(value, dict):
            queue.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            queue.extend(((*path, i), v) for i, v in enumerate(value))


def check(text: str | bytes) -> Document | None:
    """Load; assert the outcome is a plain Document or a well-formed KilnError."""
    try:
        doc = load_document(text, "fuzz.yaml")
    except KilnError as error:
        assert error.message
        assert isinstance(error.path, tuple)
        if error.location is not None:
            assert error.location.file == "fuzz.yaml"
            assert error.location.line >= 1 and error.location.column >= 1
        return None
    assert isinstance(doc, Document)
    for path, value in walk(doc.data):
        assert isinstance(value, (dict, list, *PLAIN_TYPES)), type(value)
        if isinstance(value, dict):
            assert all(isinstance(k, PLAIN_TYPES) for k in value)
        located = doc.source.locate(path)
        assert located is None or isinstance(located, Location)
    return doc


# --- Arbitrary input ------------------------------------------------------------------

YAML_ALPHABET = list("[]{}:,-?&*!|>'\"#%@`~=<. \n\t\r") + list("ayn01_xe+")


@FUZZ
@given(st.text(max_size=400))
def test_arbitrary_text(text: str) -> None:
    check(text)


@FUZZ
@given(st.text(alphabet=st.sampled_from(YAML_ALPHABET), max_size=200))
def test_yaml_punctuation_soup(text: str) -> None:
    check(text)


@FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes(raw: bytes) -> None:
    check(raw)


# --- Random YAML with anchors, aliases and tags -----------------------------------------

SCALARS = [
    "yes", "No", "on", "OFF", "y", "017", "0x1F", "1_000", "0o17", "0b11", "1:20", "~", "null",
    "", ".inf", "-.Inf", ".nan", "2016-10-14", "2001-12-14 21:59:43",
    "2001-12-14t21:59:43.10-05:00", "'quoted'", '"dq \\u00e9"', "plain text",
    "-1.5e+3", "1e5", "aGVsbG8=", "'%x%'",
    "9" * 50, "a#b", "|\n  block\n", "'multi\n  line'",
]  # fmt: skip
TAGS = [
    "!!str", "!!int", "!!float", "!!bool", "!!null", "!!binary", "!!timestamp", "!", "!!map",
    "!!seq", "!!set", "!!omap", "!!pairs", "!!merge", "!!value", "!Ref", "!!python/object",
    "!<tag:yaml.org,2002:str>",
]  # fmt: skip
NAMES = ["a", "b", "c", "d"]


NOTHING = st.none()


def rarely(
    strategy: st.SearchStrategy[Any], one_in: int, otherwise: st.SearchStrategy[Any] = NOTHING
) -> st.SearchStrategy[Any]:
    """``strategy`` about once in ``one_in`` draws, else ``otherwise``."""
    return st.integers(1, one_in).flatmap(lambda n: strategy if n == 1 else otherwise)


decoration = st.tuples(rarely(st.sampled_from(TAGS), 40), rarely(st.sampled_from(NAMES), 3))
scalar_text = rarely(st.sampled_from(["<<", "="]), 30, otherwise=st.sampled_from(SCALARS))
scalar = st.tuples(st.just("scalar"), scalar_text, decoration)
alias = st.tuples(st.just("alias"), st.sampled_from(NAMES), st.just((None, None)))
leaf = st.one_of(scalar, scalar, scalar, alias)


def containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = rarely(children, 10, otherwise=scalar)  # mostly hashable
    return st.one_of(
        st.tuples(st.just("seq"), st.lists(children, max_size=4), decoration),
        st.tuples(st.just("map"), st.lists(st.tuples(keys, children), max_size=4), decoration),
    )


nodes = st.recursive(leaf, containers, max_leaves=25)
entries = st.lists(st.tuples(rarely(nodes, 10, otherwise=scalar), nodes), max_size=5)


def render(node: Any) -> str:
    """Flow-style YAML for a generated node."""
    kind, body, (tag, anchor) = node
    prefix = "".join(f"{part} " for part in (tag, f"&{anchor}" if anchor else None) if part)
    if kind == "alias":
        return f"*{body} "  # the space keeps a following ':' apart from the alias name
    if kind == "scalar":
        text = body if "\n" not in body else json.dumps(body)  # keep flow style valid
        return prefix + (text or ("" if prefix else "''"))  # a bare empty node is invalid in flow
    if kind == "seq":
        return prefix + "[" + ", ".join(render(c) for c in body) + "]"
    return prefix + "{" + ", ".join(f"? {render(k)} : {render(v)}" for k, v in body) + "}"


# Anchors every alias can refer to, so that not every document fails on "undefined alias".
DEFINITIONS = "[&a yes, &b [1, {k: v}], &c {x: [y]}, &d 2016-10-14]"


def render_document(style: str, entries: list[tuple[Any, Any]], predefine: bool) -> str:
    if style == "block-map":
        text = "".join(f"{render(k)} : {render(v)}\n" for k, v in entries)
        return f"_defs: {DEFINITIONS}\n{text}" if predefine else text
    if style == "block-seq":
        text = "".join(f"- {render(v)}\n" for _, v in entries)
        return f"- {DEFINITIONS}\n{text}" if predefine else text
    text = render(("map", entries, (None, None)))
    return f"{{_defs: {DEFINITIONS}, {text[1:]}" if predefine and entries else text


@FUZZ
@given(st.sampled_from(["block-map", "block-seq", "flow"]), entries, st.booleans())
def test_random_yaml_with_anchors_aliases_and_tags(
    style: str, entries: list[Any], predefine: bool
) -> None:
    check(render_document(style, entries, predefine))


@FEWER
@given(st.integers(min_value=2, max_value=12), st.integers(min_value=2, max_value=40))
def test_alias_expansion_is_counted_exactly(levels: int, width: int) -> None:
    lines = ["l0: &l0 [x]"]
    sizes = [2]  # nodes of each level once expanded: the list and its items
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
        sizes.append(1 + width * sizes[-1])
    total = 1 + levels + sum(sizes)  # the top mapping, its keys, its values
    text = "\n".join(lines)
    if total <= MAX_NODES:
        assert len(load_document(text).data) == levels
    else:
        with pytest.raises(RequestLimitExceeded, match="node count after expanding aliases"):
            load_document(text)


# --- Agreement with PyYAML and positions of keys ----------------------------------------


class HeatLikeLoader(yaml.SafeLoader):
    """PyYAML's safe loader with timestamps kept as text, as reference 8.2 describes."""


def _as_text(loader: HeatLikeLoader, node: yaml.Node) -> Any:
    assert isinstance(node, yaml.ScalarNode)
    return loader.construct_scalar(node)


yaml.add_constructor("tag:yaml.org,2002:timestamp", _as_text, Loader=HeatLikeLoader)

keys = st.text(alphabet="abcxyz_-0123456789.:", min_size=1, max_size=8)
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False),
    st.text(st.characters(codec="utf-8"), max_size=12),
    st.sampled_from(["yes", "off", "017", "2016-10-14", "~", "1:20", "<<", "0x1F", "1_0"]),
)
documents = st.dictionaries(
    keys,
    st.recursive(
        values,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=20,
    ),
    max_size=6,
)


def assert_keys_located(doc: Document, text: str, *, quoted: bool) -> None:
    lines = text.splitlines()
    for path, _ in walk(doc.data):
        if not path or not isinstance(path[-1], str):
            continue
        where = doc.source.locate(path)
        assert where is not None, path
        key = json.dumps(path[-1]) if quoted else path[-1]
        line = lines[where.line - 1]
        found = line[where.column - 1 :]
        # PyYAML's dumper may quote a key that would otherwise read as another type.
        assert found.startswith((key, f"'{key}'", f'"{key}"')), (path, line)


@FEWER
@given(documents, st.booleans())
def test_agrees_with_pyyaml_and_locates_keys(data: dict[str, Any], flow: bool) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True, width=10**6)
    expected = yaml.load(text, Loader=HeatLikeLoader)
    doc = load_document(text, "fuzz.yaml")
    assert doc.data == (expected if expected is not None else {})
    assert_keys_located(doc, text, quoted=False)


@FEWER
@given(documents, st.sampled_from([None, 2]))
def test_json_agrees_with_json_loads_and_locates_keys(
    data: dict[str, Any], indent: int | None
) -> None:
    text = json.dumps(data, indent=indent)
    doc = load_document(text, "fuzz.json")
    assert doc.data == json.loads(text)
    assert_keys_located(doc, text, quoted=True)
