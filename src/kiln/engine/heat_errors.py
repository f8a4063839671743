"""Heat's generic ``NotFound`` and ``Invalid`` errors, for the catalogue and
software-config calls whose Heat messages are not "The X (y) could not be found."
"""

from __future__ import annotations

from kiln.core.errors import KilnError, UserError


class HeatNotFound(KilnError):
    """Heat's ``NotFound`` (404): a template version, software config or deployment."""

    http_status = 404

    @property
    def kind(self) -> str:
        return "NotFound"


class Invalid(UserError):
    """Heat's ``Invalid`` (400): data that refers to nothing or is out of range."""
