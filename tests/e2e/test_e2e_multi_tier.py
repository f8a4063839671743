"""The multi-tier example on ``kiln all``'s sandbox, driven by python-openstackclient:
create, update (resize in place, scale 2 -> 4, a changed security group rule), delete,
and what the cloud's own APIs show at each step."""

from __future__ import annotations

import pathlib

import pytest

from kiln.testing.kiln_process import KilnServer

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "multi-tier"
TEMPLATE = str(EXAMPLE / "web-app.yaml")
PRODUCTION = str(EXAMPLE / "production.yaml")
DEMO = "kiln-demo"

pytestmark = pytest.mark.timeout(300)


def names(server: KilnServer, *what: str) -> list[str]:
    listed = server.openstack(*what, "list", cloud=DEMO)
    assert isinstance(listed, list)
    return sorted(str(item.get("Name") or item.get("name") or "") for item in listed)


def test_create_update_delete_leaves_nothing(kiln_server: KilnServer) -> None:
    created = kiln_server.openstack(
        "stack", "create", "-t", TEMPLATE, "--wait", "multi-tier", cloud=DEMO
    )
    assert created["stack_status"] == "CREATE_COMPLETE", created
    outputs = kiln_server.openstack("stack", "output", "show", "multi-tier", "--all", cloud=DEMO)
    assert outputs["site_url"]["output_value"].startswith("http://172.24.4.")
    assert len(outputs["web_server_addresses"]["output_value"]) == 2

    servers = kiln_server.openstack("server", "list", cloud=DEMO)
    assert sorted(s["Name"] for s in servers) == ["web-0", "web-1"]
    assert {s["Flavor"] for s in servers} == {"m1.small"}
    assert {s["Status"] for s in servers} == {"ACTIVE"}
    volumes = kiln_server.openstack("volume", "list", cloud=DEMO)
    assert [v["Status"] for v in volumes] == ["in-use", "in-use"]
    assert "public" in names(kiln_server, "network")
    balancers = kiln_server.openstack("loadbalancer", "list", cloud=DEMO)
    assert [b["provisioning_status"] for b in balancers] == ["ACTIVE"]
    rules = kiln_server.openstack("security", "group", "rule", "list", cloud=DEMO)
    assert "192.168.0.0/16" in {r["IP Range"] for r in rules}

    ids_before = {s["Name"]: s["ID"] for s in servers}
    updated = kiln_server.openstack(
        "stack", "update", "-t", TEMPLATE, "-e", PRODUCTION, "--wait", "multi-tier", cloud=DEMO
    )
    assert updated["stack_status"] == "UPDATE_COMPLETE", updated
    servers = kiln_server.openstack("server", "list", cloud=DEMO)
    assert sorted(s["Name"] for s in servers) == ["web-0", "web-1", "web-2", "web-3"]
    assert {s["Flavor"] for s in servers} == {"m1.medium"}
    for name, server_id in ids_before.items():  # resized in place, not replaced
        assert {s["Name"]: s["ID"] for s in servers}[name] == server_id
    assert {v["Size"] for v in kiln_server.openstack("volume", "list", cloud=DEMO)} == {10}
    rules = kiln_server.openstack("security", "group", "rule", "list", cloud=DEMO)
    ranges = {r["IP Range"] for r in rules}
    assert "10.20.0.0/16" in ranges and "192.168.0.0/16" not in ranges
    members = kiln_server.openstack(
        "loadbalancer", "member", "list", _pool_id(kiln_server), cloud=DEMO
    )
    assert len(members) == 4

    kiln_server.openstack(
        "stack", "delete", "--wait", "-y", "multi-tier", cloud=DEMO, json_out=False
    )
    assert kiln_server.openstack("server", "list", cloud=DEMO) == []
    assert kiln_server.openstack("volume", "list", cloud=DEMO) == []
    assert kiln_server.openstack("loadbalancer", "list", cloud=DEMO) == []
    assert kiln_server.openstack("floating", "ip", "list", cloud=DEMO) == []
    assert kiln_server.openstack("router", "list", cloud=DEMO) == []
    assert kiln_server.openstack("port", "list", cloud=DEMO) == []
    assert names(kiln_server, "network") == ["public"]
    assert names(kiln_server, "security", "group") == ["default"]


def _pool_id(server: KilnServer) -> str:
    pools = server.openstack("loadbalancer", "pool", "list", cloud=DEMO)
    assert isinstance(pools, list) and len(pools) == 1
    return str(pools[0]["id"])
