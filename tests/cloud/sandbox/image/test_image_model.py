"""The simulated Glance model: visibility, import and snapshot status machines, patches."""

from __future__ import annotations

import pytest

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, MultipleMatches, NotFound
from kiln.cloud.api.scope import CloudScope
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


def make_model(clock: Clock, delays: dict[str, float] | None = None) -> ImageModel:
    cloud = SandboxCloud(
        store=DocumentStore(now=clock), sim=Simulator(SandboxConfig(delays=delays or {}))
    )
    model = ImageModel(cloud)
    cloud.add("image", model)
    model.seed()
    return model


@pytest.fixture
def model(clock: Clock) -> ImageModel:
    return make_model(clock)


def new_image(model: ImageModel, scope: CloudScope = DEMO, **fields: object) -> dict:
    body = {"name": "img", "disk_format": "qcow2", "container_format": "bare", **fields}
    return model.create_image(scope, body)


def test_seed_is_idempotent_and_public(model: ImageModel) -> None:
    model.seed()
    names = sorted(i["name"] for i in model.list_images(DEMO))
    assert names == ["cirros", "cirros-0.6.2-x86_64-disk", "ubuntu-24.04"]
    for image in model.list_images(DEMO):
        assert image["status"] == "active" and image["owner"] is None
        assert image["visibility"] == "public" and image["size"] > 0


def test_get_by_non_uuid_is_not_found(model: ImageModel) -> None:
    with pytest.raises(NotFound):
        model.get_image(DEMO, "cirros")


def test_private_images_belong_to_their_project(model: ImageModel) -> None:
    image = new_image(model, visibility="private")
    assert model.get_image(DEMO, image["id"])["owner"] == "demo-project"
    assert model.get_image(ADMIN, image["id"])
    with pytest.raises(NotFound):
        model.get_image(OTHER, image["id"])
    with pytest.raises(Forbidden):
        model.delete_image(DEMO, model.get_image_internal("demo-project", "cirros")["id"])


def test_list_filters_and_paging(model: ImageModel) -> None:
    hidden = new_image(model, name="hidden", os_hidden=True)
    assert hidden["id"] not in [i["id"] for i in model.list_images(DEMO)]
    assert [i["id"] for i in model.list_images(DEMO, {"os_hidden": "true"})] == [hidden["id"]]
    assert [i["name"] for i in model.list_images(DEMO, {"name": "ubuntu-24.04"})] == [
        "ubuntu-24.04"
    ]
    first = model.list_images(DEMO, {"limit": "1"})
    rest = model.list_images(DEMO, {"marker": first[0]["id"]})
    assert len(first) == 1 and first[0] not in rest
    assert len(model.list_images(DEMO, {"status": "queued"})) == 0
    assert len(model.list_images(DEMO, {"visibility": "public"})) == 3
    with pytest.raises(BadRequest):
        model.list_images(DEMO, {"limit": "x"})


def test_create_validates_fields(model: ImageModel) -> None:
    with pytest.raises(BadRequest):
        new_image(model, disk_format="floppy")
    with pytest.raises(Forbidden):
        new_image(model, status="active")
    with pytest.raises(Forbidden):
        new_image(model, visibility="public")
    with pytest.raises(BadRequest):
        new_image(model, hw_disk_bus=3)
    assert new_image(model, hw_disk_bus="scsi")["hw_disk_bus"] == "scsi"


def test_import_runs_through_importing_with_a_delay(clock: Clock) -> None:
    model = make_model(clock, {"image.image.import": 5})
    image = new_image(model)
    model.import_image(DEMO, image["id"], {"method": {"name": "web-download", "uri": "http://x/y"}})
    assert model.get_image(DEMO, image["id"])["status"] == "importing"
    clock.now += 5
    done = model.get_image(DEMO, image["id"])
    assert done["status"] == "active" and done["checksum"]
    with pytest.raises(Conflict):
        model.import_image(
            DEMO, image["id"], {"method": {"name": "web-download", "uri": "http://x"}}
        )


