"""Keystone as the stack domain admin (Heat's stack users) through both adapters: in
process over the identity store, and openstacksdk over the sandbox's HTTP, signed in as
``heat_domain_admin`` with a token scoped to domain ``heat``.

The identity service is the session's (the contract fixture's reset swaps only the
cloud), so every test names what it makes uniquely and deletes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kiln.cloud.api.errors import Conflict, Forbidden, NotFound, Unauthorized
from kiln.cloud.api.identity import Ec2Credential, Project, Role, User
from kiln.cloud.openstack.connector import OpenStackConnector
from kiln.cloud.openstack.identity import stack_domain_auth
from kiln.cloud.sandbox.connector import SandboxConnector
from kiln.cloud.sandbox.identity.adapter import SandboxIdentity
from kiln.cloud.sandbox.identity.tokens import TokenService
from kiln.testing.sandbox_harness import PASSWORDS, SandboxServer

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def connectors(sandbox_server: SandboxServer) -> Iterator[dict[str, Any]]:
    """The two ways of reaching the sandbox's Keystone as the stack domain admin."""
    seed = sandbox_server.seed
    identity = SandboxIdentity(
        store=sandbox_server.store,
        tokens=TokenService(sandbox_server.store),
        domain_id=seed.stack_domain.id,
        auth_url=sandbox_server.auth_url,
    )
    admin_auth = stack_domain_auth(
        auth_url=sandbox_server.auth_url,
        username=seed.stack_domain_admin.name,
        password=PASSWORDS["admin"],  # bootstrap's default: the admin password
        domain_name=seed.stack_domain.name,
    )
    yield {
        "inprocess": SandboxConnector(sandbox_server.cloud, identity=identity),
        "openstack": OpenStackConnector.from_config(
            auth=sandbox_server.auth("demo"), stack_domain=admin_auth
        ),
    }


@pytest.fixture(params=["inprocess", "openstack"])
def keystone(
    request: pytest.FixtureRequest, connectors: dict[str, Any], sandbox_server: SandboxServer
) -> Any:
    # any scope: the client acts as the stack domain admin whoever asks
    return connectors[request.param].client("identity", sandbox_server.scope("demo"))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_domain_and_auth_url(keystone: Any, sandbox_server: SandboxServer) -> None:
    assert keystone.domain_id == sandbox_server.seed.stack_domain.id
    assert keystone.auth_url == sandbox_server.auth_url


def test_project_lifecycle(keystone: Any) -> None:
    name = unique("stack-project")
    project = keystone.create_project(name, description="Heat stack user project")
    assert isinstance(project, Project)
    assert (project.name, project.domain_id) == (name, keystone.domain_id)
    assert project["description"] == "Heat stack user project"
    assert keystone.find_project(name).id == project.id
    with pytest.raises(Conflict):
        keystone.create_project(name)
    keystone.delete_project(project.id)
    with pytest.raises(NotFound):
        keystone.delete_project(project.id)
    with pytest.raises(NotFound):
        keystone.find_project(name)


def test_user_role_grant_and_token(keystone: Any, sandbox_server: SandboxServer) -> None:
    project = keystone.create_project(unique("stack-project"))
    name = unique("stack-user")
    user = keystone.create_user(name, project_id=project.id, password="first-pw")
    try:
        assert isinstance(user, User)
        assert (user.name, user.domain_id) == (name, keystone.domain_id)
        assert (user.default_project_id, user.enabled) == (project.id, True)
        assert "password" not in user
        assert keystone.find_user(name).id == user.id
        with pytest.raises(Conflict):
            keystone.create_user(name, project_id=project.id, password="x")

        with pytest.raises(Unauthorized):  # no role on the project yet
            keystone.user_token(user.id, "first-pw", project.id)
        role = keystone.find_role("heat_stack_user")
        assert isinstance(role, Role) and role.name == "heat_stack_user"
        keystone.grant_project_role(project.id, user.id, role.id)
        keystone.grant_project_role(project.id, user.id, role.id)  # again: harmless
        token = keystone.user_token(user.id, "first-pw", project.id)
        info = TokenService(sandbox_server.store).validate(token)
        assert (info.user.id, info.project and info.project.id) == (user.id, project.id)
        assert info.role_names == {"heat_stack_user"}

        assert keystone.update_user(user.id, enabled=False).enabled is False
        with pytest.raises(Unauthorized):
            keystone.user_token(user.id, "first-pw", project.id)
        assert keystone.update_user(user.id, enabled=True).enabled is True
        keystone.update_user(user.id, password="second-pw")
        with pytest.raises(Unauthorized):
            keystone.user_token(user.id, "first-pw", project.id)
        assert keystone.user_token(user.id, "second-pw", project.id)
        assert keystone.update_user(user.id).id == user.id  # nothing to change
    finally:
        keystone.delete_user(user.id)
        keystone.delete_project(project.id)
    with pytest.raises(NotFound):
        keystone.delete_user(user.id)
    with pytest.raises(NotFound):
        keystone.find_user(name)
    with pytest.raises(NotFound):
        keystone.find_role("no-such-role")


