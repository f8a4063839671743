"""An in-process token cache that a co-located identity service can flush.

keystonemiddleware caches validated tokens (``token_cache_time``, 300 s), so a
token revoked in Keystone keeps working until its entry expires. In ``kiln
all`` the identity service runs in the same process: it clears this cache on
every revocation, so a revoked token is refused at once. keystonemiddleware
finds the cache in the WSGI environ (its ``env_cache_name`` option), as it
would a memcached client; the methods are the memcached subset it calls.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from kiln.api.middleware.responses import StartResponse, WSGIApp

ENV_KEY = "kiln.token_cache"


class TokenCache:
    def __init__(self) -> None:
        self._items: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            expires, value = found
            if expires and _now() >= expires:
                del self._items[key]
                return None
            return value

    def set(self, key: str, value: Any, time: float = 0, min_compress_len: int = 0) -> bool:
        expires = _now() + time if time else 0.0
        with self._lock:
            self._items[key] = (expires, value)
        return True

    def add(self, key: str, value: Any, time: float = 0, min_compress_len: int = 0) -> bool:
        if self.get(key) is not None:
            return False
        return self.set(key, value, time)

    def delete(self, key: str, time: float = 0) -> bool:
        with self._lock:
            self._items.pop(key, None)
        return True

    def clear(self) -> None:
        """Forget every validated token (called when one is revoked)."""
        with self._lock:
            self._items.clear()


def _now() -> float:
    return time.monotonic()


class ProvideTokenCache:
    """Puts the shared cache where keystonemiddleware looks for it."""

    def __init__(self, app: WSGIApp, cache: TokenCache) -> None:
        self.app = app
        self.cache = cache

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Any:
        environ[ENV_KEY] = self.cache
        return self.app(environ, start_response)
