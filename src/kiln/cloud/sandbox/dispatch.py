"""A WSGI app that hands each request to the app mounted at the longest matching prefix.

The mounted app sees the prefix in ``SCRIPT_NAME`` and the rest in ``PATH_INFO``, as
any WSGI app mounted under a path does, so the URLs it builds include the prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class PrefixDispatcher:
    """Route by path prefix (``/compute``); anything else goes to ``default``."""

    def __init__(self, mounts: Mapping[str, WsgiApp], *, default: WsgiApp) -> None:
        self._mounts = sorted(
            ((prefix.rstrip("/"), app) for prefix, app in mounts.items()),
            key=lambda item: len(item[0]),
            reverse=True,
        )
        self._default = default

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or "/"
        for prefix, app in self._mounts:
            if path == prefix or path.startswith(prefix + "/"):
                environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + prefix
                environ["PATH_INFO"] = path[len(prefix) :]
                return app(environ, start_response)
        return self._default(environ, start_response)
