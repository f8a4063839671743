"""OS::Nova::Server updates in place against the sandbox: resize, rebuild, networks, ..."""

from __future__ import annotations

from typing import Any

import pytest
from nova_plugin_support import Cloud

from kiln.plugin import UpdateReplace
from kiln.resources.nova.server import Server
from kiln.testing.plugin_context import decide, run_action


def created(cloud: Cloud, **props: Any) -> tuple[Server, Any]:
    base = {"flavor": "m1.tiny", "image": "cirros", "user_data_format": "RAW"}
    res, ctx = cloud.resource(Server, {**base, **props}, name="app")
    run_action(res, "create")
    return res, ctx


def update(res: Server, ctx: Any, **changes: Any) -> None:
    run_action(res, "update", new_properties={**ctx.properties, **changes})


@pytest.fixture
def cloud() -> Cloud:
    found = Cloud()
    found.private_network()
    return found


def test_resize_in_place(cloud: Cloud) -> None:
    res, ctx = created(cloud)
    assert decide(res, {**ctx.properties, "flavor": "m1.small"}).kind == "update"
    update(res, ctx, flavor="m1.small")
    live = cloud.compute.get_server(str(ctx.physical_id))
    assert live.status == "ACTIVE" and live.flavor["original_name"] == "m1.small"


def test_flavor_change_with_replace_policy_replaces(cloud: Cloud) -> None:
    res, ctx = created(cloud)
    with pytest.raises(UpdateReplace):
        update(res, ctx, flavor="m1.small", flavor_update_policy="REPLACE")


def test_rebuild_with_a_new_image(cloud: Cloud) -> None:
    res, ctx = created(cloud)
    update(res, ctx, image="ubuntu-24.04", flavor="m1.small")
    live = cloud.compute.get_server(str(ctx.physical_id))
    assert live.image_id == cloud.image.find_image("ubuntu-24.04").id
    assert live.status == "ACTIVE"


def test_user_data_policies(cloud: Cloud) -> None:
    res, ctx = created(cloud, user_data="one")
    with pytest.raises(UpdateReplace):
        update(res, ctx, user_data="two")
    update(res, ctx, user_data="two", user_data_update_policy="IGNORE")
    update(res, ctx, user_data="three", user_data_update_policy="REBUILD")
    assert cloud.compute.get_server(str(ctx.physical_id)).status == "ACTIVE"


def test_name_metadata_tags_and_password(cloud: Cloud) -> None:
    res, ctx = created(cloud, metadata={"a": "1", "b": "2"}, tags=["x"])
    update(res, ctx, name="renamed", metadata={"b": "3", "c": {"d": 1}}, tags=["y", "z"])
    live = cloud.compute.get_server(str(ctx.physical_id))
    assert live.name == "renamed"
    assert live.metadata == {"b": "3", "c": '{"d": 1}'}
    assert res.get_attribute("tags") == ["y", "z"]
    update(res, ctx, admin_pass="s3cret")
    assert "pending_admin_pass" not in ctx.data
    assert res.find_existing() == ctx.physical_id  # the kiln tag survived the tag update


def test_networks_attach_and_detach(cloud: Cloud) -> None:
    _net_id, subnet_id = cloud.private_network("second", "10.1.0.0/24")
    res, ctx = created(cloud, networks=[{"network": "private"}])
    update(res, ctx, networks=[{"network": "private"}, {"network": "second"}])
    assert set(res.get_attribute("networks")) >= {"private", "second"}
    update(res, ctx, networks=[{"network": "second"}])
    assert set(cloud.compute.get_server(str(ctx.physical_id)).addresses) == {"second"}
    update(
        res, ctx, networks=[{"network": "second"}, {"subnet": subnet_id, "fixed_ip": "10.1.0.50"}]
    )
    (internal,) = ctx.data["internal_ports"]
    assert "10.1.0.50" in res.get_attribute("networks")["second"]
    update(res, ctx, networks=[{"network": "second"}])
    assert ctx.data["internal_ports"] == []
    assert internal["id"] not in [p.id for p in cloud.network.list_ports()]


def test_port_extra_properties_update_the_internal_port(cloud: Cloud) -> None:
    res, ctx = created(
        cloud, networks=[{"network": "private", "port_extra_properties": {"admin_state_up": True}}]
    )
    (internal,) = ctx.data["internal_ports"]
    update(
        res,
        ctx,
        networks=[{"network": "private", "port_extra_properties": {"admin_state_up": False}}],
    )
    assert ctx.data["internal_ports"][0]["id"] == internal["id"]
    assert cloud.network.get_port(internal["id"]).admin_state_up is False


def test_replacement_properties(cloud: Cloud) -> None:
    res, ctx = created(cloud)
    for change in ({"key_name": "k"}, {"availability_zone": "nova"}, {"config_drive": True}):
        assert decide(res, {**ctx.properties, **change}).kind == "replace"
