"""OS::Glance::WebImage against the sandbox's Glance: import, metadata updates, delete."""

from __future__ import annotations

from typing import Any

import pytest
from glance_plugin_support import PROJECT, GlanceSandbox

from kiln.cloud.api.errors import Forbidden
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.plugin import ResourceFailure
from kiln.resources.glance.web_image import CONTAINER_FORMATS, DISK_FORMATS, GlanceWebImage
from kiln.testing.plugin_context import PollLimitExceeded, decide, fake_resource, run_action

BASE = {
    "location": "https://example.org/images/disk.qcow2",
    "disk_format": "qcow2",
    "container_format": "bare",
}


@pytest.fixture
def sandbox() -> GlanceSandbox:
    return GlanceSandbox()


def image(sandbox: GlanceSandbox, **properties: Any) -> tuple[GlanceWebImage, Any]:
    return fake_resource(
        GlanceWebImage, {**BASE, **properties}, clients=sandbox.clients(), name="img"
    )


def live(sandbox: GlanceSandbox, res: GlanceWebImage) -> dict[str, Any]:
    return sandbox.image_client().get_image(res.ctx.physical_id).show()


def test_schema_matches_the_brief() -> None:
    schema = {n: s.to_dict() for n, s in GlanceWebImage.properties_schema.items()}
    assert set(schema) == {
        "name", "id", "location", "disk_format", "container_format", "min_disk", "min_ram",
        "protected", "os_distro", "os_version", "owner", "visibility", "tags", "architecture",
        "kernel_id", "ramdisk_id", "extra_properties",
    }  # fmt: skip
    assert {n for n, s in schema.items() if s["required"]} == {
        "location",
        "disk_format",
        "container_format",
    }
    assert {n for n, s in schema.items() if not s["update_allowed"]} == {
        "id",
        "location",
        "disk_format",
        "container_format",
    }
    assert schema["disk_format"]["constraints"] == [{"allowed_values": list(DISK_FORMATS)}]
    assert "ploop" in DISK_FORMATS and "vhdx" in DISK_FORMATS
    assert schema["container_format"]["constraints"] == [
        {"allowed_values": list(CONTAINER_FORMATS)}
    ]
    assert schema["visibility"]["default"] == "private"
    assert schema["kernel_id"]["constraints"] == [{"custom_constraint": "glance.image"}]
    assert (schema["min_disk"]["default"], schema["min_ram"]["default"]) == (0, 0)
    assert list(GlanceWebImage.attributes_schema) == []  # only the base attribute show


def test_create_registers_the_image_and_imports_it_from_the_url(sandbox: GlanceSandbox) -> None:
    res, ctx = image(
        sandbox,
        min_ram=256,
        os_distro="cirros",
        tags=["a", "b"],
        kernel_id="cirros",
        extra_properties={"hw_disk_bus": "virtio"},
    )
    run_action(res, "create")
    shown = live(sandbox, res)
    assert shown["status"] == "active"
    assert shown["name"] == ctx.physical_resource_name()
    assert (shown["disk_format"], shown["container_format"]) == ("qcow2", "bare")
    assert (shown["min_ram"], shown["min_disk"], shown["visibility"]) == (256, 0, "private")
    assert shown["os_distro"] == "cirros"
    assert sorted(shown["tags"]) == ["a", "b"]
    assert shown["hw_disk_bus"] == "virtio"
    assert shown["owner"] == PROJECT
    assert shown["kernel_id"] == sandbox.image_client().find_image("cirros").id
    assert res.reference_id() == shown["id"]
    assert res.get_attribute("show") == shown


def test_create_uses_the_given_id_and_name(sandbox: GlanceSandbox) -> None:
    wanted = "0b7e6a0e-5f4e-4d0a-9d6e-8f1b2c3d4e5f"
    res, _ = image(sandbox, id=wanted, name="mine")
    run_action(res, "create")
    assert res.ctx.physical_id == wanted
    assert live(sandbox, res)["name"] == "mine"


def test_create_waits_while_glance_imports(sandbox: GlanceSandbox) -> None:
    sandbox.cloud.sim.delays["image.image.import"] = 30
    res, _ = image(sandbox)
    cookie = res.handle_create()
    assert not res.check_create_complete(cookie)
    assert live(sandbox, res)["status"] == "importing"
    sandbox.clock.advance(31)
    assert res.check_create_complete(cookie)


def test_a_failed_import_fails_the_create(sandbox: GlanceSandbox) -> None:
    sandbox.cloud.sim.add_fault(
        FaultRule(service="image", operation="import_image", final_state="ERROR")
    )
    res, _ = image(sandbox)
    with pytest.raises(ResourceFailure, match="went to status killed"):
        run_action(res, "create")


def test_find_existing_finds_the_image_by_name_or_id(sandbox: GlanceSandbox) -> None:
    res, ctx = image(sandbox)
    assert res.find_existing() is None
    run_action(res, "create")
    again, _ = image(sandbox)
    again.ctx.resource_uuid = ctx.resource_uuid  # the same resource row after a crash
    assert again.find_existing() == res.ctx.physical_id
    by_id, _ = image(sandbox, id=res.ctx.physical_id, name="other")
    assert by_id.find_existing() == res.ctx.physical_id


def test_metadata_updates_in_place_and_data_changes_replace(sandbox: GlanceSandbox) -> None:
    res, _ = image(sandbox, min_ram=64, tags=["a"], extra_properties={"x": "1", "y": "2"})
    run_action(res, "create")
    new = {
        **BASE,
        "name": "renamed",
        "min_ram": 128,
        "os_version": "0.6",
        "tags": ["b", "c"],
        "extra_properties": {"y": "3", "z": "4"},
    }
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    shown = live(sandbox, res)
    assert (shown["name"], shown["min_ram"], shown["os_version"]) == ("renamed", 128, "0.6")
    assert sorted(shown["tags"]) == ["b", "c"]
    assert "x" not in shown
    assert (shown["y"], shown["z"]) == ("3", "4")
    for change in ({"location": "https://example.org/other.img"}, {"disk_format": "raw"}):
        assert decide(res, {**new, **change}).kind == "replace"


def test_removing_the_name_goes_back_to_the_physical_name(sandbox: GlanceSandbox) -> None:
    res, ctx = image(sandbox, name="given")
    run_action(res, "create")
    run_action(res, "update", new_properties=BASE)
    assert live(sandbox, res)["name"] == ctx.physical_resource_name()


def test_delete_removes_the_image_and_tolerates_it_gone(sandbox: GlanceSandbox) -> None:
    res, _ = image(sandbox)
    run_action(res, "create")
    image_id = res.ctx.physical_id
    run_action(res, "delete")
    assert [i for i in sandbox.image_client().list_images() if i.id == image_id] == []
    assert res.get_attribute("show") is None
    run_action(res, "delete")  # already gone: done


def test_delete_without_a_physical_id_does_nothing(sandbox: GlanceSandbox) -> None:
    res, _ = image(sandbox)
    assert run_action(res, "delete") == 1
    assert res.get_attribute("show") is None


def test_a_protected_image_is_not_deleted(sandbox: GlanceSandbox) -> None:
    res, _ = image(sandbox, protected=True)
    run_action(res, "create")
    with pytest.raises(Forbidden):
        run_action(res, "delete")


def test_create_never_ends_while_the_import_is_frozen(sandbox: GlanceSandbox) -> None:
    sandbox.cloud.sim.delays["image.image.import"] = float("inf")
    res, _ = image(sandbox)
    with pytest.raises(PollLimitExceeded):
        run_action(res, "create", max_polls=3)
