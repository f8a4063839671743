"""Restoring a stack snapshot on the sandbox: volumes come back from the backups the
snapshot made, servers from its images (Heat's ``handle_restore``)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from engine_support import CALLER, Harness, sandbox_harness

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.engine.snapshot_restore import restored_template
from kiln.template.stack import StackIdentity

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  name: {type: string, default: first}
resources:
  data:
    type: OS::Cinder::Volume
    properties: {size: 1, name: {get_param: name}}
  from_image:
    type: OS::Cinder::Volume
    properties: {size: 1, image: cirros}
  server:
    type: OS::Nova::Server
    properties: {flavor: m1.tiny, image: cirros, networks: [{allocate_network: none}]}
"""


@pytest.fixture
def cloud() -> SandboxCloud:
    return build_cloud()


@pytest.fixture
def h(tmp_path: pathlib.Path, cloud: SandboxCloud) -> Harness:
    return sandbox_harness(tmp_path, cloud)


def physical(h: Harness, stack_id: str) -> dict[str, Any]:
    return {r.name: r.physical_id for r in h.service.resources(stack_id)}


def client(h: Harness, service: str) -> Any:
    assert h.deps.cloud is not None
    return h.deps.cloud.client(service, CloudScope(CALLER.project_id, CALLER.user_id))


def test_a_restored_stack_takes_its_volumes_from_the_backups_and_its_server_from_the_image(
    h: Harness, cloud: SandboxCloud
) -> None:
    sid = h.create(TEMPLATE)
    h.run()
    before = physical(h, sid)
    snapshot_id = h.service.snapshot_stack(CALLER, sid, "snap")
    h.run()
    kept = h.service.get_snapshot(CALLER, sid, snapshot_id).data["resources"]
    backups = {name: kept[name]["resource_data"]["backup_id"] for name in ("data", "from_image")}
    image = kept["server"]["resource_data"]["snapshot_image_id"]

    h.update(sid, TEMPLATE, parameters={"name": "second"})
    h.run()
    h.service.restore_snapshot(CALLER, sid, snapshot_id)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("RESTORE", "COMPLETE"), stack.status_reason

    after = physical(h, sid)
    restores = [str(c.target) for c in cloud.sim.call_log("block_storage", "restore_backup")]
    assert sorted(restores) == sorted(backups.values())
    # an empty volume is restored in place; one made from an image is replaced by a
    # volume restored from the backup (the image is no longer its source)
    assert after["data"] == before["data"]
    assert after["from_image"] != before["from_image"]
    volumes = client(h, "block_storage")
    assert volumes.get_volume(after["data"]).name == "first"
    assert volumes.get_volume(after["from_image"]).status == "available"
    # the server is rebuilt in place from the snapshot's image
    assert after["server"] == before["server"]
    assert [c.target for c in cloud.sim.call_log("compute", "rebuild_server")] == [before["server"]]
    assert client(h, "compute").get_server(after["server"]).image_id == image
    rows = {r.name: r for r in h.service.resources(sid)}
    assert rows["data"].properties["backup_id"] == backups["data"]
    assert rows["server"].properties["image"] == image


CFN = """
AWSTemplateFormatVersion: 2010-09-09
Resources:
  vol:
    Type: OS::Cinder::Volume
    Properties: {size: 2, image: cirros, name: {Ref: "AWS::StackName"}}
  other: {Type: OS::Heat::RandomString}
"""


def test_restored_templates_keep_everything_but_what_the_snapshot_replaces() -> None:
    from engine_support import REGISTRY

    from kiln.schema.custom import CustomConstraints
    from kiln.template.loader import load_template

    snapshot = {
        "template": load_template(CFN).data,
        "environment": {},
        "files": {},
        "resources": {
            "vol": {"type": "OS::Cinder::Volume", "resource_data": {"backup_id": "b-1"}},
            "other": {"type": "OS::Heat::RandomString", "resource_data": {"value": "x"}},
        },
    }
    restored = restored_template(
        snapshot,
        REGISTRY,
        REGISTRY.custom_constraints(CustomConstraints.offline()),
        StackIdentity(name="s", id="i", project_id="p"),
    )
    assert restored["Resources"]["vol"]["Properties"] == {
        "name": {"Ref": "AWS::StackName"},
        "backup_id": "b-1",
    }
    assert restored["Resources"]["other"] == {"Type": "OS::Heat::RandomString"}
    assert snapshot["template"]["Resources"]["vol"]["Properties"]["size"] == 2  # untouched
