"""Serve a WSGI app on a background thread with cheroot, for the sandbox and tests.

``kiln all`` runs every sandbox REST service in-process this way; tests start one on an
ephemeral port (``port=0``) and read the real port back from the handle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from cheroot import wsgi

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class ServerHandle:
    """A running server: its bound address, and a way to stop it."""

    def __init__(self, server: wsgi.Server, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread

    @property
    def host(self) -> str:
        return str(self._server.bind_addr[0])

    @property
    def port(self) -> int:
        return int(self._server.bind_addr[1])

    @property
    def url(self) -> str:
        """``http://host:port`` (IPv6 hosts in brackets)."""
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, finish the requests in flight, and join the thread."""
        self._server.stop()
        self._thread.join(timeout)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(
    app: WsgiApp,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    threads: int = 8,
    poll_interval: float = 0.1,
) -> ServerHandle:
    """Bind ``host:port`` now (so the port is known on return) and serve on a daemon thread.

    ``poll_interval``: how often the connection loop wakes up on its own; ``stop()`` waits
    up to this long while a keep-alive connection is open (cheroot's default is 0.5 s).
    Call ``stop()`` (or use the handle as a context manager): cheroot's worker threads are
    not daemons, so a server left running keeps the process alive.
    """
    server = wsgi.Server((host, port), app, numthreads=threads)
    server.expiration_interval = poll_interval
    server.prepare()  # binds; bind_addr now holds the real port
    thread = threading.Thread(
        target=server.serve, name=f"wsgi-{host}:{server.bind_addr[1]}", daemon=True
    )
    thread.start()
    return ServerHandle(server, thread)
