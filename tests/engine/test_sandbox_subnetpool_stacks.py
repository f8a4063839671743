"""OS::Neutron::Subnet from a subnet pool on the in-process sandbox, through the engine:
each stack's subnet takes the next free prefix of the seeded shared pool, and deleting
a stack gives its prefix back."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import CALLER, Harness, sandbox_harness

from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.core.errors import KilnError

POOL_SUBNET = """
heat_template_version: 2021-04-16
parameters:
  pool: {type: string}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, subnetpool: {get_param: pool}, prefixlen: 24}
outputs:
  cidr: {value: {get_attr: [subnet, cidr]}}
"""


@pytest.fixture
def cloud() -> SandboxCloud:
    return build_cloud()


@pytest.fixture
def h(tmp_path: pathlib.Path, cloud: SandboxCloud) -> Harness:
    return sandbox_harness(tmp_path, cloud)


def _pool_id(cloud: SandboxCloud) -> str:
    (pool,) = cloud.store.find("subnetpool", name="shared-default-subnetpool-v4")
    return str(pool["id"])


def _create(h: Harness, name: str, pool: str) -> str:
    stack_id = h.create(POOL_SUBNET, name=name, parameters={"pool": pool})
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), stack.status_reason
    return stack_id


def _delete(h: Harness, stack_id: str) -> None:
    h.service.delete_stack(CALLER, stack_id)
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.action, stack.status) == ("DELETE", "COMPLETE"), stack.status_reason


def test_stacks_take_consecutive_prefixes_and_give_them_back(
    h: Harness, cloud: SandboxCloud
) -> None:
    pool = _pool_id(cloud)
    first, second = _create(h, "a", pool), _create(h, "b", pool)
    assert h.outputs(first)["cidr"] == "10.0.0.0/24"
    assert h.outputs(second)["cidr"] == "10.0.1.0/24"
    taken = sorted(s["cidr"] for s in cloud.store.find("subnet", subnetpool_id=pool))
    assert taken == ["10.0.0.0/24", "10.0.1.0/24"]
    _delete(h, first)
    third = _create(h, "c", "shared-default-subnetpool-v4")  # by name, as templates do
    assert h.outputs(third)["cidr"] == "10.0.0.0/24"  # the prefix the first stack gave back
    for stack_id in (second, third):
        _delete(h, stack_id)
    assert cloud.store.find("subnet", subnetpool_id=pool) == []


def test_an_unknown_pool_is_a_validation_error(h: Harness) -> None:
    with pytest.raises(KilnError) as failed:
        h.create(POOL_SUBNET, parameters={"pool": "no-such-pool"})
    assert "The Subnet Pool (no-such-pool) could not be found." in str(failed.value)
