"""The simulated Cinder model: volume, backup and attachment status machines and rules."""

from __future__ import annotations

import pytest

from kiln.cloud.api.errors import BadRequest, Forbidden, NotFound, OverLimit
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.image.model import ImageModel
from kiln.cloud.sandbox.simulator import FaultRule, SandboxConfig, Simulator
from kiln.cloud.sandbox.store import DocumentStore

DEMO = CloudScope("demo-project", "demo-user", frozenset({"member"}))
OTHER = CloudScope("other-project", "other-user", frozenset({"member"}))
ADMIN = CloudScope("admin-project", "admin-user", frozenset({"admin"}))


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_model(clock: Clock, delays: dict[str, float] | None = None) -> BlockStorageModel:
    cloud = SandboxCloud(
        store=DocumentStore(now=clock), sim=Simulator(SandboxConfig(delays=delays or {}))
    )
    cloud.add("image", ImageModel(cloud))
    cloud.add("block_storage", BlockStorageModel(cloud))
    cloud.image.seed()
    cloud.block_storage.seed()
    model: BlockStorageModel = cloud.block_storage
    return model


@pytest.fixture
def model(clock: Clock) -> BlockStorageModel:
    return make_model(clock)


def status(model: BlockStorageModel, volume_id: str) -> str:
    return str(model.get_volume(DEMO, volume_id)["status"])


def test_create_with_delay_and_default_type(clock: Clock) -> None:
    model = make_model(clock, {"block_storage.volume.create": 3})
    volume = model.create_volume(DEMO, {"size": 1})
    assert volume["volume_type"] == "__DEFAULT__" and volume["status"] == "creating"
    assert volume["created_at"].endswith(".000000")
    assert status(model, volume["id"]) == "creating"
    clock.now += 3
    assert status(model, volume["id"]) == "available"


def test_image_volumes_download_first(clock: Clock) -> None:
    model = make_model(clock, {"block_storage.volume.create": 3})
    ubuntu = model.cloud.image.get_image_internal("demo-project", "ubuntu-24.04")
    with pytest.raises(BadRequest):  # smaller than the image's min_disk
        model.create_volume(DEMO, {"size": 1, "imageRef": ubuntu["id"]})
    with pytest.raises(BadRequest):
        model.create_volume(DEMO, {"size": 1, "imageRef": "no-such-image"})
    volume = model.create_volume(DEMO, {"size": 4, "imageRef": "ubuntu-24.04"})
    assert status(model, volume["id"]) == "downloading"
    clock.now += 3
    done = model.get_volume(DEMO, volume["id"])
    assert done["status"] == "available" and done["bootable"] == "true"
    assert done["volume_image_metadata"]["os_distro"] == "ubuntu"


def test_type_by_name_or_id(model: BlockStorageModel) -> None:
    lvm = model.get_type(DEMO, model.list_types(DEMO)[1]["id"])
    assert model.create_volume(DEMO, {"size": 1, "volume_type": lvm["id"]})["volume_type"] == (
        "lvmdriver-1"
    )
    with pytest.raises(NotFound):
        model.create_volume(DEMO, {"size": 1, "volume_type": "gold"})


def test_projects_are_isolated(model: BlockStorageModel) -> None:
    volume = model.create_volume(DEMO, {"size": 1, "name": "mine"})
    with pytest.raises(NotFound):
        model.get_volume(OTHER, volume["id"])
    assert model.list_volumes(OTHER) == []
    assert model.get_volume(ADMIN, volume["id"])
    assert model.list_volumes(ADMIN, {"all_tenants": "1"}) == [volume]
    assert model.list_volumes(DEMO, {"name": "mine"}) == [volume]
    assert model.list_volumes(DEMO, {"name": "other"}) == []


def test_delete_rules(clock: Clock) -> None:
    model = make_model(clock, {"block_storage.volume.delete": 2})
    volume = model.create_volume(DEMO, {"size": 1})
    model.attach_volume(volume["id"], "srv", "/dev/vdb")
    with pytest.raises(BadRequest):
        model.delete_volume(DEMO, volume["id"])
    model.detach_volume(volume["id"], "srv")
    model.delete_volume(DEMO, volume["id"])
    assert status(model, volume["id"]) == "deleting"
    with pytest.raises(BadRequest):
        model.delete_volume(DEMO, volume["id"])
    clock.now += 2
    with pytest.raises(NotFound):
        model.get_volume(DEMO, volume["id"])


