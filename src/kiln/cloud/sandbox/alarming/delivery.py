"""How a firing alarm reaches its action URLs (there is no telemetry: firing is explicit).

For each URL of the action list of the new state, :func:`notification_targets` says what
to do: POST to ``http(s)://`` URLs as they are; for ``trust+http(s)://`` strip ``trust+``
(and the ``<trust_id>:...@`` user info Aodh writes there) and add ``X-Auth-Token`` from a
token obtained with the trust; ``log://`` and ``test://`` are only logged and recorded;
Zaqar is not simulated. :func:`post_in_background` is the default delivery: a POST on
a daemon thread, failures logged and not retried (like Aodh's notifier).
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger(__name__)

Deliver = Callable[[str, Mapping[str, Any], Mapping[str, str]], None]
TokenForTrust = Callable[[str], str | None]


@dataclass(frozen=True)
class Target:
    """Where one notification goes: an HTTP URL, and the trust to authenticate with."""

    url: str
    trust_id: str | None
    authenticated: bool  # a trust+ URL: send X-Auth-Token when a token can be had


def notification_target(url: str, default_trust: str | None) -> Target | None:
    """The HTTP target of an action URL; None for the schemes that post nothing."""
    parts = urlsplit(url)
    scheme = parts.scheme
    if scheme in ("http", "https"):
        return Target(url, None, False)
    if scheme in ("trust+http", "trust+https"):
        trust_id = parts.username or default_trust
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        plain = urlunsplit((scheme[len("trust+") :], host, parts.path, parts.query, ""))
        return Target(plain, trust_id, True)
    return None


def post_in_background(url: str, body: Mapping[str, Any], headers: Mapping[str, str]) -> None:
    """POST ``body`` as JSON on a daemon thread; errors are logged, never retried."""

    def post() -> None:
        data = json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, headers=dict(headers), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                response.read()
        except Exception as exc:  # the alarm's target is not our problem beyond a log line
            log.warning("alarm notification to %s failed: %s", url, exc)

    threading.Thread(target=post, name="aodh-notify", daemon=True).start()


def no_trust_token(trust_id: str) -> str | None:
    """The default: no way to get a token for a trust (post without one)."""
    return None
