"""Compute with the real network, image and block storage models: ports, volumes, images."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import DEMO
from kiln.cloud.api.errors import BadRequest, NotFound
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter


@pytest.fixture
def image_id(full: SandboxCloud) -> str:
    return str(next(i["id"] for i in full.store.list("image") if i["status"] == "active"))


@pytest.fixture
def network(full: SandboxCloud) -> dict[str, Any]:
    net = full.network.create_network(DEMO, {"name": "private"})
    full.network.create_subnet(
        DEMO, {"network_id": net["id"], "cidr": "10.0.0.0/24", "ip_version": 4, "name": "sub"}
    )
    return dict(net)


def test_server_on_network_gets_a_port_and_addresses(
    full: SandboxCloud, compute: ComputeAdapter, image_id: str, network: dict[str, Any]
):
    body = {
        "name": "vm",
        "imageRef": image_id,
        "flavorRef": "1",
        "networks": [{"uuid": network["id"]}],
    }
    server = compute.create_server(body)
    ports = full.network.ports_of_device(server.id)
    assert [p["device_owner"] for p in ports] == ["compute:nova"]
    assert list(compute.get_server(server.id).addresses) == ["private"]
    interfaces = compute.list_server_interfaces(server.id)
    assert [i.port_id for i in interfaces] == [ports[0]["id"]]
    compute.delete_server(server.id)
    with pytest.raises(NotFound):
        compute.get_server(server.id)
    assert full.network.ports_of_device(server.id) == []
    assert full.store.get("port", ports[0]["id"]) is None


def test_auto_network_and_interface_attach_detach(
    full: SandboxCloud, compute: ComputeAdapter, image_id: str, network: dict[str, Any]
):
    server = compute.create_server(
        {"name": "vm", "imageRef": image_id, "flavorRef": "1", "networks": "auto"}
    )
    assert len(compute.list_server_interfaces(server.id)) == 1
    own = full.network.create_port(DEMO, {"network_id": network["id"]})
    attached = compute.create_server_interface(server.id, {"port_id": own["id"]})
    assert attached.port_id == own["id"]
    assert len(compute.list_server_interfaces(server.id)) == 2
    compute.delete_server_interface(server.id, own["id"])
    assert full.store.get("port", own["id"])["device_id"] == ""
    with pytest.raises(NotFound):
        compute.delete_server_interface(server.id, own["id"])


def test_unknown_network_or_image(compute: ComputeAdapter, image_id: str):
    with pytest.raises(BadRequest, match="Network"):
        compute.create_server(
            {"name": "vm", "imageRef": image_id, "flavorRef": "1", "networks": [{"uuid": "nope"}]}
        )
    with pytest.raises(BadRequest, match="Image"):
        compute.create_server(
            {"name": "vm", "imageRef": "nope", "flavorRef": "1", "networks": "none"}
        )


def test_volume_attach_and_detach(full: SandboxCloud, compute: ComputeAdapter, image_id: str):
    server = compute.create_server(
        {"name": "vm", "imageRef": image_id, "flavorRef": "1", "networks": "none"}
    )
    volume = full.block_storage.create_volume(DEMO, {"size": 1, "name": "data"})
    attachment = compute.create_volume_attachment(server.id, volume["id"])
    assert (attachment.id, attachment.device) == (volume["id"], "/dev/vdb")
    assert full.block_storage.get_volume_internal(volume["id"])["status"] == "in-use"
    assert compute.get_server(server.id).attached_volume_ids == [volume["id"]]
    with pytest.raises(BadRequest):
        compute.create_volume_attachment(server.id, volume["id"])
    compute.delete_volume_attachment(server.id, volume["id"])
    with pytest.raises(NotFound):
        compute.get_volume_attachment(server.id, volume["id"])
    assert full.block_storage.get_volume_internal(volume["id"])["status"] == "available"


def test_boot_from_image_volume_deleted_on_termination(
    full: SandboxCloud, compute: ComputeAdapter, image_id: str
):
    bdm = {
        "boot_index": 0,
        "uuid": image_id,
        "source_type": "image",
        "destination_type": "volume",
        "volume_size": 1,
        "delete_on_termination": True,
    }
    server = compute.create_server(
        {
            "name": "vm",
            "imageRef": "",
            "flavorRef": "1",
            "networks": "none",
            "block_device_mapping_v2": [bdm],
        }
    )
    shown = compute.get_server(server.id)
    assert shown.status == "ACTIVE" and shown.raw["image"] == ""
    (volume_id,) = shown.attached_volume_ids
    assert full.block_storage.get_volume_internal(volume_id)["status"] == "in-use"
    compute.delete_server(server.id)
    with pytest.raises(NotFound):
        compute.get_server(server.id)
    gone = full.store.get("volume", volume_id)
    assert gone is None or gone["status"] == "deleting"


def test_create_image_snapshot(full: SandboxCloud, compute: ComputeAdapter, image_id: str):
    server = compute.create_server(
        {"name": "vm", "imageRef": image_id, "flavorRef": "1", "networks": "none"}
    )
    snapshot_id = compute.create_server_image(server.id, "snap")
    image = full.store.get("image", snapshot_id)
    assert image["instance_uuid"] == server.id and image["image_type"] == "snapshot"
    assert image["status"] == "active"
    assert compute.get_server(server.id).task_state is None
