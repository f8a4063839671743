"""Parse YAML text with libyaml into plain data and source positions.

:func:`build_yaml` runs libyaml's ``CParser`` and hands its events to
:class:`~kiln.template.yaml_events.EventBuilder`; every exception libyaml or
PyYAML may raise (syntax errors, unacceptable characters, text it cannot
encode) is translated into a :class:`~kiln.template.yaml_events.YamlProblem`
with a 0-based line and column, for the loader to turn into the caller's error
kind. Imports: PyYAML, kiln.template.source_map, kiln.template.yaml_events.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml._yaml import CParser

from kiln.template.source_map import MarkNode
from kiln.template.yaml_events import TOO_DEEP, EventBuilder, YamlProblem


def build_yaml(text: str) -> tuple[Any, MarkNode | None]:
    """Parse one YAML document; return its data (None if empty) and its mark tree."""
    try:
        parser = CParser(text)
    except UnicodeEncodeError as exc:  # lone surrogates cannot reach libyaml
        line, column = line_column(text[: exc.start])
        raise YamlProblem(
            f"unacceptable character #x{ord(text[exc.start]):04x}: surrogates are not allowed",
            line,
            column,
        ) from None
    try:
        return EventBuilder(parser).run()
    except YamlProblem:
        raise
    except yaml.MarkedYAMLError as exc:
        raise _from_marked(exc, text) from None
    except yaml.reader.ReaderError as exc:
        # The reader reports a byte offset into the UTF-8 encoding.
        prefix = text.encode("utf-8", "surrogatepass")[: exc.position]
        line, column = line_column(prefix.decode("utf-8", "replace"))
        raise YamlProblem(
            f"unacceptable character #x{exc.character:04x}: {exc.reason}", line, column
        ) from None
    except Exception as exc:  # anything else libyaml or PyYAML may throw
        raise YamlProblem(f"{type(exc).__name__}: {exc}") from None
    finally:
        parser.dispose()


_LINE_BREAK = re.compile("\r\n|[\n\r\x85\u2028\u2029]")


def line_column(prefix: str) -> tuple[int, int]:
    """0-based line and column just after ``prefix``, counting YAML's line breaks."""
    lines = _LINE_BREAK.split(prefix)
    return len(lines) - 1, len(lines[-1])


def _from_marked(exc: yaml.MarkedYAMLError, text: str) -> YamlProblem:
    mark, context_mark = exc.problem_mark, exc.context_mark
    problem = exc.problem or "invalid YAML"
    if mark and problem == "found character that cannot start any token":
        # libyaml does not say which character; PyYAML's own scanner does.
        lines = _LINE_BREAK.split(text, maxsplit=mark.line + 1)
        if mark.line < len(lines) and mark.column < len(lines[mark.line]):
            found = lines[mark.line][mark.column]
            problem = f"found character {found!r} that cannot start any token"
    if exc.problem and "maximum nesting depth" in exc.problem:
        # libyaml's own bound (1000) on flow nesting, met before ours when it
        # scans far ahead: report it as the same limit.
        return YamlProblem(
            TOO_DEEP, mark.line if mark else None, mark.column if mark else None, limit=True
        )
    return YamlProblem(
        problem,
        mark.line if mark else None,
        mark.column if mark else None,
        context=exc.context,
        context_line=context_mark.line if context_mark else None,
        context_column=context_mark.column if context_mark else None,
    )
