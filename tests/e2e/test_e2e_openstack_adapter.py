"""``kiln all --cloud-adapter openstack``: the engine reaches the sandbox the way it would
a real cloud, through openstacksdk over the REST APIs, acting for each stack's owner
through a Keystone trust made at create and given back at delete."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

from kiln.testing.kiln_process import KilnServer, start_server

TEMPLATE = str(pathlib.Path(__file__).parent / "templates" / "server_volume.yaml")
DEMO = "kiln-demo"

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def kiln_openstack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnServer]:
    server = start_server(tmp_path_factory.mktemp("kiln-openstack"), "--cloud-adapter", "openstack")
    yield server
    server.stop()


def test_a_stack_on_the_openstack_path_with_a_trust(kiln_openstack: KilnServer) -> None:
    created = kiln_openstack.openstack(
        "stack", "create", "-t", TEMPLATE, "--wait", "via-sdk", cloud=DEMO
    )
    assert created["stack_status"] == "CREATE_COMPLETE", created
    address = kiln_openstack.openstack("stack", "output", "show", "via-sdk", "address", cloud=DEMO)
    assert str(address["output_value"]).startswith("10.5.0.")
    servers = kiln_openstack.openstack("server", "list", cloud=DEMO)
    assert [s["Status"] for s in servers] == ["ACTIVE"]
    assert [v["Status"] for v in kiln_openstack.openstack("volume", "list", cloud=DEMO)] == [
        "in-use"
    ]
    trusts = kiln_openstack.openstack("trust", "list")
    assert len(trusts) == 1  # the stack's, given to Kiln's service user

    kiln_openstack.openstack(
        "stack", "delete", "--wait", "-y", "via-sdk", cloud=DEMO, json_out=False
    )
    assert kiln_openstack.openstack("server", "list", cloud=DEMO) == []
    assert kiln_openstack.openstack("volume", "list", cloud=DEMO) == []
    assert kiln_openstack.openstack("trust", "list") == []  # given back with the stack
