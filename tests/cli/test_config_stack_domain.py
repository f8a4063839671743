"""The stack domain admin of kiln.conf (Heat's ``[DEFAULT]`` options) and the identity
client ``kiln engine`` makes from it, against a running sandbox."""

from __future__ import annotations

import pathlib
import textwrap

import pytest

from kiln.cli import config
from kiln.cli.engine_cmd import cloud_connector
from kiln.cloud.api.errors import Forbidden
from kiln.testing.sandbox_harness import PASSWORDS, SandboxServer

pytestmark = pytest.mark.timeout(60)


def load(tmp_path: pathlib.Path, text: str) -> object:
    path = tmp_path / "kiln.conf"
    path.write_text(textwrap.dedent(text))
    return config.load([str(path)])


def test_no_stack_domain_admin_no_identity_settings(tmp_path: pathlib.Path) -> None:
    conf = load(tmp_path, "[trustee]\nauth_url = http://ks/v3\nusername = kiln\n")
    assert conf.stack_user_domain_name == "heat" and conf.stack_user_domain_id is None
    assert config.stack_domain_auth(conf) is None


def test_the_domain_by_name_or_by_id(tmp_path: pathlib.Path) -> None:
    by_name = """
        [DEFAULT]
        stack_domain_admin = heat_domain_admin
        stack_domain_admin_password = pw
        [trustee]
        auth_url = http://ks/v3
        """
    assert config.stack_domain_auth(load(tmp_path, by_name)) == {
        "auth_url": "http://ks/v3",
        "username": "heat_domain_admin",
        "password": "pw",
        "user_domain_name": "heat",
        "domain_name": "heat",
    }
    by_id = by_name.replace("[DEFAULT]", "[DEFAULT]\n        stack_user_domain_id = d1")
    assert config.stack_domain_auth(load(tmp_path, by_id)) == {
        "auth_url": "http://ks/v3",
        "username": "heat_domain_admin",
        "password": "pw",
        "user_domain_id": "d1",
        "domain_id": "d1",
    }


def test_the_keystone_is_the_trustees(tmp_path: pathlib.Path) -> None:
    conf = load(tmp_path, "[DEFAULT]\nstack_domain_admin = heat_domain_admin\n")
    with pytest.raises(config.ConfigError, match=r"\[trustee\] auth_url"):
        config.stack_domain_auth(conf)


def test_kiln_engine_acts_in_the_stack_domain(tmp_path: pathlib.Path) -> None:
    (tmp_path / "sandbox").mkdir()
    server = SandboxServer(tmp_path / "sandbox").start()
    try:
        conf = load(
            tmp_path,
            f"""
            [DEFAULT]
            stack_domain_admin = heat_domain_admin
            stack_domain_admin_password = {PASSWORDS["admin"]}
            [trustee]
            auth_url = {server.auth_url}
            username = kiln
            password = {PASSWORDS["kiln"]}
            project_name = admin
            """,
        )
        keystone = cloud_connector(conf).client("identity", server.scope("demo"))
        assert keystone.domain_id == server.seed.stack_domain.id
        assert keystone.auth_url == server.auth_url
        project = keystone.create_project("engine-made")
        assert server.store.get_project(project.id).domain_id == server.seed.stack_domain.id
        keystone.delete_project(project.id)
        with pytest.raises(Forbidden):
            keystone.delete_project(server.seed.demo_project.id)
    finally:
        server.stop()
