"""OS::Cinder::EncryptedVolumeType against the sandbox (admin only)."""

from __future__ import annotations

from typing import Any

import pytest
from cinder_plugin_support import CinderSandbox

from kiln.cloud.api.errors import Forbidden
from kiln.resources.cinder.encrypted_volume_type import CinderEncryptedVolumeType
from kiln.testing.plugin_context import decide, fake_resource, run_action

LUKS = "nova.volume.encryptors.luks.LuksEncryptor"


@pytest.fixture
def sandbox() -> CinderSandbox:
    return CinderSandbox()


def encryption(
    sandbox: CinderSandbox, admin: bool = True, **properties: Any
) -> tuple[CinderEncryptedVolumeType, Any]:
    return fake_resource(
        CinderEncryptedVolumeType,
        {"provider": LUKS, "volume_type": "lvmdriver-1", **properties},
        clients=sandbox.clients(admin=admin),
        name="enc",
    )


def test_schema_matches_the_reference() -> None:
    schema = {n: s.to_dict() for n, s in CinderEncryptedVolumeType.properties_schema.items()}
    assert {n: (s["required"], s["update_allowed"]) for n, s in schema.items()} == {
        "provider": (True, True),
        "control_location": (False, True),
        "cipher": (False, True),
        "key_size": (False, True),
        "volume_type": (True, False),
    }
    assert schema["control_location"]["default"] == "front-end"
    assert schema["control_location"]["constraints"] == [
        {"allowed_values": ["front-end", "back-end"]}
    ]
    assert schema["cipher"]["constraints"] == [
        {"allowed_values": ["aes-xts-plain64", "aes-cbc-essiv"]}
    ]
    assert schema["volume_type"]["constraints"] == [{"custom_constraint": "cinder.vtype"}]
    assert list(CinderEncryptedVolumeType.attributes_schema) == []


def test_create_encrypts_the_type_named(sandbox: CinderSandbox) -> None:
    res, ctx = encryption(sandbox, cipher="aes-xts-plain64", key_size=256)
    assert res.find_existing() is None
    run_action(res, "create")
    type_id = sandbox.volumes().find_volume_type("lvmdriver-1").id
    assert ctx.physical_id == type_id
    spec = sandbox.volumes(admin=True).get_type_encryption(type_id)
    assert spec is not None
    assert (spec.provider, spec.cipher, spec.key_size, spec.control_location) == (
        LUKS,
        "aes-xts-plain64",
        256,
        "front-end",
    )
    assert res.get_attribute("show")["provider"] == LUKS
    assert res.find_existing() == type_id
    encrypted = sandbox.volumes().create_volume({"size": 1, "volume_type": "lvmdriver-1"})
    assert sandbox.volumes().get_volume(encrypted.id).encrypted


def test_settings_update_in_place_and_the_type_replaces(sandbox: CinderSandbox) -> None:
    res, ctx = encryption(sandbox, cipher="aes-xts-plain64")
    run_action(res, "create")
    new = {
        "provider": LUKS,
        "volume_type": "lvmdriver-1",
        "cipher": "aes-cbc-essiv",
        "control_location": "back-end",
    }
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    spec = sandbox.volumes(admin=True).get_type_encryption(str(ctx.physical_id))
    assert spec is not None
    assert (spec.cipher, spec.control_location) == ("aes-cbc-essiv", "back-end")
    assert decide(res, {**new, "volume_type": "__DEFAULT__"}).kind == "replace"


def test_delete_removes_the_encryption_and_tolerates_it_gone(sandbox: CinderSandbox) -> None:
    res, ctx = encryption(sandbox)
    run_action(res, "create")
    run_action(res, "delete")
    assert sandbox.volumes(admin=True).get_type_encryption(str(ctx.physical_id)) is None
    assert res.get_attribute("show") == {}
    run_action(res, "delete")


def test_a_project_member_may_not_encrypt_a_type(sandbox: CinderSandbox) -> None:
    res, _ = encryption(sandbox, admin=False)
    with pytest.raises(Forbidden):
        run_action(res, "create")
