"""Stack users through the real engine and the sandbox's Keystone: a SOFTWARE_CONFIG
server gets a user in the stack tree's stack-domain project, its agent settings in the
resource metadata (and in the user data), and both go when the stack does."""

from __future__ import annotations

import base64
import pathlib
from typing import Any

import pytest
import sqlalchemy as sa
from engine_support import CALLER, Harness, sandbox_harness

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.assemble import build_cloud
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.identity import IdentityStore, bootstrap
from kiln.cloud.sandbox.identity.adapter import SandboxIdentity, StackDomainAdapter
from kiln.cloud.sandbox.identity.tokens import TokenService
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.engine.plan import current_rows
from kiln.plugin.heat_endpoints import SERVICE as ENDPOINTS
from kiln.plugin.heat_endpoints import HeatEndpoints

AUTH_URL = "http://sandbox.test:5000/v3"
CFN_URL = "http://kiln.test:8000"

SERVER = """
heat_template_version: 2021-04-16
parameters:
  transport: {type: string, default: POLL_SERVER_HEAT}
resources:
  server:
    type: OS::Nova::Server
    metadata: {os-collect-config: {polling_interval: 10}, role: web}
    properties:
      flavor: m1.tiny
      image: cirros
      networks: [{network: public}]
      user_data_format: SOFTWARE_CONFIG
      software_config_transport: {get_param: transport}
outputs:
  agent: {value: {get_attr: [server, os_collect_config]}}
"""

GROUP = """
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Nova::Server
        properties:
          flavor: m1.tiny
          image: cirros
          networks: [{network: public}]
          user_data_format: SOFTWARE_CONFIG
          software_config_transport: POLL_SERVER_HEAT
"""


@pytest.fixture
def cloud() -> SandboxCloud:
    return build_cloud()


@pytest.fixture
def identity(tmp_path: pathlib.Path) -> StackDomainAdapter:
    store = IdentityStore(sa.create_engine(f"sqlite:///{tmp_path / 'identity.sqlite'}"))
    seed = bootstrap(store, admin_password="admin-secret", demo_password="demo-secret")
    return StackDomainAdapter(
        SandboxIdentity(store, TokenService(store), seed.stack_domain.id, AUTH_URL)
    )


@pytest.fixture
def h(tmp_path: pathlib.Path, cloud: SandboxCloud, identity: StackDomainAdapter) -> Harness:
    harness = sandbox_harness(tmp_path, cloud, identity=identity.identity)
    harness.deps.clients = {
        **harness.deps.clients,
        ENDPOINTS: HeatEndpoints(metadata_server_url=CFN_URL, region_name="RegionOne"),
    }
    return harness


def status(h: Harness, stack_id: str) -> tuple[str, str, str]:
    stack = h.service.get_stack(stack_id)
    return stack.action, stack.status, stack.status_reason


def metadata(h: Harness, stack_id: str, name: str) -> dict[str, Any]:
    with dbe.read(h.deps.db) as conn:
        return dict(current_rows(rdb.list_resources(conn, stack_id))[name].metadata)


def server_user_data(cloud: SandboxCloud) -> str:
    scope = CloudScope("project-1", "user-1")
    (server,) = cloud.compute.list_servers(scope)
    return base64.b64decode(server["OS-EXT-SRV-ATTR:user_data"]).decode()


def test_a_heat_transport_server_has_a_stack_user_its_agent_can_sign_in_as(
    h: Harness, cloud: SandboxCloud, identity: StackDomainAdapter
) -> None:
    stack_id = h.create(SERVER)
    h.run()
    assert status(h, stack_id)[:2] == ("CREATE", "COMPLETE")
    stack = h.service.get_stack(stack_id)
    project = identity.find_project(f"project-1-{stack_id}")
    assert stack.stack_user_project_id == project.id
    assert project.domain_id == identity.domain_id

    found = metadata(h, stack_id, "server")
    assert found["deployments"] == [] and found["role"] == "web"
    agent = found["os-collect-config"]
    assert agent["collectors"] == ["ec2", "heat", "local"]
    assert agent["polling_interval"] == 10  # the template's settings are kept
    heat = agent["heat"]
    assert heat["project_id"] == project.id and heat["stack_id"] == stack_id
    assert heat["resource_name"] == "server" and heat["auth_url"] == AUTH_URL
    assert heat["region_name"] == "RegionOne"
    # the agent signs in as the stack user, scoped to the stack-domain project
    assert identity.user_token(heat["user_id"], heat["password"], project.id)
    assert h.outputs(stack_id)["agent"] == agent
    # the instance finds the same settings in its user data (cfn-init-data)
    assert heat["password"] in server_user_data(cloud)

    h.service.delete_stack(CALLER, stack_id)
    h.run()
    assert status(h, stack_id)[:2] == ("DELETE", "COMPLETE")
    with pytest.raises(NotFound):
        identity.update_user(heat["user_id"], enabled=True)
    with pytest.raises(NotFound):
        identity.find_project(f"project-1-{stack_id}")


