"""Fetching a ``template_url`` (heat-api.md 2.1.1): http(s) only, bounded in time and size.

Any failure is the caller's 400 "Could not retrieve template: <why>", as in Heat.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlsplit

from kiln.api.faults import HTTPError, bad_request

SCHEMES = ("http", "https")


def fetch_template(url: str, *, timeout: float, max_size: int) -> str:
    """The text at ``url``; at most ``max_size`` bytes are read."""
    if not isinstance(url, str):
        raise _failed(f"Invalid URL {url!r}")
    scheme = urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise _failed(f"Invalid URL scheme {scheme}")
    try:
        request = urllib.request.Request(url, headers={"Accept": "*/*"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            data: bytes = answer.read(max_size + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise _failed(f"Failed to retrieve template from {url}: {_reason(exc)}") from None
    if len(data) > max_size:
        raise _failed(f"Template exceeds maximum allowed size ({max_size} bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _failed(f"Template at {url} is not UTF-8 text") from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"{exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return str(exc) or type(exc).__name__


def _failed(why: str) -> HTTPError:
    return bad_request(f"Could not retrieve template: {why}")