def test_import_rules(model: ImageModel) -> None:
    bare = model.create_image(DEMO, {"name": "no formats"})
    with pytest.raises(Conflict):
        model.import_image(
            DEMO, bare["id"], {"method": {"name": "web-download", "uri": "http://x"}}
        )
    image = new_image(model)
    with pytest.raises(BadRequest):
        model.import_image(DEMO, image["id"], {"method": {"name": "glance-direct"}})
    with pytest.raises(BadRequest):
        model.import_image(
            DEMO, image["id"], {"method": {"name": "web-download", "uri": "ftp://x"}}
        )


def test_import_outcome_fault_kills_the_image(model: ImageModel) -> None:
    model.cloud.sim.add_fault(
        FaultRule(service="image", operation="import_image", final_state="ERROR")
    )
    image = new_image(model)
    model.import_image(DEMO, image["id"], {"method": {"name": "web-download", "uri": "http://x"}})
    assert model.get_image(DEMO, image["id"])["status"] == "killed"


def test_json_patch(model: ImageModel) -> None:
    image = new_image(model, os_distro="fedora")
    ops = [
        {"op": "replace", "path": "/name", "value": "renamed"},
        {"op": "add", "path": "/os_version", "value": "40"},
        {"op": "remove", "path": "/os_distro"},
        {"op": "add", "path": "/tags/-", "value": "t1"},
    ]
    patched = model.update_image(DEMO, image["id"], ops)
    assert patched["name"] == "renamed" and patched["os_version"] == "40"
    assert "os_distro" not in patched and patched["tags"] == ["t1"]
    with pytest.raises(Conflict):
        model.update_image(DEMO, image["id"], [{"op": "add", "path": "/os_version", "value": "1"}])
    with pytest.raises(Conflict):
        model.update_image(DEMO, image["id"], [{"op": "remove", "path": "/nothing"}])
    with pytest.raises(Forbidden):
        model.update_image(DEMO, image["id"], [{"op": "replace", "path": "/size", "value": 1}])
    with pytest.raises(BadRequest):
        model.update_image(DEMO, image["id"], [{"op": "replace", "path": "/min_ram", "value": -1}])
    # a failed patch leaves the image as it was
    assert model.get_image(DEMO, image["id"])["min_ram"] == 0


def test_protected_images_cannot_be_deleted(model: ImageModel) -> None:
    image = new_image(model, protected=True)
    with pytest.raises(Forbidden):
        model.delete_image(DEMO, image["id"])
    model.update_image(DEMO, image["id"], [{"op": "replace", "path": "/protected", "value": False}])
    model.delete_image(DEMO, image["id"])
    with pytest.raises(NotFound):
        model.get_image(DEMO, image["id"])


def test_tags(model: ImageModel) -> None:
    image = new_image(model)
    model.add_tag(DEMO, image["id"], "x")
    model.add_tag(DEMO, image["id"], "x")
    assert model.get_image(DEMO, image["id"])["tags"] == ["x"]
    model.remove_tag(DEMO, image["id"], "x")
    with pytest.raises(NotFound):
        model.remove_tag(DEMO, image["id"], "x")


def test_get_image_internal(model: ImageModel) -> None:
    cirros = model.get_image_internal("demo-project", "cirros")
    assert model.get_image_internal("demo-project", cirros["id"]) is cirros
    new_image(model, name="twin")
    new_image(model, name="twin")
    with pytest.raises(MultipleMatches):
        model.get_image_internal("demo-project", "twin")
    private = new_image(model, scope=OTHER, visibility="private", name="theirs")
    with pytest.raises(NotFound):
        model.get_image_internal("demo-project", private["id"])


def test_snapshot_image_runs_queued_saving_active(clock: Clock) -> None:
    model = make_model(clock, {"image.image.snapshot": 10})
    image = model.create_snapshot_image(
        "demo-project", "snap", {"image_type": "snapshot", "instance_uuid": "srv", "min_disk": 1}
    )
    assert image["status"] == "queued"
    seen = model.get_image(DEMO, image["id"])
    assert seen["status"] == "saving" and seen["visibility"] == "private"
    assert seen["image_type"] == "snapshot" and seen["instance_uuid"] == "srv"
    assert seen["min_disk"] == 1
    clock.now += 10
    assert model.get_image(DEMO, image["id"])["status"] == "active"
