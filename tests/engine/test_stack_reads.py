"""Stack reads over messages: parameters as shown, list filters, tags, paging."""

from __future__ import annotations

import pathlib

import pytest
from engine_support import make_harness

from kiln.core.errors import RequestLimitExceeded, StackValidationFailed
from kiln.db.errors import StackExists
from kiln.engine.handlers import EngineHandlers
from kiln.rpc import messages as m
from kiln.rpc.transport import InProcessTransport

CFN = """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Password: {Type: String, NoEcho: 'true', Default: pw}
  Zones: {Type: CommaDelimitedList, Default: 'a,b'}
Resources:
  R: {Type: 'OS::Heat::None'}
"""
HOT = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}
ALICE = m.Context("alice", "u1")


@pytest.fixture
def rpc(tmp_path: pathlib.Path) -> InProcessTransport:
    h = make_harness(tmp_path)
    transport = InProcessTransport(EngineHandlers(h.service).table())
    transport.run = h.run  # type: ignore[attr-defined]
    return transport


def test_cfn_parameters_are_shown_with_aws_pseudo_parameters(rpc: InProcessTransport) -> None:
    created = rpc.call(m.CreateStack(ALICE, "cfn", m.StackInput(CFN)))
    rpc.run()  # type: ignore[attr-defined]
    view = rpc.call(m.ShowStack(ALICE, created.stack_id))
    assert view.parameters == {
        "AWS::StackId": f"arn:openstack:heat::alice:stacks/cfn/{created.stack_id}",
        "AWS::StackName": "cfn",
        "AWS::Region": "ap-southeast-1",
        "Password": "******",
        "Zones": "a,b",
    }
    assert view.stack_owner == "u1" and view.updated_at is None


def test_names_quota_and_duplicates(rpc: InProcessTransport) -> None:
    with pytest.raises(StackValidationFailed, match="Invalid stack name a b must contain"):
        rpc.call(m.CreateStack(ALICE, "a b", m.StackInput(HOT)))
    with pytest.raises(StackValidationFailed, match="must be a string"):
        rpc.call(m.CreateStack(ALICE, None, m.StackInput(HOT)))  # type: ignore[arg-type]
    rpc.call(m.CreateStack(ALICE, "one", m.StackInput(HOT), max_stacks_per_tenant=1))
    with pytest.raises(StackExists):
        rpc.call(m.CreateStack(ALICE, "one", m.StackInput(HOT)))
    with pytest.raises(RequestLimitExceeded, match="maximum stacks per tenant, 1"):
        rpc.call(m.CreateStack(ALICE, "two", m.StackInput(HOT), max_stacks_per_tenant=1))
    admin = m.Context("alice", "u1", is_admin=True)
    rpc.call(m.CreateStack(admin, "two", m.StackInput(HOT), max_stacks_per_tenant=1))


def test_list_filters_tags_and_paging(rpc: InProcessTransport) -> None:
    for name, tags in (("a", ("x", "y")), ("b", ("y",)), ("c", ())):
        rpc.call(m.CreateStack(ALICE, name, m.StackInput(HOT), tags=tags))
    rpc.run()  # type: ignore[attr-defined]

    def names(**kw: object) -> list[str]:
        found = rpc.call(m.ListStacks(ALICE, sort_keys=("name",), **kw))  # type: ignore[arg-type]
        return [s.name for s in found.stacks]

    assert names() == ["a", "b", "c"]
    assert names(tags=("x", "y")) == ["a"]
    assert names(tags_any=("x", "y"), limit=1) == ["a"]
    assert names(not_tags_any=("x",), hidden_tags=("y",)) == ["c"]
    assert names(hidden_tags=("y",), show_hidden=True) == ["a", "b", "c"]
    first = rpc.call(m.ListStacks(ALICE, sort_keys=("name",), limit=1, tags_any=("y",)))
    after = rpc.call(
        m.ListStacks(ALICE, sort_keys=("name",), marker=first.stacks[0].id, tags_any=("y",))
    )
    assert [s.name for s in after.stacks] == ["b"]
    assert names(marker="unknown") == ["a", "b", "c"]
    assert names(filters={"disable_rollback": ["true"], "timeout_mins": ["x"]}) == []
    assert names(filters={"disable_rollback": "TRUE", "colour": "red"}) == ["a", "b", "c"]
    counted = rpc.call(m.ListStacks(ALICE, limit=1, with_count=True))
    assert (len(counted.stacks), counted.count) == (1, 3)
    assert rpc.call(m.ListStacks(m.Context("bob"), global_tenant=False)).stacks == ()
    everyone = rpc.call(m.ListStacks(m.Context("bob"), global_tenant=True))
    assert len(everyone.stacks) == 3
