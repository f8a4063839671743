"""Server lifecycle and actions of the compute model, through the in-process adapter."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import OTHER
from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter
from kiln.cloud.sandbox.compute.model import ComputeModel
from kiln.cloud.sandbox.simulator import FaultRule

BODY: dict[str, Any] = {"name": "vm", "imageRef": "any-image", "flavorRef": "1", "networks": "none"}


def test_create_goes_build_then_active_with_delay(cloud: SandboxCloud, demo: ComputeAdapter):
    now = [1000.0]
    cloud.store.now = lambda: now[0]
    cloud.sim.delays["compute.server.create"] = 10.0
    server = demo.create_server(BODY)
    assert server.status == "BUILD"
    assert server.vm_state == "building"
    now[0] += 11
    server = demo.get_server(server.id)
    assert (server.status, server.task_state, server.raw["OS-EXT-STS:power_state"]) == (
        "ACTIVE",
        None,
        1,
    )
    assert server.raw["OS-SRV-USG:launched_at"]


def test_frozen_build_stays_build(cloud: SandboxCloud, demo: ComputeAdapter):
    cloud.sim.delays["compute.server.*"] = float("inf")
    server = demo.create_server(BODY)
    assert demo.get_server(server.id).status == "BUILD"


def test_outcome_fault_ends_in_error_with_fault(cloud: SandboxCloud, demo: ComputeAdapter):
    cloud.sim.add_fault(
        FaultRule(
            service="compute",
            operation="create_server",
            final_state="ERROR",
            message="No valid host",
        )
    )
    server = demo.get_server(demo.create_server(BODY).id)
    assert server.status == "ERROR"
    assert server.fault["message"] == "No valid host"


def test_show_shapes_flavor_by_microversion(demo: ComputeAdapter, model: ComputeModel):
    server = demo.create_server({**BODY, "flavorRef": "5"})
    assert server.flavor["original_name"] == "m1.xlarge"
    assert (server.flavor["ram"], server.flavor["vcpus"], server.flavor["disk"]) == (16384, 8, 160)
    old = model.present_server(demo.scope, model.get_server(demo.scope, server.id), (2, 1))
    assert old["flavor"]["id"] == "5"
    assert "tags" not in old and "description" not in old


def test_validation_errors(demo: ComputeAdapter):
    with pytest.raises(BadRequest, match="Flavor 99"):
        demo.create_server({**BODY, "flavorRef": "99"})
    with pytest.raises(BadRequest, match="networks"):
        demo.create_server({k: v for k, v in BODY.items() if k != "networks"})
    with pytest.raises(BadRequest, match="Invalid key_name"):
        demo.create_server({**BODY, "key_name": "missing"})
    with pytest.raises(BadRequest, match="base 64"):
        demo.create_server({**BODY, "user_data": "not base64!"})
    with pytest.raises(BadRequest):
        demo.create_server({**BODY, "user_data": "QQ==" * 20000})
    with pytest.raises(BadRequest):
        demo.create_server({**BODY, "metadata": {"k": 1}})
    with pytest.raises(BadRequest):
        demo.create_server({**BODY, "imageRef": ""})
    with pytest.raises(BadRequest, match="availability zone"):
        demo.create_server({**BODY, "availability_zone": "mars"})


def test_quota_exceeded_is_403(cloud: SandboxCloud, demo: ComputeAdapter):
    cloud.sim.project_quotas[demo.scope.project_id] = {"cores": 9}
    demo.create_server({**BODY, "flavorRef": "5"})
    with pytest.raises(Forbidden, match="cores"):
        demo.create_server({**BODY, "flavorRef": "3", "name": "second"})
    assert demo.get_limits()["totalCoresUsed"] == 8


def test_project_isolation(model: ComputeModel, demo: ComputeAdapter):
    server = demo.create_server(BODY)
    other = ComputeAdapter(model, OTHER)
    with pytest.raises(NotFound):
        other.get_server(server.id)
    assert other.list_servers() == []
    assert [s.id for s in demo.list_servers(name="^v")] == [server.id]


def test_delete_goes_through_deleting(cloud: SandboxCloud, demo: ComputeAdapter):
    now = [0.0]
    cloud.store.now = lambda: now[0]
    server = demo.create_server(BODY)
    cloud.sim.delays["compute.server.delete"] = 5
    demo.delete_server(server.id)
    assert demo.get_server(server.id).task_state == "deleting"
    now[0] = 6
    with pytest.raises(NotFound):
        demo.get_server(server.id)
    with pytest.raises(NotFound):
        demo.delete_server(server.id)


def test_suspend_resume_stop_start_reboot(demo: ComputeAdapter):
    server_id = demo.create_server(BODY).id
    demo.suspend_server(server_id)
    assert demo.get_server(server_id).status == "SUSPENDED"
    with pytest.raises(Conflict, match="vm_state suspended"):
        demo.suspend_server(server_id)
    demo.resume_server(server_id)
    demo.stop_server(server_id)
    assert demo.get_server(server_id).status == "SHUTOFF"
    with pytest.raises(Conflict):
        demo.reboot_server(server_id, "SOFT")
    demo.reboot_server(server_id, "HARD")
    assert demo.get_server(server_id).status == "ACTIVE"


def test_transitional_task_blocks_other_actions(cloud: SandboxCloud, demo: ComputeAdapter):
    server_id = demo.create_server(BODY).id
    cloud.sim.delays["compute.server.resize"] = float("inf")
    demo.resize_server(server_id, "2")
    server = demo.get_server(server_id)
    assert (server.status, server.task_state) == ("RESIZE", "resize_prep")
    with pytest.raises(Conflict, match="task_state resize_prep"):
        demo.suspend_server(server_id)


def test_resize_confirm_and_revert(demo: ComputeAdapter):
    server_id = demo.create_server(BODY).id
    with pytest.raises(BadRequest, match="change flavor"):
        demo.resize_server(server_id, "1")
    demo.resize_server(server_id, "2")
    assert demo.get_server(server_id).status == "VERIFY_RESIZE"
    demo.confirm_server_resize(server_id)
    server = demo.get_server(server_id)
    assert (server.status, server.flavor["original_name"]) == ("ACTIVE", "m1.small")
    demo.resize_server(server_id, "3")
    demo.revert_server_resize(server_id)
    server = demo.get_server(server_id)
    assert (server.status, server.flavor["original_name"]) == ("ACTIVE", "m1.small")


def test_rebuild_password_update(demo: ComputeAdapter):
    server_id = demo.create_server(BODY).id
    rebuilt = demo.rebuild_server(server_id, {"imageRef": "other-image", "name": "renamed"})
    assert rebuilt.name == "renamed"
    assert demo.get_server(server_id).image_id == "other-image"
    demo.change_server_password(server_id, "secret")
    updated = demo.update_server(server_id, {"name": "again", "description": "d"})
    assert (updated.name, updated.raw["description"]) == ("again", "d")
    with pytest.raises(BadRequest):
        demo.update_server(server_id, {"flavorRef": "2"})


def test_metadata_and_tags(demo: ComputeAdapter):
    server_id = demo.create_server({**BODY, "metadata": {"a": "1"}, "tags": ["t1"]}).id
    assert demo.set_server_metadata(server_id, {"b": "2"}) == {"a": "1", "b": "2"}
    demo.delete_server_metadata_item(server_id, "a")
    with pytest.raises(NotFound):
        demo.delete_server_metadata_item(server_id, "a")
    assert demo.replace_server_metadata(server_id, {"c": "3"}) == {"c": "3"}
    assert demo.get_server_tags(server_id) == ["t1"]
    assert demo.set_server_tags(server_id, ["x", "y"]) == ["x", "y"]
    with pytest.raises(BadRequest):
        demo.set_server_tags(server_id, ["a,b"])
    with pytest.raises(BadRequest):
        demo.set_server_tags(server_id, [f"t{i}" for i in range(51)])


def test_server_group_membership(demo: ComputeAdapter):
    group = demo.create_server_group({"name": "g", "policy": "anti-affinity"})
    server = demo.create_server(BODY, {"group": group.id})
    assert demo.get_server_group(group.id).members == [server.id]
    assert server.raw["server_groups"] == [group.id]
    with pytest.raises(BadRequest):
        demo.create_server({**BODY, "name": "x"}, {"group": "nope"})
    demo.delete_server(server.id)
    assert demo.get_server_group(group.id).members == []


def test_console_and_zones(demo: ComputeAdapter):
    server_id = demo.create_server(BODY).id
    console = demo.get_server_console_url(server_id, "novnc")
    assert (console["protocol"], console["type"]) == ("vnc", "novnc")
    assert console["url"].startswith("http")
    assert demo.list_availability_zones() == ["nova"]
