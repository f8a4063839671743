"""Value types of the cloud API: a typed view over the service's JSON representation.

Every object a client returns is a :class:`Record` subclass holding the REST body of
the object (``raw``, what the ``show`` attribute returns) with typed properties for the
fields plugins read. Both adapters build records from the same REST shape, so a plugin
sees the same thing from the sandbox and from a real cloud. Imports: stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Record(Mapping[str, Any]):
    """One cloud object, as its service shows it."""

    raw: Mapping[str, Any]

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def name(self) -> str | None:
        return self.raw.get("name")

    @property
    def status(self) -> str | None:
        return self.raw.get("status")

    def show(self) -> dict[str, Any]:
        """A plain copy of the representation (the ``show`` attribute)."""
        return dict(self.raw)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)
