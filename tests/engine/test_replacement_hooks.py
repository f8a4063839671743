"""Replacing ports, servers and key pairs on the sandbox: the old resource's
``prepare_for_replace`` frees what its replacement takes (addresses, ports, a name),
and a rollback that goes back to the old resource (``restore_prev_rsrc``) takes it
back. Engine steps, the in-process sandbox cloud, real plugins."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from engine_support import CALLER, Harness, sandbox_harness

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute import keygen
from kiln.cloud.sandbox.simulator import FaultRule
from kiln.db.tasks import NodeTask
from kiln.engine.step_replace import PREPARING, RESTORING


@pytest.fixture
def cloud() -> SandboxCloud:
    return build_cloud()


@pytest.fixture
def h(tmp_path: pathlib.Path, cloud: SandboxCloud) -> Harness:
    return sandbox_harness(tmp_path, cloud)


def status(h: Harness, stack_id: str) -> tuple[str, str]:
    stack = h.service.get_stack(stack_id)
    return stack.action, stack.status


def row(h: Harness, stack_id: str, name: str) -> Any:
    """The resource row the stack shows for ``name`` (the current one)."""
    (found,) = [r for r in h.service.resources(stack_id) if r.name == name]
    return found


def stored(cloud: SandboxCloud, kind: str, doc_id: str) -> dict[str, Any]:
    found = cloud.store.get(kind, doc_id)
    assert found is not None, f"no {kind} {doc_id}"
    return found


def ports_on(cloud: SandboxCloud, network_id: str) -> list[dict[str, Any]]:
    return [p for p in cloud.store.list("port") if p["network_id"] == network_id]


def addresses(port: dict[str, Any]) -> list[str]:
    return [ip["ip_address"] for ip in port["fixed_ips"]]


def first_call(cloud: SandboxCloud, since: int, operation: str, target: str | None = None) -> int:
    """Where the first ``operation`` (on ``target``) is in the call log after ``since``."""
    calls = cloud.sim.call_log()
    return next(
        i
        for i in range(since, len(calls))
        if calls[i].operation == operation and target in (None, calls[i].target)
    )


# -- ports ---------------------------------------------------------------------------------
PORT = """
heat_template_version: 2021-04-16
parameters:
  mac: {type: string, default: "fa:16:3e:00:00:01"}
  fail: {type: boolean, default: false}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.1.0.0/24}
  port:
    type: OS::Neutron::Port
    properties:
      network: {get_resource: net}
      mac_address: {get_param: mac}
      fixed_ips: [{subnet: {get_resource: subnet}, ip_address: 10.1.0.50}]
  after:
    type: OS::Heat::TestResource
    properties: {value: {get_resource: port}, fail: {get_param: fail}}
outputs:
  ip: {value: {get_attr: [port, fixed_ips, 0, ip_address]}}