def test_the_default_cfn_transport_gets_an_ec2_keypair(
    h: Harness, identity: StackDomainAdapter
) -> None:
    stack_id = h.create(SERVER, parameters={"transport": "POLL_SERVER_CFN"})
    h.run()
    assert status(h, stack_id)[:2] == ("CREATE", "COMPLETE")
    agent = metadata(h, stack_id, "server")["os-collect-config"]
    assert agent["collectors"] == ["ec2", "cfn", "local"]
    cfn = agent["cfn"]
    assert cfn["metadata_url"] == f"{CFN_URL}/v1/"
    assert cfn["stack_name"] == "s" and cfn["path"] == "server.Metadata"
    with dbe.read(h.deps.db) as conn:
        row = current_rows(rdb.list_resources(conn, stack_id))["server"]
        data = rdb.get_resource_data(conn, row.id)
    user_id = data["user_id"].value.strip('"')
    (credential,) = identity.list_ec2_credentials(user_id)
    assert (credential.access, credential.secret) == (
        cfn["access_key_id"],
        cfn["secret_access_key"],
    )
    assert data["secret_key"].redact and data["password"].redact


def test_changing_the_transport_rewrites_the_agent_settings_in_place(
    h: Harness, cloud: SandboxCloud
) -> None:
    stack_id = h.create(SERVER)
    h.run()
    server_id = cloud.compute.list_servers(CloudScope("project-1", "user-1"))[0]["id"]
    h.update(stack_id, SERVER, parameters={"transport": "POLL_SERVER_CFN"})
    h.run()
    assert status(h, stack_id)[:2] == ("UPDATE", "COMPLETE")
    agent = metadata(h, stack_id, "server")["os-collect-config"]
    assert agent["collectors"] == ["ec2", "cfn", "local"] and "heat" not in agent
    assert cloud.compute.list_servers(CloudScope("project-1", "user-1"))[0]["id"] == server_id


def test_a_stack_tree_shares_one_stack_domain_project(
    h: Harness, identity: StackDomainAdapter
) -> None:
    stack_id = h.create(GROUP)
    h.run()
    assert status(h, stack_id)[:2] == ("CREATE", "COMPLETE")
    root = h.service.get_stack(stack_id)
    with dbe.read(h.deps.db) as conn:
        (child,) = sdb.list_children(conn, stack_id)
    projects = {metadata(h, child.id, n)["os-collect-config"]["heat"]["project_id"] for n in "01"}
    assert projects == {root.stack_user_project_id}
    assert child.stack_user_project_id is None  # kept on the root only


def test_transports_this_cloud_cannot_serve_fail_with_the_reason(h: Harness) -> None:
    stack_id = h.create(SERVER, parameters={"transport": "POLL_TEMP_URL"})
    h.run()
    action, state, reason = status(h, stack_id)
    assert (action, state) == ("CREATE", "FAILED")
    assert "POLL_TEMP_URL needs Swift" in reason


def test_without_a_stack_user_domain_the_server_fails_clearly(
    tmp_path: pathlib.Path, cloud: SandboxCloud
) -> None:
    harness = sandbox_harness(tmp_path, cloud)
    stack_id = harness.create(SERVER)
    harness.run()
    action, state, reason = status(harness, stack_id)
    assert (action, state) == ("CREATE", "FAILED")
    assert "stack_user_domain_name" in reason
    assert cloud.compute.list_servers(CloudScope("project-1", "user-1")) == []
