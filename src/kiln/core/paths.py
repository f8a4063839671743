"""Template paths: where in a document something is.

A path is a tuple of segments: strings for mapping keys, integers for list
indexes. It renders the way Heat prints it, ``resources.web.properties.networks[0].port``.
Imports: stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass

PathSegment = str | int
Path = tuple[PathSegment, ...]


def render_path(path: Path) -> str:
    """Render a path as dotted keys with list indexes in brackets."""
    out: list[str] = []
    for seg in path:
        if isinstance(seg, int) and not isinstance(seg, bool):
            if out:
                out[-1] += f"[{seg}]"
            else:
                out.append(f"[{seg}]")
        else:
            out.append(str(seg))
    return ".".join(out)


@dataclass(frozen=True, slots=True)
class Location:
    """A position in a source file; line and column count from 1."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"
