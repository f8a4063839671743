"""openstacksdk's orchestration calls against ``kiln all``, with Keystone and without."""

from __future__ import annotations

import pathlib

import openstack
import pytest

HERE = pathlib.Path(__file__).parent / "templates"

pytestmark = [
    pytest.mark.timeout(180),
    # openstacksdk warns about its optional metrics backends whenever it connects
    pytest.mark.filterwarnings("ignore::openstack.warnings.OpenStackWarning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK50Warning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK60Warning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.OpenStackDeprecationWarning"),
]


def test_sdk_create_get_delete_with_keystone(kiln_server):
    conn = openstack.connect(**_region_kwargs(kiln_server, "kiln-demo"))
    stack = conn.create_stack(
        "sdk-stack", template_file=str(HERE / "app.yaml"), wait=True, length=9
    )
    assert stack["status"] == "CREATE_COMPLETE" or stack["stack_status"] == "CREATE_COMPLETE"
    found = conn.get_stack("sdk-stack")
    assert found is not None and found.name == "sdk-stack"
    assert any(o["output_key"] == "password_length" for o in found.outputs)
    assert conn.delete_stack("sdk-stack", wait=True)
    assert conn.get_stack("sdk-stack") is None


def test_sdk_without_keystone(kiln_noauth):
    project = "0123456789abcdef0123456789abcdef"
    conn = openstack.connect(
        auth_type="none",
        orchestration_endpoint_override=f"{kiln_noauth.api_url}/v1/{project}",
    )
    stack = conn.create_stack("sdk-noauth", template_file=str(HERE / "app.yaml"), wait=True)
    assert stack is not None
    assert conn.get_stack("sdk-noauth").name == "sdk-noauth"
    assert conn.delete_stack("sdk-noauth", wait=True)


def _region_kwargs(server, cloud):
    entry = server.cloud(cloud)
    auth = dict(entry["auth"])
    return {
        "auth_type": "password",
        "region_name": entry.get("region_name"),
        "identity_api_version": "3",
        **{k: v for k, v in auth.items()},
    }