"""
NEW_MAC = {"mac": "fa:16:3e:00:00:02"}


def test_a_replaced_port_gives_its_address_to_the_new_port(h: Harness, cloud: SandboxCloud) -> None:
    sid = h.create(PORT)
    h.run()
    old = row(h, sid, "port").physical_id
    since = len(cloud.sim.call_log())
    h.update(sid, PORT, parameters=NEW_MAC)  # a new MAC address replaces the port
    h.run()
    assert status(h, sid) == ("UPDATE", "COMPLETE"), h.service.get_stack(sid).status_reason
    new = row(h, sid, "port").physical_id
    assert new != old
    (port,) = ports_on(cloud, row(h, sid, "net").physical_id)
    assert (port["id"], addresses(port)) == (new, ["10.1.0.50"])
    assert port["mac_address"] == NEW_MAC["mac"]
    # the old port let go of its address before the new one asked for it
    assert first_call(cloud, since, "update_port", old) < first_call(cloud, since, "create_port")
    assert h.outputs(sid) == {"ip": "10.1.0.50"}


def test_a_rolled_back_port_replacement_gives_the_old_port_its_address_back(
    h: Harness, cloud: SandboxCloud
) -> None:
    sid = h.create(PORT, disable_rollback=False)
    h.run()
    old = row(h, sid, "port").physical_id
    h.update(sid, PORT, parameters={**NEW_MAC, "fail": True}, disable_rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert row(h, sid, "port").physical_id == old  # the old port, not a third one
    (port,) = ports_on(cloud, row(h, sid, "net").physical_id)
    assert (port["id"], addresses(port)) == (old, ["10.1.0.50"])
    assert port["mac_address"] == "fa:16:3e:00:00:01"
    assert h.outputs(sid) == {"ip": "10.1.0.50"}
    # the old row is the stack's again, not replaced by anything
    rows = [r for r in h.service.resources(sid) if r.name == "port"]
    assert [(r.physical_id, r.replaced_by) for r in rows] == [(old, None)]


class Crash(BaseException):
    """An engine dies at a step boundary."""


def run_through_crashes(h: Harness) -> None:
    for _ in range(10):
        try:
            h.run()
            return
        except Crash:
            h.clock.advance(h.deps.lease.total_seconds() + 1)  # the dead engine's lease ends
    raise AssertionError("still crashing")


@pytest.mark.parametrize("point", ["before_handle", "after_handle", "before_outcome"])
def test_an_engine_dying_in_the_replacement_hooks_resumes_them(
    h: Harness, cloud: SandboxCloud, point: str
) -> None:
    # the port is replaced (prepare_for_replace), then the update fails and the
    # rollback goes back to the old port (restore_prev_rsrc); an engine dies once in each
    sid = h.create(PORT, disable_rollback=False)
    h.run()
    old = row(h, sid, "port").physical_id
    crashes: list[str | None] = []

    def die_once(at: str, task: NodeTask) -> None:
        if at == point and task.phase in (PREPARING, RESTORING) and task.phase not in crashes:
            crashes.append(task.phase)
            raise Crash(f"{task.phase} {at}")

    h.deps.fault_point = die_once
    h.update(sid, PORT, parameters={**NEW_MAC, "fail": True}, disable_rollback=False)
    run_through_crashes(h)
    assert crashes == [PREPARING, RESTORING]
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    (port,) = ports_on(cloud, row(h, sid, "net").physical_id)
    assert (port["id"], addresses(port)) == (old, ["10.1.0.50"])
    assert len(cloud.sim.call_log("network", "create_port")) == 2  # the first and its one heir


def test_an_engine_dying_after_the_address_is_freed_resumes_the_replacement(
    h: Harness, cloud: SandboxCloud
) -> None:
    sid = h.create(PORT)
    h.run()
    old = row(h, sid, "port").physical_id
    crashes: list[str] = []

    def die_once(point: str, task: NodeTask) -> None:
        # once right after prepare_for_replace ran (nothing stored), once after its check
        # freed the address (before the step moved on to the new port's create)
        if task.resource_name != "port" or task.phase != PREPARING or point in crashes:
            return
        prepared = bool((task.cookie or {}).get("prepared"))
        if (point, prepared) in (("after_handle", False), ("before_outcome", True)):
            crashes.append(point)
            raise Crash(point)

    h.deps.fault_point = die_once
    h.update(sid, PORT, parameters=NEW_MAC)
    run_through_crashes(h)
    assert crashes == ["after_handle", "before_outcome"]
    assert status(h, sid) == ("UPDATE", "COMPLETE"), h.service.get_stack(sid).status_reason
    (port,) = ports_on(cloud, row(h, sid, "net").physical_id)
    assert port["id"] != old and addresses(port) == ["10.1.0.50"]
    assert len(cloud.sim.call_log("network", "create_port")) == 2  # the first and its one heir


def test_a_transient_error_in_prepare_is_retried(h: Harness, cloud: SandboxCloud) -> None:
    sid = h.create(PORT)
    h.run()
    cloud.sim.add_fault(FaultRule(service="network", operation="update_port", status=503, count=2))
    h.update(sid, PORT, parameters=NEW_MAC)
    h.run()
    assert status(h, sid) == ("UPDATE", "COMPLETE"), h.service.get_stack(sid).status_reason
    assert [c.fault for c in cloud.sim.call_log("network", "update_port")] == [503, 503, None]
    (port,) = ports_on(cloud, row(h, sid, "net").physical_id)
    assert addresses(port) == ["10.1.0.50"]


def test_a_permanent_error_in_prepare_fails_the_old_port(h: Harness, cloud: SandboxCloud) -> None:
    sid = h.create(PORT)
    h.run()
    old = row(h, sid, "port").physical_id
    cloud.sim.add_fault(
        FaultRule(service="network", operation="update_port", status=400, message="No way")
    )
    h.update(sid, PORT, parameters=NEW_MAC)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("UPDATE", "FAILED")
    assert stack.status_reason.startswith("Resource UPDATE failed: BadRequest: resources.port:")
    assert "No way" in stack.status_reason
    port = row(h, sid, "port")
    assert (port.physical_id, port.action, port.status) == (old, "UPDATE", "FAILED")
    assert [r.name for r in h.service.resources(sid)].count("port") == 1  # no replacement row
    # the next update replaces it for good
    h.update(sid, PORT, parameters=NEW_MAC)
    h.run()
    assert status(h, sid) == ("UPDATE", "COMPLETE"), h.service.get_stack(sid).status_reason
    (live,) = ports_on(cloud, row(h, sid, "net").physical_id)
    assert live["id"] != old and addresses(live) == ["10.1.0.50"]


# -- servers -------------------------------------------------------------------------------
SERVER = """
heat_template_version: 2021-04-16
parameters:
  ud: {type: string, default: one}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.2.0.0/24}
  port:
    type: OS::Neutron::Port
    properties: {network: {get_resource: net}, fixed_ips: [{subnet: {get_resource: subnet}}]}
  server:
    type: OS::Nova::Server
    properties:
      flavor: m1.tiny
      image: cirros
      user_data_format: RAW
      user_data: {get_param: ud}
      networks: [{port: {get_resource: port}}]
