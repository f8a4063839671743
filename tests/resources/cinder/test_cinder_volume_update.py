"""OS::Cinder::Volume updates in place, and its backups (deletion_policy Snapshot, snapshots)."""

from __future__ import annotations

from typing import Any

import pytest
from cinder_plugin_support import CinderSandbox

from kiln.cloud.api.errors import NotFound
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.plugin import ResourceFailure
from kiln.resources.cinder._volume_update import extends_attached
from kiln.resources.cinder.volume import CinderVolume
from kiln.testing.plugin_context import fake_resource, run_action


@pytest.fixture
def sandbox() -> CinderSandbox:
    return CinderSandbox()


def created(sandbox: CinderSandbox, **properties: Any) -> CinderVolume:
    res, _ = fake_resource(CinderVolume, properties, clients=sandbox.clients(), name="vol")
    run_action(res, "create")
    return res


def live(sandbox: CinderSandbox, res: CinderVolume) -> Any:
    return sandbox.volumes().get_volume(str(res.ctx.physical_id))


def test_name_description_and_metadata_update_at_once(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1, name="a", metadata={"x": "1", "y": "2"})
    new = {"size": 1, "name": "b", "description": "now", "metadata": {"y": "3"}}
    assert run_action(res, "update", new_properties=new) == 1
    volume = live(sandbox, res)
    assert (volume.name, volume.raw["description"]) == ("b", "now")
    assert volume.metadata == {"y": "3"}


def test_removing_the_name_restores_the_physical_name(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1, name="a")
    run_action(res, "update", new_properties={"size": 1})
    assert live(sandbox, res).name == res.ctx.physical_resource_name()


def test_a_larger_size_extends_the_volume(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.volume.extend"] = 5
    res = created(sandbox, size=1)
    cookie = res.handle_update({"size": 3}, {"size": 3})
    assert not res.check_update_complete(cookie)
    assert live(sandbox, res).status == "extending"
    sandbox.clock.advance(6)
    assert res.check_update_complete(cookie)
    assert live(sandbox, res).size == 3


def test_an_attached_volume_is_extended_in_use(sandbox: CinderSandbox) -> None:
    assert extends_attached()  # the clients speak microversion 3.42 or later
    res = created(sandbox, size=1)
    server = sandbox.server()
    sandbox.attach(server, str(res.ctx.physical_id))
    run_action(res, "update", new_properties={"size": 2})
    volume = live(sandbox, res)
    assert (volume.size, volume.status, volume.attached_servers) == (2, "in-use", [server])
    assert sandbox.compute().get_volume_attachment(server, volume.id).server_id == server


def test_a_smaller_size_is_refused_before_anything_changes(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=2, name="a")
    with pytest.raises(ResourceFailure, match="Shrinking volume is not supported"):
        run_action(res, "update", new_properties={"size": 1, "name": "b"})
    assert (live(sandbox, res).size, live(sandbox, res).name) == (2, "a")


def test_a_new_type_retypes_the_volume(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.volume.retype"] = 5
    res = created(sandbox, size=1)
    cookie = res.handle_update({"volume_type": "lvmdriver-1"}, {"volume_type": "lvmdriver-1"})
    assert not res.check_update_complete(cookie)
    sandbox.clock.advance(6)
    assert res.check_update_complete(cookie)
    assert live(sandbox, res).volume_type == "lvmdriver-1"
    assert res.ctx.data["volume_type"] == "lvmdriver-1"
    assert res.get_attribute("volume_type") == "lvmdriver-1"


def test_the_read_only_flag_of_an_attached_volume_is_set_while_detached(
    sandbox: CinderSandbox,
) -> None:
    res = created(sandbox, size=1)
    server = sandbox.server()
    sandbox.attach(server, str(res.ctx.physical_id))
    device = live(sandbox, res).attachments[0]["device"]
    run_action(res, "update", new_properties={"size": 1, "read_only": True})
    volume = live(sandbox, res)
    assert volume.metadata["readonly"] == "True"
    assert (volume.status, volume.attached_servers) == ("in-use", [server])
    assert volume.attachments[0]["device"] == device
    detaches = sandbox.cloud.sim.call_log("compute", "delete_volume_attachment")
    assert len(detaches) == 1


def test_a_new_backup_is_restored_into_the_volume(sandbox: CinderSandbox) -> None:
    source = sandbox.volume(size=1, name="source")
    backup = sandbox.backup(source)
    res = created(sandbox, size=1)
    run_action(res, "update", new_properties={"size": 1, "backup_id": backup})
    assert live(sandbox, res).status == "available"
    restores = sandbox.cloud.sim.call_log("block_storage", "restore_backup")
    assert [c.target for c in restores] == [backup]


def test_deletion_policy_snapshot_keeps_a_backup(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.backup.create"] = 5
    res = created(sandbox, size=1)
    volume_id = str(res.ctx.physical_id)
    cookie = res.handle_snapshot_delete()
    assert not res.check_snapshot_delete_complete(cookie)
    sandbox.clock.advance(6)
    polls = 0
    while not res.check_snapshot_delete_complete(cookie):
        polls += 1
        assert polls < 10
    backups = sandbox.volumes().list_backups(volume_id=volume_id)
    assert [b.status for b in backups] == ["available"]
    with pytest.raises(NotFound):
        sandbox.volumes().get_volume(volume_id)


def test_deletion_policy_snapshot_fails_when_the_backup_fails(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.add_fault(
        FaultRule(service="block_storage", operation="create_backup", final_state="ERROR")
    )
    res = created(sandbox, size=1)
    cookie = res.handle_snapshot_delete()
    with pytest.raises(ResourceFailure, match="went to status error"):
        res.check_snapshot_delete_complete(cookie)
    assert live(sandbox, res).status == "available"  # the volume is kept


def test_deletion_policy_snapshot_of_a_volume_gone_is_done(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1)
    run_action(res, "delete")
    cookie = res.handle_snapshot_delete()
    assert res.check_snapshot_delete_complete(cookie)


def test_a_stack_snapshot_records_the_backup(sandbox: CinderSandbox) -> None:
    res = created(sandbox, size=1)
    run_action(res, "snapshot")
    backup = sandbox.volumes().get_backup(res.ctx.data["backup_id"])
    assert (backup.status, backup.volume_id) == ("available", res.ctx.physical_id)
