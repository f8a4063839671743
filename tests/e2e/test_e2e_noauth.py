"""The clients in development mode: ``--os-auth-type none --os-endpoint``."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from conftest import parse_json_output

HERE = pathlib.Path(__file__).parent / "templates"
PROJECT = "fedcba9876543210fedcba9876543210"

pytestmark = pytest.mark.timeout(180)


def _openstack(server, *args):
    cmd = [
        "openstack",
        "--os-auth-type",
        "none",
        "--os-endpoint",
        f"{server.api_url}/v1/{PROJECT}",
        *args,
        "-f",
        "json",
    ]
    done = subprocess.run(cmd, env=server.env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + server.log_tail()
    return parse_json_output(done.stdout)


def test_create_list_delete_without_keystone(kiln_noauth):
    created = _openstack(
        kiln_noauth, "stack", "create", "-t", str(HERE / "app.yaml"), "--wait", "noauth-app"
    )
    assert created["stack_status"] == "CREATE_COMPLETE"
    assert "noauth-app" in [s["Stack Name"] for s in _openstack(kiln_noauth, "stack", "list")]
    resources = _openstack(kiln_noauth, "stack", "resource", "list", "noauth-app")
    assert {r["resource_name"] for r in resources} == {"password", "child", "marker"}
