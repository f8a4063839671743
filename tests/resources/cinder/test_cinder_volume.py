"""OS::Cinder::Volume against the sandbox: schema, sources, create, attributes, delete."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cinder_plugin_support import CinderSandbox

from kiln.cloud.api.errors import NotFound
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.core.errors import StackValidationFailed
from kiln.plugin import ResourceFailure
from kiln.resources.cinder.volume import CinderVolume
from kiln.testing.plugin_context import decide, fake_resource, run_action

NO_DEFAULT = "<none>"


@pytest.fixture
def sandbox() -> CinderSandbox:
    return CinderSandbox()


def volume(sandbox: CinderSandbox, **properties: Any) -> tuple[CinderVolume, Any]:
    return fake_resource(CinderVolume, properties, clients=sandbox.clients(), name="vol")


def created(sandbox: CinderSandbox, **properties: Any) -> CinderVolume:
    res, _ = volume(sandbox, **properties)
    run_action(res, "create")
    return res


def test_schema_matches_the_reference() -> None:
    def row(schema: Any) -> tuple[Any, ...]:
        d = schema.to_dict()
        return (d["type"], d["required"], d.get("default", NO_DEFAULT), d["update_allowed"])

    rows = {n: row(s) for n, s in CinderVolume.properties_schema.items()}
    assert rows == {
        "availability_zone": ("string", False, NO_DEFAULT, False),
        "size": ("integer", False, NO_DEFAULT, True),
        "snapshot_id": ("string", False, NO_DEFAULT, False),
        "backup_id": ("string", False, NO_DEFAULT, True),
        "name": ("string", False, NO_DEFAULT, True),
        "description": ("string", False, NO_DEFAULT, True),
        "volume_type": ("string", False, NO_DEFAULT, True),
        "metadata": ("map", False, {}, True),
        "imageRef": ("string", False, NO_DEFAULT, False),
        "image": ("string", False, NO_DEFAULT, False),
        "source_volid": ("string", False, NO_DEFAULT, False),
        "scheduler_hints": ("map", False, NO_DEFAULT, False),
        "read_only": ("boolean", False, NO_DEFAULT, True),
        "multiattach": ("boolean", False, False, False),
    }
    constraints = {
        n: s.to_dict().get("constraints") for n, s in CinderVolume.properties_schema.items()
    }
    assert constraints["size"] == [{"range": {"min": 1}}]
    for name, custom in [
        ("snapshot_id", "cinder.snapshot"),
        ("backup_id", "cinder.backup"),
        ("volume_type", "cinder.vtype"),
        ("image", "glance.image"),
        ("source_volid", "cinder.volume"),
    ]:
        assert constraints[name] == [{"custom_constraint": custom}]
    for hidden in ("imageRef", "multiattach"):
        assert CinderVolume.properties_schema[hidden].support_status.status == "HIDDEN"
    assert set(CinderVolume.attributes_schema) == {
        "availability_zone", "size", "snapshot_id", "display_name", "display_description",
        "volume_type", "metadata", "metadata_values", "source_volid", "status", "created_at",
        "bootable", "encrypted", "attachments", "attachments_list", "multiattach",
    }  # fmt: skip
    assert CinderVolume.supports_snapshot


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"size": 1, "image": "a", "imageRef": "a"}, "at the same time: image, imageRef"),
        ({}, "exactly one of source_volid and snapshot_id"),
        ({"source_volid": "a", "snapshot_id": "b"}, "exactly one of source_volid"),
        ({"size": 1, "image": "a", "source_volid": "b"}, "Only one volume source"),
    ],
)
def test_validate_rejects_conflicting_sources(properties: dict[str, Any], message: str) -> None:
    errors = CinderVolume.validate({"metadata": {}, "multiattach": False, **properties})
    assert len(errors) == 1 and isinstance(errors[0], StackValidationFailed)
    assert message in str(errors[0])


@pytest.mark.parametrize(
    "properties",
    [{"size": 1}, {"source_volid": "a"}, {"size": 2, "image": "a"}, {"backup_id": "b"}],
)
def test_validate_accepts_one_source(properties: dict[str, Any]) -> None:
    assert CinderVolume.validate(properties) == []


def test_create_makes_an_available_volume_named_after_the_resource(
    sandbox: CinderSandbox,
) -> None:
    res, ctx = volume(sandbox, size=2, description="d", metadata={"k": "v", "n": 3})
    run_action(res, "create")
    live = sandbox.volumes().get_volume(ctx.physical_id)
    assert (live.status, live.size, live.name) == ("available", 2, ctx.physical_resource_name())
    assert live.metadata == {"k": "v", "n": "3"}
    assert ctx.data["volume_type"] == live.volume_type
    assert res.reference_id() == live.id


def test_attributes_read_the_live_volume(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1, name="v1", description="about", metadata={"a": "b"})
    assert res.get_attribute("size") == "1"
    assert res.get_attribute("status") == "available"
    assert res.get_attribute("display_name") == "v1"
    assert res.get_attribute("display_description") == "about"
    assert json.loads(res.get_attribute("metadata")) == {"a": "b"}
    assert res.get_attribute("metadata_values") == {"a": "b"}
    assert res.get_attribute("bootable") == "false"
    assert res.get_attribute("encrypted") == "False"
    assert res.get_attribute("attachments_list") == []
    assert res.get_attribute("attachments") == "[]"
    assert res.get_attribute("multiattach") is False
    assert res.get_attribute("availability_zone") == "nova"
    assert res.get_attribute("show")["id"] == res.ctx.physical_id


def test_create_from_an_image_by_name(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1, image="cirros")
    live = sandbox.volumes().get_volume(res.ctx.physical_id)
    assert live.bootable
    assert res.get_attribute("bootable") == "true"


def test_the_hidden_image_ref_works_as_image(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1, imageRef="cirros")
    assert sandbox.volumes().get_volume(res.ctx.physical_id).bootable


def test_a_clone_takes_the_size_of_its_source(sandbox: CinderSandbox) -> None:
    source = sandbox.volume(size=3)
    res = created(sandbox, source_volid=source)
    assert res.get_attribute("size") == "3"
    assert res.get_attribute("source_volid") == source


def test_create_from_a_backup_restores_it_into_a_new_volume(sandbox: CinderSandbox) -> None:
    backup = sandbox.backup(sandbox.volume(size=2))
    res, ctx = volume(sandbox, backup_id=backup, description="restored")
    run_action(res, "create")
    live = sandbox.volumes().get_volume(ctx.physical_id)
    assert (live.status, live.size) == ("available", 2)
    assert live.name == ctx.physical_resource_name()
    assert live.raw["description"] == "restored"


def test_create_sets_the_read_only_flag(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1, read_only=True)
    assert sandbox.volumes().get_volume(res.ctx.physical_id).metadata["readonly"] == "True"


def test_create_waits_while_the_volume_is_creating(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.volume.create"] = 10
    res, _ = volume(sandbox, size=1)
    cookie = res.handle_create()
    assert not res.check_create_complete(cookie)
    sandbox.clock.advance(11)
    assert res.check_create_complete(cookie)


def test_a_volume_in_error_fails_the_create(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.add_fault(
        FaultRule(service="block_storage", operation="create_volume", final_state="ERROR")
    )
    res, _ = volume(sandbox, size=1)
    with pytest.raises(ResourceFailure, match="Went to status error"):
        run_action(res, "create")


def test_find_existing_finds_the_volume_by_its_name(sandbox: CinderSandbox) -> None:
    res, ctx = volume(sandbox, size=1)
    assert res.find_existing() is None
    run_action(res, "create")
    again, _ = volume(sandbox, size=1)
    again.ctx.resource_uuid = ctx.resource_uuid  # the same resource row after a crash
    assert again.find_existing() == ctx.physical_id


def test_source_changes_replace_and_settings_update(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1)
    base = {"size": 1}
    assert decide(res, {**base, "size": 2}).kind == "update"
    assert decide(res, {**base, "name": "x", "metadata": {"a": "b"}}).kind == "update"
    for change in ({"image": "cirros"}, {"availability_zone": "other"}, {"multiattach": True}):
        assert decide(res, {**base, **change}).kind == "replace"


def test_delete_waits_until_the_volume_is_gone(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.volume.delete"] = 10
    res = created(sandbox, size=1)
    cookie = res.handle_delete()
    assert not res.check_delete_complete(cookie)
    assert sandbox.volumes().get_volume(res.ctx.physical_id).status == "deleting"
    assert not res.check_delete_complete(cookie)
    sandbox.clock.advance(11)
    assert res.check_delete_complete(cookie)
    with pytest.raises(NotFound):
        sandbox.volumes().get_volume(res.ctx.physical_id)
    assert res.get_attribute("status") is None
    assert res.get_attribute("show") is None


def test_delete_of_a_volume_gone_or_never_made_is_done(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1)
    run_action(res, "delete")
    assert run_action(res, "delete") == 1
    fresh, _ = volume(sandbox, size=1)
    assert run_action(fresh, "delete") == 1


def test_delete_of_an_attached_volume_fails(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1)
    sandbox.attach(sandbox.server(), str(res.ctx.physical_id))
    with pytest.raises(ResourceFailure, match="Volume in use"):
        run_action(res, "delete")


def test_check_passes_for_an_available_volume(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1)
    run_action(res, "check")
    sandbox.volumes(admin=True).reset_volume_status(str(res.ctx.physical_id), "error")
    with pytest.raises(ResourceFailure, match="error"):
        run_action(res, "check")
