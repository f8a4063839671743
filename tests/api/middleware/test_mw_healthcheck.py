"""``/healthcheck`` answers before anything else, disabled by a file (heat-api.md 1.1)."""

from __future__ import annotations

from falcon import testing

from kiln.api.middleware.healthcheck import Healthcheck


def app(environ, start_response):
    start_response("401 Unauthorized", [("Content-Type", "text/plain")])
    return [b""]


def test_ok_then_disabled_by_file(tmp_path):
    switch = tmp_path / "disabled"
    client = testing.TestClient(Healthcheck(app, disable_by_file_path=str(switch)))
    found = client.simulate_get("/healthcheck")
    assert (found.status_code, found.text) == (200, "OK")
    assert found.headers["Content-Type"].startswith("text/plain")
    assert client.simulate_head("/healthcheck").status_code == 204
    switch.touch()
    found = client.simulate_get("/healthcheck")
    assert (found.status_code, found.text) == (503, "DISABLED BY FILE")
    assert client.simulate_head("/healthcheck").status_code == 503


def test_other_paths_go_on():
    client = testing.TestClient(Healthcheck(app))
    assert client.simulate_get("/healthcheck/x").status_code == 401
    assert client.simulate_get("/v1/healthcheck").status_code == 401
