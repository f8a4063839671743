"""What every identity route needs: the caller's token, its base URL, and JSON bodies."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import falcon

from kiln.cloud.sandbox.identity.catalog import CatalogEntry, render_catalog, with_identity
from kiln.cloud.sandbox.identity.errors import Forbidden, Unauthorized, ValidationError
from kiln.cloud.sandbox.identity.store import IdentityStore
from kiln.cloud.sandbox.identity.tokens import TokenInfo, TokenService

T = TypeVar("T")

MAX_BODY_BYTES = 1 << 20


@dataclass
class IdentityService:
    """The state the routes share."""

    store: IdentityStore
    tokens: TokenService
    catalog: Sequence[CatalogEntry]
    public_url: str | None = None

    def base_url(self, req: falcon.Request) -> str:
        """Where clients reach this service: the configured URL, else what the request used."""
        if self.public_url:
            return self.public_url.rstrip("/")
        return req.prefix.rstrip("/")

    def host(self, req: falcon.Request) -> str:
        """The host name clients use (an IPv6 address in brackets, ready for a URL)."""
        host = urlsplit(self.base_url(req)).hostname or req.host
        return f"[{host}]" if ":" in host else host

    def catalog_entries(self, req: falcon.Request) -> list[CatalogEntry]:
        return with_identity(self.catalog, self.base_url(req))

    def catalog_for(self, req: falcon.Request, project_id: str | None) -> list[dict[str, Any]]:
        """The catalog of a token scoped to ``project_id`` (or to none)."""
        return render_catalog(self.catalog_entries(req), host=self.host(req), project_id=project_id)

    def caller(self, req: falcon.Request) -> TokenInfo:
        """The request's own token (X-Auth-Token); 401 when absent or invalid."""
        token = req.get_header("X-Auth-Token")
        if not token:
            raise Unauthorized("The request you have made requires authentication.")
        return self.tokens.validate(token)

    def admin(self, req: falcon.Request) -> TokenInfo:
        """The caller, who must be a cloud admin (admin on a project); 403 otherwise."""
        caller = self.caller(req)
        if not caller.is_admin:
            raise Forbidden(FORBIDDEN)
        return caller

    def admin_or_self(self, req: falcon.Request, user_id: str) -> TokenInfo:
        """The caller, who must be the user, a cloud admin or an admin of the user's domain."""
        caller = self.caller(req)
        if not (caller.is_admin or caller.user.id == user_id):
            require_domain(caller, self._user_domain(caller, user_id))
        return caller

    def _user_domain(self, caller: TokenInfo, user_id: str) -> str:
        """The user's domain, looked up only for a domain-scoped caller (others get 403
        whether the user exists or not)."""
        if caller.domain is None:
            raise Forbidden(FORBIDDEN)
        return self.store.get_user(user_id).domain_id


FORBIDDEN = "You are not authorized to perform the requested action."


def require_domain(caller: TokenInfo, domain_id: str) -> None:
    """403 unless the caller may manage what lives in ``domain_id``."""
    if not caller.administers(domain_id):
        raise Forbidden(FORBIDDEN)


def read_json(req: falcon.Request) -> dict[str, Any]:
    """The request body as a JSON object; 400 when it is anything else."""
    if req.content_length is not None and req.content_length > MAX_BODY_BYTES:
        raise ValidationError("The request body is too large.")
    raw = req.bounded_stream.read(MAX_BODY_BYTES + 1)
    if len(raw) > MAX_BODY_BYTES:
        raise ValidationError("The request body is too large.")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ValidationError("The request body is not valid JSON.") from exc
    if not isinstance(body, dict):
        raise ValidationError("The request body must be a JSON object.")
    return body


def field(obj: object, key: str, kind: type[T] | tuple[type, ...], *, required: bool = True) -> Any:
    """``obj[key]``, checked to be of ``kind``; 400 when missing (if required) or mistyped."""
    if not isinstance(obj, dict):
        raise ValidationError(f"Expected an object holding {key!r}.")
    if key not in obj or obj[key] is None:
        if required:
            raise ValidationError(f"{key!r} is a required property.")
        return None
    value = obj[key]
    # bool is an int subclass: do not accept True where a number is wanted, and vice versa.
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise ValidationError(f"{key!r} has the wrong type.")
    if not isinstance(value, kinds):
        raise ValidationError(f"{key!r} has the wrong type.")
    return value


def name_field(obj: object, key: str = "name") -> str:
    """A required name: a non-empty string of at most 255 characters."""
    value: str = field(obj, key, str)
    if not value.strip() or len(value) > 255:
        raise ValidationError(f"{key!r} must be 1 to 255 characters long.")
    return value


def flag(req: falcon.Request, name: str) -> bool:
    """A query flag: present with no value, or a true-ish value."""
    if name not in req.params:
        return False
    value = req.params[name]
    if isinstance(value, list):
        value = value[-1]
    return str(value).lower() not in ("0", "false", "no", "off")


def query(req: falcon.Request, name: str) -> str | None:
    value = req.params.get(name)
    if isinstance(value, list):
        value = value[-1]
    return value
