"""Wake-up hints over oslo.messaging: "there is new work in the queue, look now".

The database is the queue; a wake-up only lets idle engines look sooner than
their next poll, so losing one costs latency, never work. Producers (the API,
engines that queue tasks) call ``WakeupNotifier.notify()``; it never blocks
and never raises. A background thread sends at most one fanout cast per
``min_interval`` (50 ms), and always one after the last ``notify``, so a burst
of notifications becomes a few casts. Every ``WakeupListener`` on the topic
(one per engine process) receives each cast and calls its local callback,
typically the engine's in-process ``Notifier.notify``.
Imports: kiln.rpc, oslo.messaging.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kiln.rpc import bus
from kiln.rpc.bus import oslo_messaging

log = logging.getLogger(__name__)

DEFAULT_WAKEUP_TOPIC = "kiln-wakeup"

Options = Mapping[str, Mapping[str, Any]]


class WakeupNotifier:
    """The producers' side: ``notify()`` asks every listening engine to look at the queue."""

    def __init__(
        self,
        transport_url: str,
        *,
        topic: str = DEFAULT_WAKEUP_TOPIC,
        min_interval: float = 0.05,
        options: Options | None = None,
    ) -> None:
        self.topic = topic
        self.min_interval = min_interval
        self._url = transport_url
        self._transport = bus.open_transport(transport_url, options=options)
        # retry=0: a hint that cannot be sent right now is dropped, not retried.
        self._client = bus.rpc_client(self._transport, topic, fanout=True, retry=0)
        self._pending = False
        self._sent = 0
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"wakeup-{topic}", daemon=True)
        self._thread.start()

    @property
    def sent(self) -> int:
        """How many casts went out (fewer than ``notify`` calls when they came in bursts)."""
        return self._sent

    def notify(self) -> None:
        """Ask for a wake-up to be sent soon; returns at once."""
        self._pending = True
        self._wake.set()

    def close(self) -> None:
        """Send a wake-up still pending, stop the sender thread, release the connection."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._wake.set()
        self._thread.join()
        bus.close_transport(self._transport, self._url)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            # A notify() after the clear sets both again: it is sent next round.
            if self._pending:
                self._pending = False
                self._send()
            if self._closed.is_set():
                return
            self._closed.wait(self.min_interval)

    def _send(self) -> None:
        try:
            self._client.cast({}, "wake")
            self._sent += 1
        except Exception as exc:  # kombu's errors too: a lost hint only costs latency
            log.warning("could not send a wake-up on %s: %s", self.topic, exc)


class WakeupListener(bus.ManagedServer):
    """One engine's side: calls ``on_wakeup()`` for every wake-up cast on the topic.

    ``server_name`` must differ between listeners (each gets its own copy of a
    fanout cast); the default is unique. ``start``/``stop``/``wait`` come from
    ``ManagedServer``.
    """

    def __init__(
        self,
        transport_url: str,
        on_wakeup: Callable[[], None],
        *,
        topic: str = DEFAULT_WAKEUP_TOPIC,
        server_name: str | None = None,
        options: Options | None = None,
    ) -> None:
        super().__init__(
            transport_url,
            [_WakeupEndpoint(on_wakeup)],
            topic=topic,
            server_name=server_name or bus.unique_server_name("wakeup"),
            options=options,
        )


class _WakeupEndpoint:
    target = oslo_messaging.Target(version="1.0")

    def __init__(self, on_wakeup: Callable[[], None]) -> None:
        self._on_wakeup = on_wakeup

    def wake(self, ctxt: Any) -> None:
        try:
            self._on_wakeup()
        except Exception:
            log.exception("a wake-up callback failed")
