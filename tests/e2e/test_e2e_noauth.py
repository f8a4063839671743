"""The clients in development mode: ``--os-auth-type none --os-endpoint``."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from kiln.testing.kiln_process import parse_json_output

HERE = pathlib.Path(__file__).parent / "templates"
PROJECT = "fedcba9876543210fedcba9876543210"

pytestmark = pytest.mark.timeout(240)


def _openstack(server, *args, json_out=True):
    cmd = [
        "openstack",
        "--os-auth-type",
        "none",
        "--os-endpoint",
        f"{server.api_url}/v1/{PROJECT}",
        *args,
    ]
    if json_out:
        cmd += ["-f", "json"]
    done = subprocess.run(cmd, env=server.env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + server.log_tail()
    return parse_json_output(done.stdout) if json_out else done.stdout


def test_stack_commands_without_keystone(kiln_noauth):
    created = _openstack(
        kiln_noauth,
        "stack",
        "create",
        "-t",
        str(HERE / "app.yaml"),
        "-e",
        str(HERE / "env.yaml"),
        "--wait",
        "noauth-app",
    )
    assert created["stack_status"] == "CREATE_COMPLETE"
    assert "noauth-app" in [s["Stack Name"] for s in _openstack(kiln_noauth, "stack", "list")]
    resources = _openstack(kiln_noauth, "stack", "resource", "list", "-n", "2", "noauth-app")
    assert {"password", "child", "marker", "inner", "leaf"} <= {
        r["resource_name"] for r in resources
    }
    updated = _openstack(
        kiln_noauth,
        "stack",
        "update",
        "--existing",
        "--parameter",
        "length=16",
        "--wait",
        "noauth-app",
    )
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    output = _openstack(kiln_noauth, "stack", "output", "show", "noauth-app", "password_length")
    assert output["output_value"] == 16
    events = _openstack(kiln_noauth, "stack", "event", "list", "noauth-app")
    assert events[-1]["resource_status"] == "UPDATE_COMPLETE"
    validated = _openstack(
        kiln_noauth, "orchestration", "template", "validate", "-t", str(HERE / "app.yaml")
    )
    assert "secret" in validated["Parameters"]
    _openstack(kiln_noauth, "stack", "delete", "--yes", "--wait", "noauth-app", json_out=False)
    assert "noauth-app" not in [s["Stack Name"] for s in _openstack(kiln_noauth, "stack", "list")]
