"""Identity errors, rendered as Keystone's ``{"error": {"code", "title", "message"}}``."""

from __future__ import annotations

from typing import ClassVar

from kiln.core.errors import KilnError


class IdentityError(KilnError):
    """Base of the identity service's errors; ``title`` is Keystone's reason phrase."""

    title: ClassVar[str] = "Internal Server Error"

    def body(self) -> dict[str, object]:
        return {"error": {"code": self.http_status, "title": self.title, "message": self.message}}


class ValidationError(IdentityError):
    """The request is malformed (bad JSON, missing or wrongly typed fields)."""

    http_status = 400
    title = "Bad Request"


class Unauthorized(IdentityError):
    """Bad credentials, or a token that is unknown, expired or revoked."""

    http_status = 401
    title = "Unauthorized"


class Forbidden(IdentityError):
    """Authenticated, but the token's roles do not allow the action."""

    http_status = 403
    title = "Forbidden"


class NotFound(IdentityError):
    """No object with that id."""

    http_status = 404
    title = "Not Found"


class Conflict(IdentityError):
    """A duplicate name (or id)."""

    http_status = 409
    title = "Conflict"
