"""OS::Nova::Server against the sandbox: create, attributes, suspend/resume, snapshot, delete."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from nova_plugin_support import Cloud

from kiln.cloud.api.errors import NotFound
from kiln.plugin import ResourceFailure
from kiln.resources.nova.server import Server
from kiln.testing.plugin_context import run_action

CONFIG_ID = "0b5c2d4e-8f7a-4b6c-9d1e-2f3a4b5c6d7e"


def server(cloud: Cloud, **props: Any) -> tuple[Server, Any]:
    base = {"flavor": "m1.tiny", "image": "cirros", "user_data_format": "RAW"}
    return cloud.resource(Server, {**base, **props}, name="web")


def test_create_with_a_network_then_delete() -> None:
    cloud = Cloud()
    net_id, _ = cloud.private_network()
    res, ctx = server(cloud, networks=[{"network": "private"}], metadata={"n": 1, "s": "x"})
    assert res.find_existing() is None
    run_action(res, "create")
    live = cloud.compute.get_server(str(ctx.physical_id))
    assert live.status == "ACTIVE"
    assert live.name == ctx.physical_resource_name() and len(live.name) <= 53
    assert live.metadata == {"n": "1", "s": "x"}
    assert live.flavor["original_name"] == "m1.tiny"
    assert res.find_existing() == ctx.physical_id
    assert res.reference_id() == ctx.physical_id

    # a create found again after a crash is polled without the lost create cookie
    found, again = server(cloud, networks=[{"network": "private"}])
    again.resource_uuid = ctx.resource_uuid
    again.set_physical_id(found.find_existing())
    assert again.physical_id == ctx.physical_id
    assert found.check_create_complete(None) is True

    ip = res.get_attribute("first_address")
    assert ip.startswith("10.0.0.")
    assert res.get_attribute("networks") == {"private": [ip], net_id: [ip]}
    addresses = res.get_attribute("addresses")
    assert addresses["private"][0]["addr"] == ip and addresses[net_id] == addresses["private"]
    assert res.get_attribute("name") == live.name
    assert res.get_attribute("instance_name") is None  # an admin-only field
    assert res.get_attribute("show")["id"] == ctx.physical_id
    assert set(res.get_attribute("console_urls")) >= {"novnc"}
    assert res.get_attribute("os_collect_config") == {}
    assert ctx.data["external_ports"] and not ctx.data.get("internal_ports")

    run_action(res, "check")
    run_action(res, "delete")
    with pytest.raises(NotFound):
        cloud.compute.get_server(str(ctx.physical_id))
    run_action(res, "delete")


def test_no_networks_sends_auto_and_none_sends_none() -> None:
    cloud = Cloud()
    cloud.private_network()
    res, _ctx = server(cloud)
    run_action(res, "create")
    assert res.get_attribute("first_address").startswith("10.0.0.")
    bare, bare_ctx = server(cloud, networks=[{"allocate_network": "none"}])
    run_action(bare, "create")
    assert cloud.compute.get_server(str(bare_ctx.physical_id)).addresses == {}


def test_user_data_formats() -> None:
    cloud = Cloud()
    cloud.private_network()
    cloud.software_configs[CONFIG_ID] = {"id": CONFIG_ID, "config": "#!/bin/sh\necho sc\n"}
    res, _ctx = server(cloud, user_data=CONFIG_ID)
    body: dict[str, Any] = {}
    original = cloud.compute.create_server

    def spy(request: Any, hints: Any = None) -> Any:
        body.update(request)
        return original(request, hints)

    cloud.compute.create_server = spy  # type: ignore[method-assign]
    run_action(res, "create")
    assert base64.b64decode(body["user_data"]).decode() == "#!/bin/sh\necho sc\n"
    assert body["networks"] == "auto"
    assert any(t.startswith("kiln-resource=") for t in body["tags"])


def test_internal_ports_and_floating_ip() -> None:
    cloud = Cloud()
    _net_id, subnet_id = cloud.private_network()
    public = cloud.network.find_network("public")
    fip = cloud.network.create_floating_ip({"floating_network_id": public.id})
    res, ctx = server(
        cloud,
        networks=[
            {
                "subnet": subnet_id,
                "floating_ip": fip.id,
                "port_extra_properties": {"allowed_address_pairs": [{"ip_address": "10.0.0.200"}]},
            },
        ],
        security_groups=["default"],
    )
    run_action(res, "create")
    (internal,) = ctx.data["internal_ports"]
    port = cloud.network.get_port(internal["id"])
    assert port.name == "web-port-0" and port.device_id == ctx.physical_id
    assert port.fixed_ips[0]["subnet_id"] == subnet_id
    assert port.allowed_address_pairs[0]["ip_address"] == "10.0.0.200"
    assert cloud.network.get_floating_ip(fip.id).port_id == port.id
    ips = res.get_attribute("networks")["private"]
    assert fip.floating_ip_address in ips
    run_action(res, "delete")
    with pytest.raises(NotFound):
        cloud.network.get_port(internal["id"])
    assert ctx.data["internal_ports"] == []


def test_existing_port_and_tags() -> None:
    cloud = Cloud()
    net_id, _ = cloud.private_network()
    port = cloud.network.create_port({"network_id": net_id, "name": "mine"})
    res, ctx = server(cloud, networks=[{"port": "mine"}], tags=["a", "b"])
    run_action(res, "create")
    assert cloud.network.get_port(port.id).device_id == ctx.physical_id
    assert res.get_attribute("tags") == ["a", "b"]
    run_action(res, "delete")
    assert cloud.network.get_port(port.id).device_id == ""


def test_suspend_resume_and_snapshot_delete() -> None:
    cloud = Cloud()
    cloud.private_network()
    res, ctx = server(cloud)
    run_action(res, "create")
    run_action(res, "suspend")
    assert cloud.compute.get_server(str(ctx.physical_id)).status == "SUSPENDED"
    with pytest.raises(ResourceFailure):
        run_action(res, "check")
    run_action(res, "resume")
    assert cloud.compute.get_server(str(ctx.physical_id)).status == "ACTIVE"
    run_action(res, "snapshot_delete")
    image = cloud.image.get_image(ctx.data["snapshot_image_id"])
    assert image.status == "active"
    with pytest.raises(NotFound):
        cloud.compute.get_server(str(ctx.physical_id))


def test_image_that_needs_a_bigger_flavor_fails() -> None:
    cloud = Cloud()
    cloud.private_network()
    image = cloud.image.find_image("ubuntu-24.04")
    if image.min_ram <= 512 and image.min_disk <= 1:
        pytest.skip("the seeded image fits m1.tiny")
    res, _ = server(cloud, image="ubuntu-24.04")
    with pytest.raises(ResourceFailure):
        run_action(res, "create")


def test_unknown_flavor_is_not_found() -> None:
    cloud = Cloud()
    res, ctx = server(cloud, flavor="m1.huge")
    with pytest.raises(NotFound):
        run_action(res, "create")
    assert ctx.physical_id is None


def test_admin_sees_the_instance_name() -> None:
    cloud = Cloud(admin=True)
    cloud.private_network()
    res, _ = server(cloud)
    run_action(res, "create")
    assert res.get_attribute("instance_name")


def test_boot_from_a_volume_made_from_an_image() -> None:
    cloud = Cloud()
    cloud.private_network()
    res, ctx = cloud.resource(
        Server,
        {
            "flavor": "m1.small",
            "user_data_format": "RAW",
            "block_device_mapping_v2": [
                {"image": "cirros", "volume_size": 1, "delete_on_termination": True}
            ],
        },
    )
    run_action(res, "create")
    live = cloud.compute.get_server(str(ctx.physical_id))
    assert live.status == "ACTIVE" and live.attached_volume_ids


def test_cloud_checks_at_create() -> None:
    cloud = Cloud()
    cloud.private_network()
    res, ctx = server(cloud, personality={"/etc/motd": "hi"})
    with pytest.raises(ResourceFailure, match="personality"):
        run_action(res, "create")
    res, ctx = cloud.resource(
        Server,
        {"flavor": "m1.tiny", "image": "cirros", "user_data_format": "SOFTWARE_CONFIG"},
        metadata={"deployments": []},
    )
    with pytest.raises(ResourceFailure, match="deployments"):
        run_action(res, "create")
    assert ctx.physical_id is None