"""


def server_addresses(h: Harness, server_id: str) -> set[str]:
    """The addresses Nova shows for the server."""
    assert h.deps.cloud is not None
    compute = h.deps.cloud.client("compute", CloudScope(CALLER.project_id, CALLER.user_id))
    shown = compute.get_server(server_id).addresses
    return {str(a["addr"]) for addrs in shown.values() for a in addrs}


def test_a_replaced_server_hands_its_port_to_the_new_server(
    h: Harness, cloud: SandboxCloud
) -> None:
    sid = h.create(SERVER)
    h.run()
    old = row(h, sid, "server").physical_id
    port_id = row(h, sid, "port").physical_id
    since = len(cloud.sim.call_log())
    h.update(sid, SERVER, parameters={"ud": "two"})  # user_data_update_policy REPLACE
    h.run()
    assert status(h, sid) == ("UPDATE", "COMPLETE"), h.service.get_stack(sid).status_reason
    new = row(h, sid, "server").physical_id
    assert new != old
    assert [s["id"] for s in cloud.store.list("server")] == [new]
    assert stored(cloud, "port", port_id)["device_id"] == new
    # the old server let go of the port before the new one was asked for
    detached = first_call(cloud, since, "delete_server_interface", old)
    assert detached < first_call(cloud, since, "create_server")


def test_a_failed_server_replacement_rolled_back_gives_the_old_server_its_port(
    h: Harness, cloud: SandboxCloud
) -> None:
    sid = h.create(SERVER, disable_rollback=False)
    h.run()
    old = row(h, sid, "server").physical_id
    port_id = row(h, sid, "port").physical_id
    address = addresses(stored(cloud, "port", port_id))[0]
    cloud.sim.add_fault(
        FaultRule(service="compute", operation="create_server", final_state="ERROR")
    )
    h.update(sid, SERVER, parameters={"ud": "two"}, disable_rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert row(h, sid, "server").physical_id == old
    assert [s["id"] for s in cloud.store.list("server")] == [old]  # the broken one is gone
    assert stored(cloud, "port", port_id)["device_id"] == old
    assert address in server_addresses(h, old)


TWO_NICS = SERVER.replace(
    "  ud: {type: string, default: one}",
    "  ud: {type: string, default: one}\n  fail: {type: boolean, default: false}",
).replace(
    "      networks: [{port: {get_resource: port}}]",
    "      networks:\n"
    "      - port: {get_resource: port}\n"
    "      - {network: {get_resource: net}, fixed_ip: 10.2.0.77}\n"
    "  after:\n"
    "    type: OS::Heat::TestResource\n"
    "    properties: {value: {get_resource: server}, fail: {get_param: fail}}",
)


def test_a_rolled_back_server_replacement_takes_its_ports_back_from_the_new_server(
    h: Harness, cloud: SandboxCloud
) -> None:
    # the new server was made (with the user's port and a Nova port on the old address);
    # a later resource fails; the rollback goes back to the old server
    sid = h.create(TWO_NICS, disable_rollback=False)
    h.run()
    old = row(h, sid, "server").physical_id
    port_id = row(h, sid, "port").physical_id
    before = server_addresses(h, old)
    assert "10.2.0.77" in before and len(before) == 2
    h.update(sid, TWO_NICS, parameters={"ud": "two", "fail": True}, disable_rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert row(h, sid, "server").physical_id == old
    assert [s["id"] for s in cloud.store.list("server")] == [old]
    assert stored(cloud, "port", port_id)["device_id"] == old
    assert server_addresses(h, old) == before
    assert len(cloud.sim.call_log("compute", "create_server")) == 2  # no third server


# -- key pairs -----------------------------------------------------------------------------
KEY_PAIR = """
heat_template_version: 2021-04-16
parameters:
  public: {type: string}
  fail: {type: boolean, default: false}
