"""ImageApi scenarios through both adapters (in process, and openstacksdk over HTTP)."""

from __future__ import annotations

import pytest

from kiln.cloud.api.errors import Forbidden, NotFound
from kiln.cloud.sandbox.simulator import FaultRule


def test_seed_images_are_found_by_name_and_id(contract_cloud):
    images = contract_cloud.client("image")
    cirros = images.find_image("cirros-0.6.2-x86_64-disk")
    assert cirros.status == "active"
    assert cirros.visibility == "public"
    assert cirros.disk_format == "qcow2"
    assert images.get_image(cirros.id).name == "cirros-0.6.2-x86_64-disk"
    assert images.find_image("cirros").id != cirros.id
    ubuntu = images.find_image("ubuntu-24.04")
    assert ubuntu.min_disk >= 1 and (ubuntu.size or 0) > (cirros.size or 0)


def test_unknown_and_non_uuid_images_are_not_found(contract_cloud):
    images = contract_cloud.client("image")
    with pytest.raises(NotFound):
        images.get_image("not-a-uuid")
    with pytest.raises(NotFound):
        images.find_image("no-such-image")


def test_web_image_lifecycle(contract_cloud):
    images = contract_cloud.client("image")
    created = images.create_image(
        {
            "name": "web",
            "disk_format": "qcow2",
            "container_format": "bare",
            "min_disk": 1,
            "os_distro": "fedora",
            "tags": ["a"],
        }
    )
    assert created.status == "queued"
    assert created["os_distro"] == "fedora"
    images.import_image(created.id, "https://example.com/fedora.qcow2")
    active = images.get_image(created.id)
    assert active.status == "active"
    assert (active.size or 0) > 0

    updated = images.update_image(
        created.id, {"name": "web2", "min_ram": 256, "os_version": "40", "os_distro": None}
    )
    assert updated.name == "web2" and updated.min_ram == 256
    assert updated["os_version"] == "40" and "os_distro" not in updated

    tagged = images.set_image_tags(created.id, ["b", "c"])
    assert sorted(tagged.tags) == ["b", "c"]

    images.update_image(created.id, {"protected": True})
    with pytest.raises(Forbidden):
        images.delete_image(created.id)
    images.update_image(created.id, {"protected": False})
    images.delete_image(created.id)
    with pytest.raises(NotFound):
        images.get_image(created.id)


def test_failed_import_ends_killed(contract_cloud):
    contract_cloud.sandbox.sim.add_fault(
        FaultRule(service="image", operation="import_image", final_state="killed")
    )
    images = contract_cloud.client("image")
    created = images.create_image({"name": "bad", "disk_format": "raw", "container_format": "bare"})
    images.import_image(created.id, "http://example.com/bad.img")
    assert images.get_image(created.id).status == "killed"


def test_private_images_are_invisible_to_other_projects(contract_cloud):
    admin_images = contract_cloud.client("image", admin=True)
    private = admin_images.create_image(
        {
            "name": "secret",
            "disk_format": "raw",
            "container_format": "bare",
            "visibility": "private",
        }
    )
    images = contract_cloud.client("image")
    with pytest.raises(NotFound):
        images.get_image(private.id)
    assert "secret" not in [i.name for i in images.list_images()]
    with pytest.raises(Forbidden):
        images.delete_image(images.find_image("cirros").id)
