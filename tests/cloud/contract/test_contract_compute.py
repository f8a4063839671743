"""The compute contract: the same scenarios through the in-process and openstacksdk adapters."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound

BODY: dict[str, Any] = {"name": "vm", "imageRef": "", "flavorRef": "1", "networks": "none"}


def _body(contract_cloud: Any) -> dict[str, Any]:
    """A bootable server body: a seeded image when the sandbox has one."""
    images = contract_cloud.sandbox.store.list("image")
    active = [i for i in images if i.get("status") == "active" and i.get("visibility") == "public"]
    if not active:
        pytest.skip("the sandbox has no public active image to boot from")
    return {**BODY, "imageRef": active[0]["id"]}


def test_microversion(contract_cloud: Any) -> None:
    assert contract_cloud.client("compute").microversion() == "2.90"


def test_server_lifecycle(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    server = compute.create_server({**_body(contract_cloud), "metadata": {"a": "1"}})
    shown = compute.get_server(server.id)
    assert shown.status == "ACTIVE"
    assert shown.flavor["original_name"] == "m1.tiny"
    assert compute.find_server("vm").id == server.id
    compute.suspend_server(server.id)
    assert compute.get_server(server.id).status == "SUSPENDED"
    with pytest.raises(Conflict):
        compute.suspend_server(server.id)
    compute.resume_server(server.id)
    compute.resize_server(server.id, "2")
    assert compute.get_server(server.id).status == "VERIFY_RESIZE"
    compute.confirm_server_resize(server.id)
    assert compute.get_server(server.id).flavor["original_name"] == "m1.small"
    assert compute.set_server_metadata(server.id, {"b": "2"}) == {"a": "1", "b": "2"}
    assert compute.set_server_tags(server.id, ["t"]) == ["t"]
    assert compute.update_server(server.id, {"name": "vm2"}).name == "vm2"
    compute.delete_server(server.id)
    with pytest.raises(NotFound):
        compute.get_server(server.id)


def test_snapshot_image(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    server = compute.create_server(_body(contract_cloud))
    image_id = compute.create_server_image(server.id, "snap")
    image = contract_cloud.sandbox.store.get("image", image_id)
    assert image is not None and image["instance_uuid"] == server.id


def test_create_errors(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    with pytest.raises(BadRequest):
        compute.create_server({**BODY, "imageRef": "x", "flavorRef": "nope"})
    with pytest.raises(NotFound):
        compute.get_server("00000000-0000-0000-0000-000000000000")


def test_flavors(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    admin = contract_cloud.client("compute", admin=True)
    assert compute.find_flavor("m1.xlarge").ram == 16384
    made = admin.create_flavor(
        {"name": "private", "ram": 128, "vcpus": 1, "disk": 1, "os-flavor-access:is_public": False}
    )
    admin.set_flavor_extra_specs(made.id, {"hw:cpu_policy": "dedicated"})
    assert admin.get_flavor(made.id).extra_specs == {"hw:cpu_policy": "dedicated"}
    admin.add_flavor_access(made.id, "some-project")
    assert admin.get_flavor_access(made.id) == ["some-project"]
    admin.delete_flavor(made.id)
    with pytest.raises(NotFound):
        admin.get_flavor(made.id)


def test_keypairs(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    made = compute.create_keypair({"name": "contract-key"})
    assert made.private_key and made.public_key
    assert compute.get_keypair("contract-key").fingerprint == made.fingerprint
    assert "contract-key" in [k.name for k in compute.list_keypairs()]
    compute.delete_keypair("contract-key")
    with pytest.raises(NotFound):
        compute.get_keypair("contract-key")


def test_server_groups(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    group = compute.create_server_group({"name": "grp", "policy": "soft-anti-affinity"})
    assert compute.find_server_group("grp").policies == ["soft-anti-affinity"]
    compute.delete_server_group(group.id)
    with pytest.raises(NotFound):
        compute.get_server_group(group.id)


def test_limits_and_zones(contract_cloud: Any) -> None:
    compute = contract_cloud.client("compute")
    assert compute.get_limits()["maxServerMeta"] == 128
    assert compute.list_availability_zones() == ["nova"]
