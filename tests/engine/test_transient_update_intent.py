"""A transient cloud error during an update in place retries the update, from the
intent it recorded, rather than taking the resumed step for a create."""

from __future__ import annotations

import pathlib

from engine_support import make_harness

from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.engine.cloud_constraints import register_cloud_constraints

VOLUME = """
heat_template_version: 2021-04-16
parameters:
  name: {type: string, default: first}
resources:
  vol: {type: OS::Cinder::Volume, properties: {size: 1, name: {get_param: name}}}
"""


def test_a_flaky_update_in_place_is_retried_as_an_update(tmp_path: pathlib.Path) -> None:
    cloud = build_cloud()
    h = make_harness(tmp_path)
    h.deps.cloud = SandboxConnector(cloud)
    register_cloud_constraints(h.deps.custom)
    sid = h.create(VOLUME)
    h.run()
    (volume,) = cloud.store.list("volume")
    cloud.sim.add_fault(FaultRule(service="block_storage", operation="update_volume", status=503))
    h.update(sid, VOLUME, parameters={"name": "second"})
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "COMPLETE"), stack.status_reason
    assert [(v["id"], v["name"]) for v in cloud.store.list("volume")] == [(volume["id"], "second")]
    assert len(cloud.sim.call_log("block_storage", "create_volume")) == 1
    assert [c.fault for c in cloud.sim.call_log("block_storage", "update_volume")] == [503, None]
