"""python-openstackclient + heatclient against ``kiln all`` (Keystone auth)."""

from __future__ import annotations

import json
import pathlib

import pytest

HERE = pathlib.Path(__file__).parent / "templates"
APP = str(HERE / "app.yaml")
ENV = str(HERE / "env.yaml")

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def app_stack(kiln_server):
    created = kiln_server.openstack(
        "stack", "create", "-t", APP, "-e", ENV, "--parameter", "length=10", "--wait", "e2e-app"
    )
    assert created["stack_status"] == "CREATE_COMPLETE", created
    return created


def test_create_wait_show_list(kiln_server, app_stack):
    shown = kiln_server.openstack("stack", "show", "e2e-app")
    assert shown["stack_name"] == "e2e-app"
    assert shown["stack_status"] == "CREATE_COMPLETE"
    params = shown["parameters"]
    assert params["length"] == "10"
    assert params["secret"] == "******"  # hidden parameters never shown
    listed = kiln_server.openstack("stack", "list")
    assert "e2e-app" in [s["Stack Name"] for s in listed]


def test_outputs_resources_events(kiln_server, app_stack):
    outputs = kiln_server.openstack("stack", "output", "show", "e2e-app", "--all")
    assert outputs["password_length"]["output_value"] == 10
    assert outputs["child_value"]["output_value"].endswith("-inner")
    nested = kiln_server.openstack("stack", "resource", "list", "-n", "2", "e2e-app")
    names = {r["resource_name"] for r in nested}
    assert {"password", "child", "marker", "inner", "grand", "leaf"} <= names
    events = kiln_server.openstack("stack", "event", "list", "e2e-app")
    assert any(e["resource_status"] == "CREATE_COMPLETE" for e in events)
    template = kiln_server.openstack("stack", "template", "show", "e2e-app")
    assert "password" in template["resources"]


def test_update_existing_and_dry_run(kiln_server, app_stack):
    preview = kiln_server.openstack(
        "stack", "update", "--existing", "--parameter", "length=14", "--dry-run", "e2e-app"
    )
    assert "password" in json.dumps(preview)
    updated = kiln_server.openstack(
        "stack", "update", "--existing", "--parameter", "length=14", "--wait", "e2e-app"
    )
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated
    out = kiln_server.openstack("stack", "output", "show", "e2e-app", "password_length")
    assert out["output_value"] == 14


def test_suspend_resume_check(kiln_server, app_stack):
    for action, status in (("suspend", "SUSPEND"), ("resume", "RESUME"), ("check", "CHECK")):
        kiln_server.openstack("stack", action, "--wait", "e2e-app", json_out=False)
        shown = kiln_server.openstack("stack", "show", "e2e-app")
        assert shown["stack_status"] == f"{status}_COMPLETE", shown


def test_snapshot_create_restore(kiln_server, app_stack):
    snap = kiln_server.openstack("stack", "snapshot", "create", "--name", "snap1", "e2e-app")
    assert snap["status"] in ("IN_PROGRESS", "COMPLETE")
    listed = kiln_server.openstack("stack", "snapshot", "list", "e2e-app")
    assert [s["name"] for s in listed] == ["snap1"]
    kiln_server.openstack("stack", "snapshot", "restore", "e2e-app", snap["ID"], json_out=False)


def test_validate_and_resource_types(kiln_server):
    validated = kiln_server.openstack("orchestration", "template", "validate", "-t", APP)
    assert "length" in validated["Parameters"]
    types = kiln_server.openstack("orchestration", "resource", "type", "list")
    assert "OS::Heat::RandomString" in [t["Resource Type"] for t in types]
    shown = kiln_server.openstack(
        "orchestration", "resource", "type", "show", "OS::Heat::RandomString"
    )
    assert "length" in shown["properties"]


def test_failed_stack_and_failures_list(kiln_server):
    failed = kiln_server.openstack(
        "stack", "create", "-t", str(HERE / "failing.yaml"), "--wait", "e2e-failing", check=False
    )
    assert failed.returncode != 0
    shown = kiln_server.openstack("stack", "show", "e2e-failing")
    assert shown["stack_status"] == "CREATE_FAILED"
    failures = kiln_server.openstack("stack", "failures", "list", "e2e-failing", json_out=False)
    assert "broken" in failures.stdout


def test_hook_poll_and_clear(kiln_server):
    kiln_server.openstack(
        "stack",
        "create",
        "-t",
        APP,
        "-e",
        str(HERE / "hooked-env.yaml"),
        "e2e-hooked",
        json_out=False,
    )
    polled = kiln_server.openstack("stack", "hook", "poll", "e2e-hooked", json_out=False)
    for _ in range(50):
        if "password" in polled.stdout:
            break
        polled = kiln_server.openstack("stack", "hook", "poll", "e2e-hooked", json_out=False)
    assert "password" in polled.stdout
    kiln_server.openstack("stack", "hook", "clear", "e2e-hooked", "password", json_out=False)
    kiln_server.openstack("stack", "delete", "--yes", "--wait", "e2e-hooked", json_out=False)


def test_cancel_update(kiln_server):
    kiln_server.openstack(
        "stack",
        "create",
        "-t",
        str(HERE / "slow.yaml"),
        "--parameter",
        "wait=0",
        "--wait",
        "e2e-slow",
    )
    kiln_server.openstack(
        "stack",
        "update",
        "-t",
        str(HERE / "slow.yaml"),
        "--parameter",
        "wait=60",
        "e2e-slow",
    )
    kiln_server.openstack("stack", "cancel", "--wait", "e2e-slow", json_out=False)
    shown = kiln_server.openstack("stack", "show", "e2e-slow")
    assert shown["stack_status"] in ("ROLLBACK_COMPLETE", "UPDATE_FAILED"), shown


def test_abandon_and_adopt(kiln_server, tmp_path):
    kiln_server.openstack("stack", "create", "-t", APP, "--wait", "e2e-abandon")
    data_file = tmp_path / "abandoned.json"
    kiln_server.openstack(
        "stack", "abandon", "--output-file", str(data_file), "e2e-abandon", json_out=False
    )
    data = json.loads(data_file.read_text())
    assert data["name"] == "e2e-abandon" and "password" in data["resources"]
    adopted = kiln_server.openstack(
        "stack", "adopt", "--adopt-file", str(data_file), "--wait", "e2e-adopted"
    )
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted


def test_delete_wait(kiln_server):
    kiln_server.openstack("stack", "create", "-t", APP, "--wait", "e2e-delete")
    kiln_server.openstack("stack", "delete", "--yes", "--wait", "e2e-delete", json_out=False)
    listed = kiln_server.openstack("stack", "list")
    assert "e2e-delete" not in [s["Stack Name"] for s in listed]
