"""The ``kiln`` client commands against ``kiln all``, configured by clouds.yaml."""

from __future__ import annotations

import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent / "templates"

pytestmark = pytest.mark.timeout(240)


def test_stack_lifecycle_with_the_kiln_client(kiln_server):
    done = kiln_server.kiln(
        "stack",
        "create",
        "cli-app",
        "-t",
        str(HERE / "app.yaml"),
        "-e",
        str(HERE / "env.yaml"),
        "--wait",
        "-f",
        "json",
    )
    shown = json.loads(done.stdout[done.stdout.index("{") :])
    assert shown["stack_status"] == "CREATE_COMPLETE"
    listed = json.loads(kiln_server.kiln("stack", "list", "-f", "json").stdout)
    assert "cli-app" in [s["stack_name"] for s in listed]
    outputs = json.loads(
        kiln_server.kiln("output", "show", "cli-app", "--all", "-f", "json").stdout
    )
    assert outputs["password_length"] == 12
    resources = json.loads(
        kiln_server.kiln("resource", "list", "cli-app", "-n", "2", "-f", "json").stdout
    )
    assert {"password", "inner", "leaf"} <= {r["resource_name"] for r in resources}
    events = json.loads(kiln_server.kiln("event", "list", "cli-app", "-f", "json").stdout)
    assert events[-1]["resource_status"] == "CREATE_COMPLETE"
    preview = kiln_server.kiln(
        "stack",
        "update",
        "cli-app",
        "--existing",
        "--parameter",
        "length=20",
        "--dry-run",
        "-f",
        "json",
    )
    changes = json.loads(preview.stdout)
    assert {
        "change": "updated",
        "resource_name": "password",
        "resource_type": "OS::Heat::RandomString",
    } in changes or any(c["resource_name"] == "password" for c in changes)
    kiln_server.kiln("stack", "delete", "cli-app", "--wait")
    listed = json.loads(kiln_server.kiln("stack", "list", "-f", "json").stdout)
    assert "cli-app" not in [s["stack_name"] for s in listed]


def test_a_failure_prints_the_failing_resources_full_path(kiln_server):
    done = kiln_server.kiln(
        "stack",
        "create",
        "cli-fail",
        "-t",
        str(HERE / "nested-fail.yaml"),
        "--wait",
        check=False,
    )
    assert done.returncode == 1
    assert "CREATE_FAILED" in done.stdout
    assert "outer/broken:" in done.stderr, done.stderr


def test_remote_validate_and_resource_types(kiln_server):
    done = kiln_server.kiln(
        "template",
        "validate",
        str(HERE / "app.yaml"),
        "--os-cloud",
        "kiln",
        "--format",
        "json",
    )
    assert "length" in json.loads(done.stdout)["Parameters"]
    types = json.loads(
        kiln_server.kiln("resource-type", "list", "--name", ".*RandomString", "-f", "json").stdout
    )
    assert [t["resource_type"] for t in types] == ["OS::Heat::RandomString"]
    bad = kiln_server.kiln(
        "template",
        "validate",
        str(HERE / "nested-fail.yaml"),
        "--os-cloud",
        "nope",
        check=False,
    )
    assert bad.returncode == 1 and "nope" in bad.stderr
