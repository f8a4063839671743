"""Load template and environment text into plain data with source positions.

Text is parsed as JSON first and, if that fails, as YAML 1.1 with PyYAML's safe
typing except that timestamps stay strings (reference 8.1, 8.2). The result is
a :class:`Document`: the data (dicts, lists, str, int, float, bool, None, and
bytes only for ``!!binary``), a :class:`SourceMap` giving the line and column of
every key and list item, and the document's name. Hostile input is bounded:
the text size (``max_size``, checked before parsing), nesting depth
(``MAX_DEPTH``) and the node count after alias expansion (``MAX_NODES``). For any
input, only :class:`~kiln.core.errors.KilnError` subclasses escape: parse
problems become ``TemplateParseError``/``EnvironmentParseError`` with a location,
exceeded limits ``RequestLimitExceeded``. Only the shape of the text is checked
here (mapping at the top, a version key present for templates); sections and
version values are checked elsewhere. Imports: kiln.core, kiln.template.source_map,
kiln.template.yaml_build, kiln.template.yaml_events, kiln.template.versions (key names only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from kiln.core.errors import (
    EnvironmentParseError,
    InternalError,
    KilnError,
    RequestLimitExceeded,
    TemplateParseError,
)
from kiln.core.paths import Location
from kiln.template.source_map import SourceMap, json_marks
from kiln.template.versions import VERSION_KEYS
from kiln.template.yaml_build import build_yaml, line_column
from kiln.template.yaml_events import MAX_DEPTH, MAX_NODES, YamlProblem

__all__ = [
    "DEFAULT_MAX_SIZE",
    "MAX_DEPTH",
    "MAX_NODES",
    "Document",
    "DocumentKind",
    "SourceMap",
    "depth_ok",
    "load_document",
    "load_environment",
    "load_template",
]

DEFAULT_MAX_SIZE = 524288
"""Heat's ``max_template_size``: the most characters a template text may have."""

DocumentKind = Literal["template", "environment"]

_UTF8_BOM = b"\xef\xbb\xbf"
# A UTF-8 character takes at most 4 bytes: longer byte input cannot fit the
# size limit, so it is rejected without decoding it.
_MAX_BYTES_PER_CHAR = 4


@dataclass(frozen=True)
class Document:
    """A parsed template or environment text."""

    data: Any
    source: SourceMap
    name: str


def load_document(
    text: str | bytes,
    name: str = "<template>",
    *,
    kind: DocumentKind = "template",
    max_size: int = DEFAULT_MAX_SIZE,
) -> Document:
    """Parse JSON-or-YAML text into a Document; an empty document is ``{}``.

    Raises only KilnError subclasses, whatever ``text`` holds.
    """
    try:
        return _load(text, name, kind, max_size)
    except KilnError:
        raise
    except Exception as exc:  # a bug here, not bad input; still never a bare exception
        raise InternalError(
            f"Unexpected failure loading {kind} {name}: {type(exc).__name__}: {exc}"
        ) from exc


def load_template(
    text: str | bytes, name: str = "<template>", *, max_size: int = DEFAULT_MAX_SIZE
) -> Document:
    """Load a template: a mapping holding at least one of the three version keys."""
    document = load_document(text, name, kind="template", max_size=max_size)
    _require_mapping(document, "template")
    if not any(key in document.data for key in VERSION_KEYS):
        # Only presence is checked here; the value is checked with the version.
        raise TemplateParseError(
            "Template format version not found.", location=document.source.locate(())
        )
    return document


def load_environment(text: str | bytes, name: str = "<environment>") -> Document:
    """Load an environment: a mapping (its sections are checked elsewhere)."""
    document = load_document(text, name, kind="environment")
    _require_mapping(document, "environment")
    return document


def _require_mapping(document: Document, kind: DocumentKind) -> None:
    if isinstance(document.data, dict):
        return
    where = document.source.locate(())
    if kind == "template":
        raise TemplateParseError(
            "The template is not a JSON object or YAML mapping.", location=where
        )
    raise EnvironmentParseError(
        "The environment is not a valid YAML mapping data type.", location=where
    )


def _load(text: str | bytes, name: str, kind: DocumentKind, max_size: int) -> Document:
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        if len(raw) > max_size * _MAX_BYTES_PER_CHAR:
            raise _too_big(kind, len(raw), max_size)
        text = _decode(raw, name, kind)
    if not isinstance(text, str):
        raise InternalError(f"cannot load {kind} {name} from {type(text).__name__}")
    # Heat measures the size as the length of the text.
    if len(text) > max_size:
        raise _too_big(kind, len(text), max_size)
    if text.startswith("\ufeff"):
        text = text[1:]

    data = _parse_json(text)
    if data is not _NOT_JSON:
        source = SourceMap.lazy(name, lambda: json_marks(text))
        return Document({} if data is None else data, source, name)
    try:
        data, marks = build_yaml(text)
    except YamlProblem as problem:
        raise _convert(problem, name, kind) from None
    return Document({} if data is None else data, SourceMap(name, marks), name)


_NOT_JSON = object()


def _parse_json(text: str) -> Any:
    """The JSON data of ``text``, or _NOT_JSON if it is not (shallow enough) JSON."""
    try:
        data = json.loads(text)
    except Exception:  # ValueError, RecursionError on deep nesting, ...
        return _NOT_JSON
    # Too deep: let the YAML path fail, since it knows the line and column.
    return data if depth_ok(data) else _NOT_JSON


def depth_ok(data: Any) -> bool:
    """True if containers nest at most MAX_DEPTH deep (checked without recursion).

    Also bounds data given as data rather than text; a cycle counts as too deep.
    """
    if not isinstance(data, dict | list):
        return True
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > MAX_DEPTH:
            return False
        children = node.values() if isinstance(node, dict) else node
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def _decode(raw: bytes, name: str, kind: DocumentKind) -> str:
    if raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = line_column(raw[: exc.start].decode("utf-8", "replace"))
        problem = YamlProblem(
            f"invalid UTF-8 byte 0x{raw[exc.start]:02x} (the text must be UTF-8)", line, column
        )
        raise _convert(problem, name, kind) from None


def _too_big(kind: DocumentKind, size: int, max_size: int) -> RequestLimitExceeded:
    return RequestLimitExceeded(
        f"Request limit exceeded: {kind.capitalize()} size ({size} bytes) exceeds "
        f"maximum allowed size ({max_size} bytes)."
    )


def _convert(problem: YamlProblem, name: str, kind: DocumentKind) -> KilnError:
    """The caller-facing error for a problem found while parsing."""
    location = None
    where = ""
    if problem.line is not None and problem.column is not None:
        location = Location(name, problem.line + 1, problem.column + 1)
        where = f" in line {location.line}, column {location.column}"
    if problem.limit:
        return RequestLimitExceeded(
            f"Request limit exceeded: {kind.capitalize()} {name}: {problem.problem}{where}.",
            path=problem.path,
            location=location,
        )
    context = ""
    if problem.context:
        context = problem.context
        if (
            problem.context_line is not None
            and problem.context_column is not None
            and ((problem.context_line, problem.context_column) != (problem.line, problem.column))
        ):
            context += f" in line {problem.context_line + 1}, column {problem.context_column + 1}"
        context += ": "
    message = f"Error parsing {kind} {name} {context}{problem.problem}{where}"
    error_class = TemplateParseError if kind == "template" else EnvironmentParseError
    return error_class(message, path=problem.path, location=location)
