"""Raw REST calls through an openstacksdk proxy, with cloud.api errors and retries.

:class:`RestClient` wraps one service proxy (``conn.compute``, ``conn.network``, ...;
each is a keystoneauth ``Adapter``) and turns every response into JSON or a
:class:`~kiln.cloud.api.errors.CloudError` built from the service's error body. Calls
are retried with exponential backoff on 5xx, connection failures and timeouts, and
(for idempotent methods, or when asked) on 409; the last error is raised. At most
``max_concurrency`` calls run at once per endpoint (a semaphore shared by every
client of that endpoint).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from keystoneauth1 import exceptions as ksa_exc

from kiln.cloud.api.errors import CloudError, Unavailable, error_for_status
from kiln.cloud.api.scope import ORIGIN_HEADER, call_origin

_IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a failed call."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    retry_conflicts: bool = False  # also retry 409 on non-idempotent methods

    def delay(self, attempt: int) -> float:
        """Exponential backoff with full jitter (attempt counts from 1)."""
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return random.uniform(ceiling / 2, ceiling)


_semaphores: dict[str, threading.BoundedSemaphore] = {}
_semaphores_lock = threading.Lock()


def endpoint_semaphore(endpoint: str, limit: int) -> threading.BoundedSemaphore:
    """The semaphore every client of ``endpoint`` shares."""
    with _semaphores_lock:
        semaphore = _semaphores.get(endpoint)
        if semaphore is None:
            semaphore = _semaphores[endpoint] = threading.BoundedSemaphore(limit)
        return semaphore


def error_message(body: Any, text: str) -> tuple[str, str | None]:
    """The message (and error type, when named) of an OpenStack error body of any service."""
    if isinstance(body, dict):
        if "NeutronError" in body and isinstance(body["NeutronError"], dict):
            err = body["NeutronError"]
            return str(err.get("message", text)), err.get("type")
        if "error_message" in body:  # Aodh
            inner = body["error_message"]
            if isinstance(inner, dict):
                return str(inner.get("faultstring", text)), None
            return str(inner), None
        if "faultstring" in body:  # Octavia
            return str(body["faultstring"]), None
        if "error" in body and isinstance(body["error"], dict):  # Keystone
            return str(body["error"].get("message", text)), None
        if len(body) == 1:  # Nova, Cinder: {"itemNotFound": {"code": 404, "message": ...}}
            ((fault, inner),) = body.items()
            if isinstance(inner, dict) and "message" in inner:
                return str(inner["message"]), fault
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else text), None  # Glance: "404 Not Found\n\nNo image ..."


class RestClient:
    """JSON over one openstacksdk proxy, with retries and an endpoint concurrency limit."""

    def __init__(
        self,
        proxy: Any,
        service: str,
        *,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 32,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.proxy = proxy
        self.service = service
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        try:
            endpoint = str(proxy.get_endpoint())
        except Exception:  # no catalog entry: the first call will say so
            endpoint = service
        self._semaphore = endpoint_semaphore(endpoint, max_concurrency)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        microversion: str | None = None,
        headers: Mapping[str, str] | None = None,
        retry_conflicts: bool | None = None,
    ) -> Any:
        """The decoded JSON response (None when empty); a CloudError when it failed."""
        conflicts = self.retry.retry_conflicts if retry_conflicts is None else retry_conflicts
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._once(method, path, body, params, microversion, headers)
            except CloudError as exc:
                transient = isinstance(exc, Unavailable) or (
                    exc.http_status == 409
                    and (conflicts or method in _IDEMPOTENT)
                    and exc.kind != "OverQuota"
                )
                if not transient or attempt >= self.retry.attempts:
                    raise
                self._sleep(self.retry.delay(attempt))

    def get(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.request("POST", path, body=body, **kw)

    def put(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.request("PUT", path, body=body, **kw)

    def patch(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.request("PATCH", path, body=body, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self.request("DELETE", path, **kw)

    def _once(
        self,
        method: str,
        path: str,
        body: Any,
        params: Mapping[str, Any] | None,
        microversion: str | None,
        headers: Mapping[str, str] | None,
    ) -> Any:
        kwargs: dict[str, Any] = {"raise_exc": False}
        if body is not None:
            kwargs["json"] = body
        if params:
            kwargs["params"] = dict(params)
        if microversion:
            kwargs["microversion"] = microversion
        origin = call_origin.get()
        if headers or origin:
            # the resource behind the call, for clouds that log it (the sandbox)
            kwargs["headers"] = {**({ORIGIN_HEADER: origin} if origin else {}), **(headers or {})}
        try:
            with self._semaphore:
                response = self.proxy.request(path, method, **kwargs)
        except (ksa_exc.ConnectionError, ksa_exc.ConnectTimeout, ksa_exc.RequestTimeout) as exc:
            raise Unavailable(f"{self.service}: {exc}", service=self.service) from exc
        except ksa_exc.EndpointNotFound as exc:
            raise CloudError(f"{self.service}: {exc}", service=self.service) from exc
        text = response.text or ""
        try:
            data = json.loads(text) if text.strip() else None
        except ValueError:
            data = None
        if response.status_code >= 400:
            message, kind = error_message(data, text)
            raise error_for_status(response.status_code, message, kind=kind, service=self.service)
        return data if data is not None or not text.strip() else text