def test_ec2_credentials(keystone: Any) -> None:
    project = keystone.create_project(unique("stack-project"))
    user = keystone.create_user(unique("stack-user"), project_id=project.id, password="pw")
    access, secret = uuid.uuid4().hex, "the-secret"
    try:
        credential = keystone.create_ec2_credential(
            user.id, project.id, access=access, secret=secret
        )
        assert isinstance(credential, Ec2Credential)
        assert (credential.access, credential.secret) == (access, secret)
        assert (credential.user_id, credential.project_id) == (user.id, project.id)
        assert credential["type"] == "ec2"
        with pytest.raises(Conflict):  # the id is made from the access key
            keystone.create_ec2_credential(user.id, project.id, access=access, secret="other")
        listed = keystone.list_ec2_credentials(user.id)
        assert [(c.id, c.access, c.secret) for c in listed] == [(credential.id, access, secret)]
        keystone.delete_credential(credential.id)
        assert keystone.list_ec2_credentials(user.id) == []
        with pytest.raises(NotFound):
            keystone.delete_credential(credential.id)
    finally:
        keystone.delete_user(user.id)
        keystone.delete_project(project.id)
    assert keystone.list_ec2_credentials(user.id) == []


def test_nothing_outside_the_stack_domain(keystone: Any, sandbox_server: SandboxServer) -> None:
    store, seed = sandbox_server.store, sandbox_server.seed
    outsider = store.create_project(unique("outsider"), domain_id="default")
    try:
        with pytest.raises(NotFound):  # lookups by name see the stack domain only
            keystone.find_project(outsider.name)
        with pytest.raises(NotFound):
            keystone.find_user("demo")
        with pytest.raises(Forbidden):
            keystone.delete_project(outsider.id)
        with pytest.raises(Forbidden):
            keystone.update_user(seed.demo_user.id, enabled=False)
        with pytest.raises(Forbidden):
            keystone.delete_user(seed.demo_user.id)
        with pytest.raises(Forbidden):
            keystone.create_ec2_credential(
                seed.demo_user.id, seed.demo_project.id, access=uuid.uuid4().hex, secret="s"
            )
        assert keystone.list_ec2_credentials(seed.demo_user.id) == []
        project = keystone.create_project(unique("stack-project"))
        user = keystone.create_user(unique("stack-user"), project_id=project.id, password="pw")
        try:
            role = keystone.find_role("heat_stack_user")
            with pytest.raises(Forbidden):  # the target project is elsewhere
                keystone.grant_project_role(outsider.id, user.id, role.id)
            with pytest.raises(Forbidden):  # the user is elsewhere
                keystone.grant_project_role(project.id, seed.demo_user.id, role.id)
            with pytest.raises(Forbidden):  # admin on a project would make a cloud admin
                keystone.grant_project_role(project.id, user.id, seed.roles["admin"].id)
        finally:
            keystone.delete_user(user.id)
            keystone.delete_project(project.id)
    finally:
        store.delete_project(outsider.id)
    assert store.get_user(seed.demo_user.id).enabled


def test_over_http_a_project_in_another_domain_is_forbidden(
    connectors: dict[str, Any], sandbox_server: SandboxServer
) -> None:
    keystone = connectors["openstack"].client("identity", sandbox_server.scope("demo"))
    name = unique("elsewhere")
    with pytest.raises(Forbidden) as raised:
        keystone.rest.post("/projects", {"project": {"name": name, "domain_id": "default"}})
    assert raised.value.http_status == 403
    assert sandbox_server.store.list_projects(name=name) == []


def test_without_a_stack_domain_there_is_no_identity_client(
    sandbox_server: SandboxServer,
) -> None:
    scope = sandbox_server.scope("demo")
    with pytest.raises(LookupError):
        sandbox_server.inprocess().client("identity", scope)
    with pytest.raises(LookupError):
        sandbox_server.connector("demo").client("identity", scope)
