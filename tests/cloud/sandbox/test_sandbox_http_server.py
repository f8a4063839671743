"""serve_in_thread: an ephemeral port, real requests, a clean stop."""

from __future__ import annotations

import socket

import pytest
import requests

from kiln.cloud.sandbox.http_server import serve_in_thread

pytestmark = pytest.mark.timeout(30)


def hello(environ, start_response):
    body = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def test_serves_on_an_ephemeral_port_and_stops() -> None:
    handle = serve_in_thread(hello, poll_interval=0.02)
    assert handle.port > 0 and handle.url == f"http://127.0.0.1:{handle.port}"
    with requests.Session() as http:  # a keep-alive connection must not block stop()
        assert http.get(handle.url + "/a").text == "GET /a"
        assert http.post(handle.url + "/b").text == "POST /b"
        handle.stop()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", handle.port), timeout=2):
        pass


def test_context_manager_and_a_fixed_port() -> None:
    with serve_in_thread(hello) as first:
        port = first.port
    with serve_in_thread(hello, port=port, poll_interval=0.02) as again:
        assert requests.get(again.url + "/x", timeout=10).text == "GET /x"
