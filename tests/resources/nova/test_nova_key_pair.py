"""OS::Nova::KeyPair against the sandbox's compute service."""

from __future__ import annotations

import pytest
from nova_plugin_support import Cloud
from nova_schema_support import NO_DEFAULT, allowed, custom, table

from kiln.cloud.api.errors import NotFound
from kiln.plugin import ResourceFailure
from kiln.resources.nova.key_pair import KeyPair
from kiln.testing.plugin_context import decide, run_action

PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8Yb2ZtBb8mV3N7k3m6pYQq1X0b6Tn3l2uZyq7b9hC test"


def test_schema_matches_the_reference() -> None:
    assert table(KeyPair.properties_schema) == {
        "name": ("string", True, NO_DEFAULT, False, [{"length": {"min": 1, "max": 255}}]),
        "save_private_key": ("boolean", False, False, False, []),
        "public_key": ("string", False, NO_DEFAULT, False, []),
        "type": ("string", False, NO_DEFAULT, False, [allowed("ssh", "x509")]),
        "user": ("string", False, NO_DEFAULT, False, [custom("keystone.user")]),
    }
    assert set(KeyPair.attributes_schema) == {"public_key", "private_key"}


def test_generated_key_pair_keeps_its_private_key() -> None:
    cloud = Cloud(with_network=False)
    res, ctx = cloud.resource(KeyPair, {"name": "mykey", "save_private_key": True})
    run_action(res, "create")
    assert ctx.physical_id == "mykey" and res.reference_id() == "mykey"
    assert "PRIVATE KEY" in res.get_attribute("private_key")
    assert "private_key" in ctx.redacted
    assert res.get_attribute("public_key") == cloud.compute.get_keypair("mykey").public_key
    assert res.get_attribute("show")["name"] == "mykey"
    run_action(res, "check")
    run_action(res, "delete")
    with pytest.raises(NotFound):
        cloud.compute.get_keypair("mykey")
    run_action(res, "delete")  # already gone: still deleted


def test_imported_key_pair() -> None:
    cloud = Cloud(with_network=False)
    res, _ = cloud.resource(KeyPair, {"name": "k", "public_key": PUBLIC_KEY, "type": "ssh"})
    assert res.find_existing() is None
    run_action(res, "create")
    assert res.get_attribute("public_key") == PUBLIC_KEY
    assert res.get_attribute("private_key") == ""
    assert res.find_existing() == "k"


def test_private_key_not_kept_unless_asked() -> None:
    res, _ = Cloud(with_network=False).resource(KeyPair, {"name": "k2"})
    run_action(res, "create")
    assert res.get_attribute("private_key") == ""


def test_every_change_replaces() -> None:
    res, _ = Cloud(with_network=False).resource(KeyPair, {"name": "k"})
    assert decide(res, {"name": "other"}).kind == "replace"


def test_check_of_a_missing_key_pair_fails() -> None:
    cloud = Cloud(with_network=False)
    res, _ = cloud.resource(KeyPair, {"name": "gone"})
    run_action(res, "create")
    cloud.compute.delete_keypair("gone")
    with pytest.raises((NotFound, ResourceFailure)):
        run_action(res, "check")


def test_prepare_for_replace_frees_the_name_and_restore_imports_the_key_again() -> None:
    cloud = Cloud(with_network=False)
    old, ctx = cloud.resource(KeyPair, {"name": "k", "public_key": PUBLIC_KEY})
    run_action(old, "create")
    cookie = old.prepare_for_replace()
    assert cloud.compute.get_keypair("k").public_key == PUBLIC_KEY  # only recorded so far
    assert old.check_prepare_for_replace_complete(cookie)
    with pytest.raises(NotFound):
        cloud.compute.get_keypair("k")
    # the old resource forgot the pair: deleting it later spares the new pair of the name
    assert ctx.physical_id is None and old.find_existing() is None
    new, _ = cloud.resource(KeyPair, {"name": "k"})
    run_action(new, "create")  # a generated key under the same name
    assert old.check_restore_prev_rsrc_complete(old.restore_prev_rsrc("k"))
    assert cloud.compute.get_keypair("k").public_key == PUBLIC_KEY
    assert ctx.physical_id == "k"
    assert old.restore_prev_rsrc("k") is None  # nothing left to restore