def test_attach_detach_with_delays(clock: Clock) -> None:
    model = make_model(clock, {"block_storage.volume.attach": 1, "block_storage.volume.detach": 1})
    volume = model.create_volume(DEMO, {"size": 1})
    model.attach_volume(volume["id"], "srv", "/dev/vdb")
    assert status(model, volume["id"]) == "attaching"
    with pytest.raises(BadRequest):
        model.attach_volume(volume["id"], "srv2", "/dev/vdc")
    clock.now += 1
    attached = model.get_volume(DEMO, volume["id"])
    assert attached["status"] == "in-use"
    assert attached["attachments"][0]["server_id"] == "srv"
    assert attached["attachments"][0]["device"] == "/dev/vdb"
    model.detach_volume(volume["id"], "srv")
    assert status(model, volume["id"]) == "detaching"
    clock.now += 1
    assert model.get_volume(DEMO, volume["id"])["attachments"] == []
    with pytest.raises(BadRequest):
        model.detach_volume(volume["id"], "srv")


def test_multiattach(model: BlockStorageModel) -> None:
    volume = model.create_volume(DEMO, {"size": 1, "multiattach": True})
    model.attach_volume(volume["id"], "a", "/dev/vdb")
    model.attach_volume(volume["id"], "b", "/dev/vdb")
    assert len(model.get_volume(DEMO, volume["id"])["attachments"]) == 2
    model.detach_volume(volume["id"], "a")
    assert status(model, volume["id"]) == "in-use"


def test_extend_in_use_needs_3_42(model: BlockStorageModel) -> None:
    volume = model.create_volume(DEMO, {"size": 1})
    model.attach_volume(volume["id"], "srv", "/dev/vdb")
    with pytest.raises(BadRequest):
        model.volume_action(DEMO, volume["id"], {"os-extend": {"new_size": 2}}, (3, 41))
    model.volume_action(DEMO, volume["id"], {"os-extend": {"new_size": 2}}, (3, 42))
    assert model.get_volume(DEMO, volume["id"])["size"] == 2
    assert status(model, volume["id"]) == "in-use"


def test_extend_fault_ends_in_error_extending(model: BlockStorageModel) -> None:
    model.cloud.sim.add_fault(
        FaultRule(service="block_storage", operation="extend_volume", final_state="error")
    )
    volume = model.create_volume(DEMO, {"size": 1})
    model.volume_action(DEMO, volume["id"], {"os-extend": {"new_size": 2}})
    assert status(model, volume["id"]) == "error_extending"


def test_other_actions(model: BlockStorageModel) -> None:
    volume = model.create_volume(DEMO, {"size": 1})
    with pytest.raises(BadRequest):
        model.volume_action(DEMO, volume["id"], {"os-retype": {"new_type": "__DEFAULT__"}})
    model.volume_action(DEMO, volume["id"], {"os-retype": {"new_type": "lvmdriver-1"}})
    assert model.get_volume(DEMO, volume["id"])["volume_type"] == "lvmdriver-1"
    with pytest.raises(Forbidden):
        model.volume_action(DEMO, volume["id"], {"os-reset_status": {"status": "error"}})
    model.volume_action(ADMIN, volume["id"], {"os-reset_status": {"status": "error"}})
    assert status(model, volume["id"]) == "error"
    with pytest.raises(BadRequest):
        model.volume_action(DEMO, volume["id"], {"os-update_readonly_flag": {"readonly": True}})
    with pytest.raises(BadRequest):
        model.volume_action(DEMO, volume["id"], {"os-frobnicate": {}})


def test_quotas(model: BlockStorageModel) -> None:
    model.cloud.sim.project_quotas["demo-project"] = {"volumes": 1}
    model.create_volume(DEMO, {"size": 1})
    with pytest.raises(OverLimit) as raised:
        model.create_volume(DEMO, {"size": 1})
    assert raised.value.http_status == 413 and "VolumeLimitExceeded" in raised.value.message


