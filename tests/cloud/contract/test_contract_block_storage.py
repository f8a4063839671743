"""BlockStorageApi scenarios through both adapters (in process, and openstacksdk over HTTP)."""

from __future__ import annotations

import pytest

from kiln.cloud.api.errors import BadRequest, Forbidden, NotFound, OverLimit
from kiln.cloud.sandbox.simulator import FaultRule


def test_volume_lifecycle(contract_cloud):
    volumes = contract_cloud.client("block_storage")
    created = volumes.create_volume(
        {"size": 1, "name": "data", "metadata": {"a": "1"}, "volume_type": "lvmdriver-1"}
    )
    assert created.status == "creating"
    volume = volumes.get_volume(created.id)
    assert volume.status == "available"
    assert volume.volume_type == "lvmdriver-1"
    assert volume.metadata == {"a": "1"}
    assert not volume.bootable
    assert volumes.find_volume("data").id == created.id

    volumes.update_volume(created.id, {"name": "data2", "description": "d"})
    assert volumes.replace_volume_metadata(created.id, {"b": "2"}) == {"b": "2"}
    assert volumes.set_volume_metadata(created.id, {"c": "3"}) == {"b": "2", "c": "3"}
    volumes.delete_volume_metadata(created.id, "b")
    assert volumes.get_volume_metadata(created.id) == {"c": "3"}

    volumes.extend_volume(created.id, 2)
    volumes.retype_volume(created.id, "__DEFAULT__")
    volumes.set_volume_readonly(created.id, True)
    volumes.set_volume_bootable(created.id, True)
    volume = volumes.get_volume(created.id)
    assert volume.size == 2 and volume.volume_type == "__DEFAULT__"
    assert volume.metadata["readonly"] == "True" and volume.bootable

    volumes.delete_volume(created.id)
    with pytest.raises(NotFound):
        volumes.get_volume(created.id)


def test_volume_from_image_is_bootable(contract_cloud):
    image = contract_cloud.client("image").find_image("cirros")
    volumes = contract_cloud.client("block_storage")
    volume = volumes.create_volume({"size": 1, "imageRef": image.id})
    volume = volumes.get_volume(volume.id)
    assert volume.status == "available" and volume.bootable
    assert volume["volume_image_metadata"]["image_id"] == image.id


def test_bad_requests(contract_cloud):
    volumes = contract_cloud.client("block_storage")
    with pytest.raises(NotFound):
        volumes.create_volume({"size": 1, "volume_type": "no-such-type"})
    with pytest.raises(BadRequest):
        volumes.create_volume({"name": "no size"})
    volume = volumes.create_volume({"size": 2})
    with pytest.raises(BadRequest):
        volumes.extend_volume(volume.id, 1)
    with pytest.raises(BadRequest):
        volumes.create_volume({"size": 1, "source_volid": volume.id})
    with pytest.raises(NotFound):
        volumes.get_volume("00000000-0000-4000-8000-000000000000")


def test_in_use_volume_cannot_be_deleted(contract_cloud):
    volumes = contract_cloud.client("block_storage")
    volume = volumes.create_volume({"size": 1})
    model = contract_cloud.sandbox.block_storage
    model.attach_volume(volume.id, "server-1", "/dev/vdb")
    attached = volumes.get_volume(volume.id)
    assert attached.status == "in-use" and attached.attached_servers == ["server-1"]
    with pytest.raises(BadRequest):
        volumes.delete_volume(volume.id)
    volumes.extend_volume(volume.id, 3)  # in-use extend at 3.42+
    model.detach_volume(volume.id, "server-1")
    assert volumes.get_volume(volume.id).status == "available"
    volumes.delete_volume(volume.id)