resources:
  key:
    type: OS::Nova::KeyPair
    properties: {name: stack-key, public_key: {get_param: public}}
  after:
    type: OS::Heat::TestResource
    properties: {value: {get_param: public}, fail: {get_param: fail}}
"""
FIRST_KEY = keygen.generate("ssh", "first")[1]
SECOND_KEY = keygen.generate("ssh", "second")[1]


def live_key(cloud: SandboxCloud) -> list[str]:
    return [k["public_key"] for k in cloud.store.list("keypair") if k["name"] == "stack-key"]


def test_a_replaced_key_pair_keeps_its_name(h: Harness, cloud: SandboxCloud) -> None:
    sid = h.create(KEY_PAIR, parameters={"public": FIRST_KEY})
    h.run()
    h.update(sid, KEY_PAIR, parameters={"public": SECOND_KEY})
    h.run()
    assert status(h, sid) == ("UPDATE", "COMPLETE"), h.service.get_stack(sid).status_reason
    assert live_key(cloud) == [SECOND_KEY]


def test_a_rolled_back_key_pair_replacement_brings_the_old_key_back(
    h: Harness, cloud: SandboxCloud
) -> None:
    sid = h.create(KEY_PAIR, parameters={"public": FIRST_KEY}, disable_rollback=False)
    h.run()
    h.update(sid, KEY_PAIR, parameters={"public": SECOND_KEY, "fail": True}, disable_rollback=False)
    h.run()
    stack = h.service.get_stack(sid)
    assert (stack.action, stack.status) == ("ROLLBACK", "COMPLETE"), stack.status_reason
    assert live_key(cloud) == [FIRST_KEY]
    assert row(h, sid, "key").physical_id == "stack-key"