def test_backup_state_machine(clock: Clock) -> None:
    model = make_model(clock, {"block_storage.backup.*": 2, "block_storage.volume.restore": 2})
    volume = model.create_volume(DEMO, {"size": 1})
    with pytest.raises(NotFound):
        model.create_backup(DEMO, {"volume_id": "x" * 36})
    backup = model.create_backup(DEMO, {"volume_id": volume["id"]})
    assert status(model, volume["id"]) == "backing-up"
    assert model.get_backup(DEMO, backup["id"])["status"] == "creating"
    clock.now += 2
    assert status(model, volume["id"]) == "available"
    assert model.get_backup(DEMO, backup["id"])["status"] == "available"
    restore = model.restore_backup(DEMO, backup["id"], {})
    assert model.get_backup(DEMO, backup["id"])["status"] == "restoring"
    assert status(model, restore["volume_id"]) == "restoring-backup"
    clock.now += 2
    assert status(model, restore["volume_id"]) == "available"
    model.delete_backup(DEMO, backup["id"])
    assert model.get_backup(DEMO, backup["id"])["status"] == "deleting"
    clock.now += 2
    with pytest.raises(NotFound):
        model.get_backup(DEMO, backup["id"])


def test_backup_needs_available_or_force(model: BlockStorageModel) -> None:
    volume = model.create_volume(DEMO, {"size": 1})
    model.attach_volume(volume["id"], "srv", "/dev/vdb")
    with pytest.raises(BadRequest):
        model.create_backup(DEMO, {"volume_id": volume["id"]})
    model.create_backup(DEMO, {"volume_id": volume["id"], "force": True})
    assert status(model, volume["id"]) == "in-use"


def test_restore_into_small_volume_is_rejected(model: BlockStorageModel) -> None:
    big = model.create_volume(DEMO, {"size": 5})
    backup = model.create_backup(DEMO, {"volume_id": big["id"]})
    small = model.create_volume(DEMO, {"size": 1})
    with pytest.raises(BadRequest):
        model.restore_backup(DEMO, backup["id"], {"volume_id": small["id"]})
    from_backup = model.create_volume(DEMO, {"backup_id": backup["id"]})
    assert from_backup["size"] == 5 and status(model, from_backup["id"]) == "available"


def test_internal_calls(model: BlockStorageModel) -> None:
    volume = model.create_volume_internal("demo-project", {"size": 1, "imageRef": "cirros"})
    assert model.get_volume_internal(volume["id"])["status"] == "available"
    model.attach_volume(volume["id"], "srv", "/dev/vda")
    model.detach_volume(volume["id"], "srv")
    model.delete_volume_internal(volume["id"])
    with pytest.raises(NotFound):
        model.get_volume_internal(volume["id"])


def test_internal_delete_waits_for_a_pending_detach(clock: Clock) -> None:
    model = make_model(clock, {"block_storage.volume.detach": 1})
    volume = model.create_volume(DEMO, {"size": 1})
    model.attach_volume(volume["id"], "srv", "/dev/vda")
    model.detach_volume(volume["id"], "srv")
    model.delete_volume_internal(volume["id"])
    assert status(model, volume["id"]) == "detaching"
    clock.now += 1
    with pytest.raises(NotFound):
        model.get_volume_internal(volume["id"])


def test_types_and_encryption(model: BlockStorageModel) -> None:
    with pytest.raises(Forbidden):
        model.create_type(DEMO, {"name": "gold"})
    gold = model.create_type(ADMIN, {"name": "gold", "extra_specs": {"k": "v"}})
    with pytest.raises(BadRequest):
        model.delete_type(ADMIN, model.get_type(DEMO, "default")["id"])
    assert model.get_encryption(DEMO, gold["id"]) == {}
    created = model.create_encryption(ADMIN, gold["id"], {"provider": "luks"})
    assert created["control_location"] == "front-end"
    with pytest.raises(BadRequest):
        model.create_encryption(ADMIN, gold["id"], {"provider": "luks"})
    assert model.create_volume(DEMO, {"size": 1, "volume_type": "gold"})["encrypted"] is True
    with pytest.raises(BadRequest):
        model.delete_type(ADMIN, gold["id"])
    with pytest.raises(BadRequest):
        model.update_encryption(ADMIN, gold["id"], {"key_size": 256})