def test_backup_and_restore(contract_cloud):
    volumes = contract_cloud.client("block_storage")
    volume = volumes.create_volume({"size": 1, "name": "src"})
    backup = volumes.create_backup({"volume_id": volume.id, "name": "bk"})
    assert volumes.get_backup(backup.id).status == "available"
    assert volumes.find_backup("bk").id == backup.id
    restored = volumes.restore_backup(backup.id)
    assert volumes.get_volume(restored.volume_id).status == "available"
    target = volumes.create_volume({"size": 1})
    assert volumes.restore_backup(backup.id, volume_id=target.id).volume_id == target.id
    assert volumes.get_volume(target.id).status == "available"
    volumes.delete_backup(backup.id)
    with pytest.raises(NotFound):
        volumes.get_backup(backup.id)


def test_failed_backup_reports_its_reason(contract_cloud):
    contract_cloud.sandbox.sim.add_fault(
        FaultRule(
            service="block_storage",
            operation="create_backup",
            final_state="error",
            message="disk on fire",
        )
    )
    volumes = contract_cloud.client("block_storage")
    volume = volumes.create_volume({"size": 1})
    backup = volumes.get_backup(volumes.create_backup({"volume_id": volume.id}).id)
    assert backup.status == "error" and backup.fail_reason == "disk on fire"
    assert volumes.get_volume(volume.id).status == "available"


def test_volume_quota_is_over_limit(contract_cloud):
    sandbox = contract_cloud.sandbox
    project = sandbox_project(contract_cloud)
    sandbox.sim.project_quotas[project] = {"gigabytes": 3}
    volumes = contract_cloud.client("block_storage")
    volumes.create_volume({"size": 2})
    with pytest.raises(OverLimit):
        volumes.create_volume({"size": 2})


def sandbox_project(contract_cloud) -> str:
    return contract_cloud.server.scope("demo").project_id


def test_types_and_encryption_need_admin(contract_cloud):
    volumes = contract_cloud.client("block_storage")
    admin = contract_cloud.client("block_storage", admin=True)
    assert {"__DEFAULT__", "lvmdriver-1"} <= {t.name for t in volumes.list_volume_types()}
    assert volumes.get_default_volume_type().name == "__DEFAULT__"
    assert "encryption" in {e.alias for e in volumes.list_extensions()}
    with pytest.raises(Forbidden):
        volumes.create_volume_type({"name": "x"})

    vtype = admin.create_volume_type({"name": "luks"})
    assert volumes.find_volume_type("luks").id == vtype.id
    assert admin.get_type_encryption(vtype.id) is None
    created = admin.create_type_encryption(
        vtype.id, {"provider": "luks", "cipher": "aes-xts-plain64", "key_size": 256}
    )
    assert created.volume_type_id == vtype.id
    with pytest.raises(Forbidden):
        volumes.create_type_encryption(vtype.id, {"provider": "luks"})
    updated = admin.update_type_encryption(vtype.id, {"key_size": 512})
    assert updated.key_size == 512 and updated.provider == "luks"
    encrypted = volumes.get_volume(volumes.create_volume({"size": 1, "volume_type": "luks"}).id)
    assert encrypted.encrypted
    with pytest.raises(BadRequest):
        admin.delete_type_encryption(vtype.id)
    volumes.delete_volume(encrypted.id)
    admin.delete_type_encryption(vtype.id)
    assert admin.get_type_encryption(vtype.id) is None
    admin.delete_volume_type(vtype.id)
    with pytest.raises(NotFound):
        volumes.find_volume_type("luks")


def test_snapshot_source(contract_cloud):
    volumes = contract_cloud.client("block_storage")
    volume = volumes.create_volume({"size": 2})
    snapshot = volumes.create_snapshot({"volume_id": volume.id, "name": "snap"})
    assert volumes.find_snapshot("snap").status == "available"
    clone = volumes.get_volume(volumes.create_volume({"snapshot_id": snapshot.id}).id)
    assert clone.size == 2 and clone.status == "available"
    with pytest.raises(BadRequest):
        volumes.delete_volume(volume.id)
    volumes.delete_volume(volume.id, cascade=True)
    with pytest.raises(NotFound):
        volumes.get_snapshot(snapshot.id)
