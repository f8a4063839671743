"""Stacks and Keystone trusts: a connector that works with trusts gets one per top-level
stack made with the caller's token; nested stacks use their root's; the trust is given
back when the stack is deleted, or when its create fails validation."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from engine_support import CALLER, Harness, make_harness

from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.core.errors import KilnError
from kiln.engine.service import StackRequest
from kiln.template.loader import load_template

TEMPLATE = """
heat_template_version: 2021-04-16
resources:
  net: {type: OS::Neutron::Net}
  child:
    type: OS::Heat::ResourceGroup
    properties: {count: 1, resource_def: {type: OS::Neutron::Net}}
"""


@dataclass
class TrustingConnector:
    """The sandbox in process, plus the trust calls a real cloud's connector makes."""

    inner: SandboxConnector
    made: list[tuple[str, CloudScope]] = field(default_factory=list)
    given_back: list[str] = field(default_factory=list)
    scopes: list[CloudScope] = field(default_factory=list)

    def client(self, service: str, scope: CloudScope) -> Any:
        self.scopes.append(scope)
        return self.inner.client(service, scope)

    def create_trust(self, auth_token: str, scope: CloudScope) -> str:
        self.made.append((auth_token, scope))
        return f"trust-{len(self.made)}"

    def delete_trust(self, trust_id: str) -> None:
        self.given_back.append(trust_id)


@pytest.fixture
def setup(tmp_path: pathlib.Path) -> tuple[Harness, TrustingConnector]:
    harness = make_harness(tmp_path)
    connector = TrustingConnector(SandboxConnector(build_cloud()))
    harness.deps.cloud = connector
    return harness, connector


def create(h: Harness, text: str, **caller: Any) -> str:
    request = StackRequest(name="s", template=load_template(text).data)
    return h.service.create_stack(replace(CALLER, **caller), request)


def test_a_stack_made_with_a_token_acts_through_its_trust(
    setup: tuple[Harness, TrustingConnector],
) -> None:
    h, connector = setup
    stack_id = create(h, TEMPLATE, auth_token="user-token", roles=("member",))
    h.run()
    stack = h.service.get_stack(stack_id)
    assert (stack.status, stack.trust_id) == ("COMPLETE", "trust-1")
    token, scope = connector.made[0]
    assert token == "user-token" and scope.project_id == CALLER.project_id
    assert scope.roles == frozenset({"member"})
    assert {s.trust_id for s in connector.scopes} == {"trust-1"}  # the child's calls too
    h.service.delete_stack(CALLER, stack_id)
    h.run()
    assert connector.given_back == ["trust-1"]  # once, by the root


def test_a_create_that_fails_validation_gives_the_trust_back(
    setup: tuple[Harness, TrustingConnector],
) -> None:
    h, connector = setup
    with pytest.raises(KilnError):
        create(h, TEMPLATE.replace("OS::Neutron::Net}", "OS::Neutron::Nope}", 1), auth_token="t")
    assert connector.given_back == ["trust-1"]


def test_without_a_token_no_trust_is_made(setup: tuple[Harness, TrustingConnector]) -> None:
    h, connector = setup
    stack_id = create(h, TEMPLATE)
    h.run()
    assert h.service.get_stack(stack_id).trust_id is None
    assert connector.made == []
