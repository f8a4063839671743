"""The message bus under Kiln's RPC: oslo.messaging transports with a private config.

Each client, server and wake-up channel gets its own ``cfg.ConfigOpts`` (never
the global ``CONF``), so several of them, and tests, live in one process
without clashing. URLs: ``rabbit://user:pass@host:5672/`` in production,
``fake://`` inside one process (oslo.messaging's in-memory driver: calls,
replies and fanout casts all work between threads of the process).
Imports: kiln.core, kiln.rpc, oslo.messaging, oslo.config.
"""

from __future__ import annotations

import importlib
import os
import socket
import threading
import uuid
import warnings
from collections.abc import Mapping
from typing import Any, Self

from oslo_config import cfg

# oslo.messaging imports oslo.service, which imports eventlet (through its
# eventlet backend and futurist) and deprecated modules of oslo.utils and
# oslo.service at import time. Kiln uses threads only; these warnings say
# nothing about Kiln and would fail every test that imports this module.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message=r"\s*Eventlet is deprecated")
    warnings.filterwarnings("ignore", message="eventletutils module is deprecated")
    warnings.filterwarnings("ignore", message=".*oslo_service.eventlet_backdoor.*deprecated")
    import oslo_messaging
    from oslo_messaging import opts as messaging_opts

__all__ = [
    "CONTROL_EXCHANGE",
    "ManagedServer",
    "close_transport",
    "is_in_process",
    "make_config",
    "open_transport",
    "oslo_messaging",
    "rpc_client",
    "unique_server_name",
]

#: Kiln's exchange on a shared broker, apart from other services' ("openstack").
CONTROL_EXCHANGE = "kiln"

# Options oslo.messaging registers only on the global CONF at import time, but
# reads from the transport's config on every call (18.x).
_PRIVATE_OPT_LISTS = (
    ("oslo_messaging._tracing.client", "oslo_messaging_tracing", "oslo_messaging_tracing"),
    ("oslo_messaging._metrics.client", "oslo_messaging_metrics", "oslo_messaging_metrics"),
)


def make_config(
    *, timeout: float = 60, options: Mapping[str, Mapping[str, Any]] | None = None
) -> cfg.ConfigOpts:
    """A fresh oslo.config instance with every oslo.messaging option registered.

    ``options`` overrides options by group (``"DEFAULT"`` for the unnamed one),
    e.g. ``{"oslo_messaging_rabbit": {"amqp_auto_delete": True}}``.
    """
    conf = cfg.ConfigOpts()
    conf(args=[], project="kiln", default_config_files=[], default_config_dirs=[])
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    for module_name, attribute, group in _PRIVATE_OPT_LISTS:
        try:
            opt_list = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError):  # another oslo.messaging version
            continue
        conf.register_opts(opt_list, group=group)
    conf.set_override("rpc_response_timeout", int(max(1, round(timeout))))
    conf.set_override("control_exchange", CONTROL_EXCHANGE)
    for group, values in (options or {}).items():
        for name, value in values.items():
            conf.set_override(name, value, group=None if group == "DEFAULT" else group)
    return conf


def open_transport(
    transport_url: str,
    *,
    timeout: float = 60,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> oslo_messaging.Transport:
    """An RPC transport for ``transport_url`` with its own private config."""
    conf = make_config(timeout=timeout, options=options)
    return oslo_messaging.get_rpc_transport(conf, url=transport_url)


def close_transport(transport: oslo_messaging.Transport, transport_url: str) -> None:
    """Release the transport's connections.

    The fake driver keeps its queues in one class-wide table, and its cleanup
    empties that table for every transport in the process: skip it there.
    """
    if is_in_process(transport_url):
        return
    transport.cleanup()


def is_in_process(transport_url: str) -> bool:
    return transport_url.split(":", 1)[0].split("+", 1)[0] == "fake"


def unique_server_name(prefix: str = "kiln") -> str:
    """A server name no other process or listener uses (each gets its fanout copy)."""
    return f"{prefix}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class ManagedServer:
    """An oslo.messaging RPC server on its own transport: start, stop, wait, once each.

    Threaded (oslo.messaging's default executor; passing ``executor`` at all is
    deprecated in 18.x). ``start`` returns when the server's queues exist.
    """

    def __init__(
        self,
        transport_url: str,
        endpoints: list[Any],
        *,
        topic: str,
        server_name: str,
        options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.topic = topic
        self.server_name = server_name
        self._url = transport_url
        self._transport = open_transport(transport_url, options=options)
        self._server = oslo_messaging.get_rpc_server(
            self._transport,
            oslo_messaging.Target(topic=topic, server=server_name),
            endpoints,
            access_policy=oslo_messaging.DefaultRPCAccessPolicy,
        )
        self._lock = threading.Lock()
        self._state = "new"

    def start(self) -> None:
        with self._lock:
            if self._state != "new":
                raise RuntimeError(f"cannot start a server that is {self._state}")
            self._server.start()
            self._state = "started"

    def stop(self) -> None:
        """Stop taking messages; those in progress finish (see ``wait``)."""
        with self._lock:
            if self._state == "started":
                self._server.stop()
                self._state = "stopped"

    def wait(self) -> None:
        """Wait for the messages in progress after ``stop``, then release the connection."""
        with self._lock:
            if self._state != "stopped":
                return
            self._server.wait()
            close_transport(self._transport, self._url)
            self._state = "closed"

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        self.wait()


def rpc_client(
    transport: oslo_messaging.Transport,
    topic: str,
    *,
    timeout: float | None = None,
    retry: int | None = None,
    fanout: bool = False,
) -> Any:
    target = oslo_messaging.Target(topic=topic, fanout=fanout)
    return oslo_messaging.get_rpc_client(transport, target, timeout=timeout, retry=retry)
