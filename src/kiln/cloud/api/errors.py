"""The errors every cloud client raises, whatever the cloud behind it.

Plugins catch these, never a library's own exceptions: the openstacksdk adapter and
the sandbox's in-process adapter both translate into this tree (reference
resource-types.md 0.4: what counts as not-found, conflict and over-limit).

    CloudError                 status 500 unless set
    ├── BadRequest             400
    ├── Unauthorized           401
    ├── Forbidden              403
    ├── NotFound               404 (also a name lookup that matched nothing)
    ├── Conflict               409 (not OverQuota: Neutron's 409 OverQuota is OverLimit)
    ├── OverLimit              413, 429, quota exceeded
    └── Unavailable            5xx, connection failures and timeouts (transient)

``kind`` is the service's own error type when it names one (``NetworkNotFound``,
``IpAddressAlreadyAllocated``, ``itemNotFound``); ``service`` is the catalog type.
Imports: stdlib only.
"""

from __future__ import annotations

from typing import ClassVar


class CloudError(Exception):
    """A cloud API call failed."""

    status: ClassVar[int] = 500

    def __init__(
        self,
        message: str,
        *,
        kind: str | None = None,
        service: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.service = service
        self.http_status = status if status is not None else type(self).status

    def __str__(self) -> str:
        return self.message

    def describe(self) -> str:
        """Heat's way of showing a client error: ``<Class>: <message> (HTTP <status>)``."""
        return f"{type(self).__name__}: {self.message} (HTTP {self.http_status})"


class BadRequest(CloudError):
    status = 400


class Unauthorized(CloudError):
    status = 401


class Forbidden(CloudError):
    status = 403


class NotFound(CloudError):
    status = 404


class Conflict(CloudError):
    status = 409


class OverLimit(CloudError):
    status = 413


class Unavailable(CloudError):
    """Transient: the call may succeed if repeated (5xx, timeouts, connection errors)."""

    status = 503


class MultipleMatches(CloudError):
    """A lookup by name matched more than one object."""

    status = 409


_BY_STATUS: dict[int, type[CloudError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: OverLimit,
    429: OverLimit,
}


def error_for_status(
    status: int, message: str, *, kind: str | None = None, service: str | None = None
) -> CloudError:
    """The error class for an HTTP status (Neutron's 409 ``OverQuota`` is over-limit)."""
    if status == 409 and kind == "OverQuota":
        cls: type[CloudError] = OverLimit
    elif status >= 500:
        cls = Unavailable
    else:
        cls = _BY_STATUS.get(status, BadRequest if 400 <= status < 500 else CloudError)
    return cls(message, kind=kind, service=service, status=status)


def is_transient(error: BaseException) -> bool:
    """Worth repeating later: 5xx, timeouts, and 409s that pass (an LB still pending)."""
    return isinstance(error, Unavailable | Conflict) and not isinstance(error, MultipleMatches)
