"""Checks of request fields Nova validates by schema: names, metadata, user data, tags.

Each returns the cleaned value or raises BadRequest (Forbidden for the metadata count,
which Nova reports as a quota).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Forbidden

MAX_METADATA_ITEMS = 128
MAX_USER_DATA = 65535
MAX_TAGS = 50
MAX_TAG_LENGTH = 60


def invalid(field: str, detail: str = "") -> BadRequest:
    suffix = f": {detail}" if detail else "."
    return BadRequest(f"Invalid input for field/attribute {field}{suffix}", kind="badRequest")


def name(value: Any, field: str = "name") -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 255:
        raise invalid(field, "must be a non-empty string of at most 255 characters")
    return value


def description(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or len(value) > 255):
        raise invalid("description", "must be a string of at most 255 characters or null")
    return value


def metadata(value: Any, field: str = "metadata") -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise invalid(field, "must be an object")
    if len(value) > MAX_METADATA_ITEMS:
        raise Forbidden(
            f"Quota exceeded for metadata_items: maximum is {MAX_METADATA_ITEMS}",
            kind="forbidden",
        )
    for key, item in value.items():
        if not isinstance(key, str) or not 1 <= len(key) <= 255:
            raise invalid(field, f"key {key!r} must be 1 to 255 characters")
        if not isinstance(item, str) or len(item) > 255:
            raise invalid(field, f"value of {key!r} must be a string of at most 255 characters")
    return dict(value)


def user_data(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_USER_DATA:
        raise invalid("user_data", f"must be base64 text of at most {MAX_USER_DATA} bytes")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("User data needs to be valid base 64.", kind="badRequest") from None
    return value


def tag(value: Any) -> str:
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_TAG_LENGTH
        or "," in value
        or "/" in value
    ):
        raise invalid("tags", f"{value!r}: 1 to {MAX_TAG_LENGTH} characters, no ',' or '/'")
    return value


def tags(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise invalid("tags", "must be a list")
    if len(value) > MAX_TAGS:
        raise invalid("tags", f"at most {MAX_TAGS} tags")
    return list(dict.fromkeys(tag(item) for item in value))


def ip_address(value: Any, field: str, version: int | None = None) -> str:
    try:
        address = ipaddress.ip_address(value)
    except (TypeError, ValueError):
        raise invalid(field, f"{value!r} is not an IP address") from None
    if version is not None and address.version != version:
        raise invalid(field, f"{value!r} is not an IPv{version} address")
    return str(address)


def boolean(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on", "t", "y"):
        return True
    if text in ("false", "0", "no", "off", "f", "n", ""):
        return False
    raise invalid(field, "must be a boolean")


def reference_id(value: Any, field: str) -> str:
    """An id, or the last segment of a link to it (``flavorRef``/``imageRef`` may be URLs)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise invalid(field)
    return value.rstrip("/").rsplit("/", 1)[-1] if "/" in value else value
