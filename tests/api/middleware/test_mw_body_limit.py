"""``max_json_body_size``: larger bodies are 400 RequestLimitExceeded (heat-api.md 1.8)."""

from __future__ import annotations

import http.client
import io
import json
import threading

import pytest
from cheroot import wsgi
from falcon import testing

from kiln.api.middleware.body_limit import BodyLimit

pytestmark = pytest.mark.timeout(30)

MESSAGE = (
    "Request limit exceeded: JSON body size ({} bytes) exceeds maximum allowed size (10 bytes)."
)


def echo(environ, start_response):
    length = int(environ.get("CONTENT_LENGTH") or 0)
    data = environ["wsgi.input"].read(length) if length else b""
    start_response("200 OK", [("Content-Type", "application/octet-stream")])
    return [data]


def test_declared_length_over_the_limit_is_refused_unread():
    client = testing.TestClient(BodyLimit(echo, max_size=10))
    found = client.simulate_post("/", body=b"x" * 11)
    assert found.status_code == 400
    assert found.json["error"]["type"] == "RequestLimitExceeded"
    assert found.json["error"]["message"] == MESSAGE.format(11)
    assert found.json["title"] == "Bad Request"


def test_bodies_within_the_limit_pass():
    client = testing.TestClient(BodyLimit(echo, max_size=10))
    assert client.simulate_post("/", body=b"x" * 10).content == b"x" * 10


def _chunked_environ(data: bytes) -> dict:
    env = testing.create_environ(method="POST", path="/")
    env.pop("CONTENT_LENGTH", None)
    env["HTTP_TRANSFER_ENCODING"] = "chunked"
    env["wsgi.input"] = io.BytesIO(data)
    return env


def test_chunked_bodies_are_read_up_to_the_limit():
    statuses: list[str] = []
    app = BodyLimit(echo, max_size=10)
    body = b"".join(app(_chunked_environ(b"y" * 500), lambda s, h, e=None: statuses.append(s)))
    assert statuses == ["400 Bad Request"]
    assert json.loads(body)["error"]["message"] == MESSAGE.format(11)
    ok = b"".join(app(_chunked_environ(b"y" * 7), lambda s, h, e=None: statuses.append(s)))
    assert ok == b"y" * 7


def test_chunked_body_over_http():
    server = wsgi.Server(("127.0.0.1", 0), BodyLimit(echo, max_size=10), numthreads=2)
    server.timeout = 1
    server.prepare()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        for payload, status in ((b"z" * 40, 400), (b"z" * 9, 200)):
            conn = http.client.HTTPConnection("127.0.0.1", server.bind_addr[1], timeout=10)
            conn.request("POST", "/", body=iter([payload[:5], payload[5:]]), encode_chunked=True)
            resp = conn.getresponse()
            data = resp.read()
            conn.close()
            assert resp.status == status
            if status == 200:
                assert data == payload
    finally:
        server.stop()
        thread.join(10)
