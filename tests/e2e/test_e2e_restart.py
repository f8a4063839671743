"""``kiln all`` stopped in the middle of a create resumes the stack when restarted."""

from __future__ import annotations

import pathlib
import time

import pytest

from kiln.testing.kiln_process import start_server

HERE = pathlib.Path(__file__).parent / "templates"

pytestmark = pytest.mark.timeout(240)


def _status(server, name):
    return server.openstack("stack", "show", name)["stack_status"]


def test_restart_resumes_an_in_progress_create(tmp_path):
    server = start_server(tmp_path)
    try:
        server.openstack(
            "stack",
            "create",
            "-t",
            str(HERE / "slow.yaml"),
            "--parameter",
            "wait=4",
            "slow",
        )
        assert _status(server, "slow") == "CREATE_IN_PROGRESS"
    finally:
        server.stop()  # SIGTERM: a clean stop in the middle of the wait
    assert server.process.returncode == 0
    again = start_server(tmp_path)
    try:
        deadline = time.monotonic() + 60
        while _status(again, "slow") == "CREATE_IN_PROGRESS" and time.monotonic() < deadline:
            time.sleep(1)
        assert _status(again, "slow") == "CREATE_COMPLETE"
    finally:
        again.stop()


def test_api_to_engine_over_rabbitmq(tmp_path):
    server = start_server(tmp_path, "--transport-url", "rabbit://guest:guest@127.0.0.1:5672/")
    try:
        created = server.openstack(
            "stack", "create", "-t", str(HERE / "app.yaml"), "--wait", "over-the-bus"
        )
        assert created["stack_status"] == "CREATE_COMPLETE"
        missing = server.openstack("stack", "show", "no-such-stack", check=False)
        assert missing.returncode == 1 and "not found" in missing.stderr
    finally:
        server.stop()
