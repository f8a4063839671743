"""The errors the persistence layer raises.

``NotFound`` (Heat's ``EntityNotFound``), ``StackExists``, ``ConcurrentUpdate`` (a
version compare-and-swap lost) and ``FencedOut`` (a task owner's write matched no
row because its lease was taken over). Imports: ``kiln.core`` only.
"""

from __future__ import annotations

from kiln.core.errors import KilnError


class NotFound(KilnError):
    """A row the caller named does not exist (or is soft-deleted where that counts)."""

    http_status = 404

    def __init__(self, entity: str, name: str) -> None:
        super().__init__(f"The {entity} ({name}) could not be found.")
        self.entity = entity
        self.name = name

    @property
    def kind(self) -> str:
        return "EntityNotFound"


class StackExists(KilnError):
    """A live stack of that name already exists in the project."""

    http_status = 409

    def __init__(self, stack_name: str) -> None:
        super().__init__(f"The Stack ({stack_name}) already exists.")
        self.stack_name = stack_name


class ConcurrentUpdate(KilnError):
    """A compare-and-swap on a row's ``version`` failed: someone else wrote it first."""

    http_status = 409

    def __init__(self, entity: str, name: str) -> None:
        super().__init__(f"Concurrent transaction for {entity} {name}")
        self.entity = entity
        self.name = name


class FencedOut(KilnError):
    """A fenced write by a task owner matched no row: its lease is no longer its own."""

    http_status = 409

    def __init__(self, what: str) -> None:
        super().__init__(f"Fenced out: {what}")
