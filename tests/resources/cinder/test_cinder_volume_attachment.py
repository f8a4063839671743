"""OS::Cinder::VolumeAttachment against the sandbox: attach through Nova, move, detach."""

from __future__ import annotations

from typing import Any

import pytest
from cinder_plugin_support import CinderSandbox

from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.plugin import ResourceFailure
from kiln.resources.cinder.volume_attachment import CinderVolumeAttachment
from kiln.testing.plugin_context import decide, fake_resource, run_action


@pytest.fixture
def sandbox() -> CinderSandbox:
    return CinderSandbox()


def attachment(sandbox: CinderSandbox, **properties: Any) -> tuple[CinderVolumeAttachment, Any]:
    return fake_resource(
        CinderVolumeAttachment, properties, clients=sandbox.clients(), name="attach"
    )


def test_schema_matches_the_reference() -> None:
    schema = {n: s.to_dict() for n, s in CinderVolumeAttachment.properties_schema.items()}
    assert {n: (s["required"], s["update_allowed"]) for n, s in schema.items()} == {
        "instance_uuid": (True, True),
        "volume_id": (True, True),
        "mountpoint": (False, True),
    }
    assert schema["volume_id"]["constraints"] == [{"custom_constraint": "cinder.volume"}]
    assert list(CinderVolumeAttachment.attributes_schema) == []


def test_create_attaches_the_volume_and_waits_for_in_use(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.volume.attach"] = 5
    server, volume_id = sandbox.server(), sandbox.volume(name="data")
    res, ctx = attachment(sandbox, instance_uuid=server, volume_id="data", mountpoint="/dev/vdc")
    cookie = res.handle_create()
    assert not res.check_create_complete(cookie)
    sandbox.clock.advance(6)
    assert res.check_create_complete(cookie)
    volume = sandbox.volumes().get_volume(volume_id)
    assert (volume.status, volume.attached_servers) == ("in-use", [server])
    assert ctx.physical_id == volume_id  # Nova's attachment id is the volume id
    shown = res.get_attribute("show")
    assert (shown["serverId"], shown["volumeId"], shown["device"]) == (
        server,
        volume_id,
        "/dev/vdc",
    )


def test_find_existing_finds_the_attachment(sandbox: CinderSandbox) -> None:
    server, volume_id = sandbox.server(), sandbox.volume()
    res, _ = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    assert res.find_existing() is None
    run_action(res, "create")
    assert res.find_existing() == volume_id


def test_an_attach_repeated_after_a_crash_goes_on(sandbox: CinderSandbox) -> None:
    server, volume_id = sandbox.server(), sandbox.volume()
    sandbox.attach(server, volume_id)
    res, ctx = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    run_action(res, "create")
    assert ctx.physical_id == volume_id


def test_attaching_a_volume_in_use_elsewhere_fails(sandbox: CinderSandbox) -> None:
    volume_id = sandbox.volume()
    sandbox.attach(sandbox.server("one"), volume_id)
    res, _ = attachment(sandbox, instance_uuid=sandbox.server("two"), volume_id=volume_id)
    with pytest.raises(BadRequest, match="status must be available"):
        run_action(res, "create")


def test_update_moves_the_volume_to_another_server(sandbox: CinderSandbox) -> None:
    first, second, volume_id = sandbox.server("one"), sandbox.server("two"), sandbox.volume()
    res, ctx = attachment(sandbox, instance_uuid=first, volume_id=volume_id)
    run_action(res, "create")
    new = {"instance_uuid": second, "volume_id": volume_id}
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    volume = sandbox.volumes().get_volume(volume_id)
    assert (volume.status, volume.attached_servers) == ("in-use", [second])
    with pytest.raises(NotFound):
        sandbox.compute().get_volume_attachment(first, volume_id)
    assert ctx.physical_id == volume_id


def test_update_swaps_the_volume(sandbox: CinderSandbox) -> None:
    server, old, new_volume = sandbox.server(), sandbox.volume(name="a"), sandbox.volume(name="b")
    res, ctx = attachment(sandbox, instance_uuid=server, volume_id=old)
    run_action(res, "create")
    run_action(res, "update", new_properties={"instance_uuid": server, "volume_id": new_volume})
    assert sandbox.volumes().get_volume(old).status == "available"
    assert sandbox.volumes().get_volume(new_volume).attached_servers == [server]
    assert ctx.physical_id == new_volume


def test_delete_detaches_and_waits_until_nova_forgets(sandbox: CinderSandbox) -> None:
    sandbox.cloud.sim.delays["block_storage.volume.detach"] = 5
    server, volume_id = sandbox.server(), sandbox.volume()
    res, _ = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    run_action(res, "create")
    cookie = res.handle_delete()
    assert not res.check_delete_complete(cookie)
    assert sandbox.volumes().get_volume(volume_id).status == "detaching"
    sandbox.clock.advance(6)
    assert res.check_delete_complete(cookie)
    assert sandbox.volumes().get_volume(volume_id).status == "available"
    assert res.get_attribute("show") is None


def test_delete_of_an_attachment_already_gone_is_done(sandbox: CinderSandbox) -> None:
    server, volume_id = sandbox.server(), sandbox.volume()
    res, _ = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    run_action(res, "create")
    sandbox.compute().delete_volume_attachment(server, volume_id)
    run_action(res, "delete")
    never, _ = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    assert run_action(never, "delete") == 1


def test_a_volume_going_to_error_fails_the_attach(sandbox: CinderSandbox) -> None:
    server, volume_id = sandbox.server(), sandbox.volume()
    sandbox.cloud.sim.delays["block_storage.volume.attach"] = 5
    res, _ = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    cookie = res.handle_create()
    sandbox.volumes(admin=True).reset_volume_status(volume_id, "error")
    with pytest.raises(ResourceFailure, match="Unknown status error"):
        res.check_create_complete(cookie)


def test_a_busy_server_is_asked_again_on_the_next_poll(sandbox: CinderSandbox) -> None:
    server, volume_id = sandbox.server(), sandbox.volume()
    sandbox.cloud.sim.add_fault(
        FaultRule(service="compute", operation="create_volume_attachment", status=409)
    )
    res, ctx = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    cookie = res.handle_create()
    assert ctx.physical_id is None
    assert res.check_create_complete(cookie)  # asked again, and attached at once
    assert ctx.physical_id == volume_id
    assert len(sandbox.cloud.sim.call_log("compute", "create_volume_attachment")) == 2


def test_a_busy_server_delays_the_detach(sandbox: CinderSandbox) -> None:
    server, volume_id = sandbox.server(), sandbox.volume()
    res, _ = attachment(sandbox, instance_uuid=server, volume_id=volume_id)
    run_action(res, "create")
    sandbox.cloud.sim.add_fault(
        FaultRule(service="compute", operation="delete_volume_attachment", status=409)
    )
    run_action(res, "delete")
    assert len(sandbox.cloud.sim.call_log("compute", "delete_volume_attachment")) == 2
    assert sandbox.volumes().get_volume(volume_id).status == "available"
