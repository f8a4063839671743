"""Whatever escapes the inner apps becomes Heat's error body (heat-api.md 4.1)."""

from __future__ import annotations

import pytest
from falcon import testing

from kiln.api.faults import GENERIC_500, Forbidden
from kiln.api.middleware.fault_wrap import FaultWrap
from kiln.core.errors import StackValidationFailed


def _raising(exc):
    def app(environ, start_response):
        raise exc

    return app


def _raising_in_body(exc):
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

        def chunks():
            raise exc
            yield b""  # pragma: no cover

        return chunks()

    return app


@pytest.mark.parametrize("make", [_raising, _raising_in_body])
def test_an_unexpected_error_is_a_generic_500_without_traceback(make):
    client = testing.TestClient(FaultWrap(make(RuntimeError("password=hunter2"))))
    found = client.simulate_get("/")
    assert found.status_code == 500
    assert found.headers["Content-Type"] == "application/json"
    assert found.json == {
        "code": 500,
        "title": "Internal Server Error",
        "explanation": "The server has either erred or is incapable of performing the "
        "requested operation.",
        "error": {"type": "HTTPInternalServerError", "message": GENERIC_500, "traceback": None},
    }
    assert "hunter2" not in found.text


def test_debug_mode_adds_the_traceback():
    client = testing.TestClient(FaultWrap(_raising(RuntimeError("boom")), debug=True))
    found = client.simulate_get("/")
    assert "RuntimeError: boom" in found.json["error"]["traceback"]


def test_kiln_errors_keep_their_status_and_type():
    client = testing.TestClient(FaultWrap(_raising(StackValidationFailed("bad"))))
    found = client.simulate_get("/")
    assert found.status_code == 400
    assert found.json["error"]["type"] == "StackValidationFailed"
    denied = testing.TestClient(FaultWrap(_raising(Forbidden("stacks:create")))).simulate_get("/")
    assert denied.status_code == 403
    assert denied.json["error"]["message"] == "You are not authorized to use stacks:create."


def test_a_good_response_passes_unchanged():
    def app(environ, start_response):
        start_response("201 Created", [("Content-Type", "text/plain")])
        return iter([b"a", b"b"])

    found = testing.TestClient(FaultWrap(app)).simulate_get("/")
    assert (found.status_code, found.text) == (201, "ab")
