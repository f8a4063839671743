"""Heat's policy rules on oslo.policy (heat-api.md section 6)."""

from __future__ import annotations

import os
import re

import pytest
from oslo_config import cfg

from kiln.api.context import RequestContext
from kiln.api.faults import Forbidden
from kiln.api.policy import OsloPolicy, credentials, implied_roles, list_rules
from kiln.core.errors import InternalError

PROJECT = "p-1"


def ctx(*roles: str, project: str = PROJECT, admin_project: bool = True) -> RequestContext:
    return RequestContext(
        project_id=project, user_id="u", roles=roles, is_admin_project=admin_project
    )


@pytest.fixture(scope="module")
def policy() -> OsloPolicy:
    return OsloPolicy()


def test_every_rule_of_section_6_is_registered(shared_dir):
    text = (shared_dir / "reference" / "heat-api.md").read_text()
    section = text[text.index("## 6. Policy rules") : text.index("## 7. Configuration")]
    named = set(re.findall(r"`((?:[a-z_]+|cloudformation):[A-Za-z_]+)`", section))
    shorthand = {
        "software_configs:show",
        "software_configs:delete",
        "software_deployments:show",
        "software_deployments:update",
        "software_deployments:delete",
        "cloudformation:DescribeStacks",
        "cloudformation:GetTemplate",
        "cloudformation:DeleteStack",
        "cloudformation:CancelUpdateStack",
    }
    registered = {rule.name for rule in list_rules()}
    assert named - {"rule:project_admin", "role:admin"} <= registered
    assert shorthand <= registered
    assert {"context_is_admin", "project_admin", "deny_stack_user"} <= registered
    assert "resource_types:OS::Keystone::*" in registered


def test_reader_cannot_create_member_can(policy):
    with pytest.raises(Forbidden) as caught:
        policy.enforce("stacks:create", ctx("reader"), {"project_id": PROJECT})
    assert str(caught.value) == "You are not authorized to use stacks:create."
    assert caught.value.http_status == 403
    policy.enforce("stacks:create", ctx("member"), {"project_id": PROJECT})
    policy.enforce("stacks:index", ctx("reader"), {"project_id": PROJECT})


def test_admin_implies_member_implies_reader(policy):
    assert implied_roles(["admin"]) == ["admin", "member", "reader"]
    assert implied_roles(["Member"]) == ["Member", "reader"]
    policy.enforce("stacks:create", ctx("admin"))
    policy.enforce("stacks:show", ctx("member"))


def test_rules_are_scoped_to_the_target_project(policy):
    assert not policy.allowed("stacks:index", ctx("member"), {"project_id": "elsewhere"})


def test_global_index_is_denied_by_default(policy):
    assert not policy.allowed("stacks:global_index", ctx("admin"))
    assert not policy.allowed("software_configs:global_index", ctx("admin"))


def test_stack_users_may_only_do_what_agents_need(policy):
    agent = ctx("heat_stack_user")
    assert policy.allowed("stacks:lookup", agent)
    assert policy.allowed("resource:signal", agent)
    assert policy.allowed("resource:metadata", agent)
    assert policy.allowed("software_deployments:metadata", agent)
    assert policy.allowed("cloudformation:DescribeStackResource", agent)
    assert not policy.allowed("stacks:index", agent)
    assert not policy.allowed("resource:index", agent)


def test_service_list_is_for_admins(policy):
    assert policy.allowed("service:index", ctx("admin"))
    assert not policy.allowed("service:index", ctx("member"))


def test_admin_only_resource_types(policy):
    assert not policy.resource_type_allowed("OS::Nova::Flavor", ctx("member"))
    assert not policy.resource_type_allowed("OS::Keystone::Project", ctx("member"))
    assert policy.resource_type_allowed("OS::Nova::Server", ctx("member"))
    assert policy.resource_type_allowed("OS::Heat::RandomString", ctx("reader"))
    assert policy.resource_type_allowed("OS::Nova::Flavor", ctx("admin"))
    assert policy.resource_type_allowed("OS::Keystone::Project", ctx("admin"))


def test_policy_file_overrides_a_rule_and_is_reread(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"stacks:create": "role:admin"\n')
    policy = OsloPolicy(policy_file=path)
    assert not policy.allowed("stacks:create", ctx("member"))
    assert policy.allowed("stacks:create", ctx("admin"))
    assert policy.allowed("stacks:index", ctx("reader"))  # the others keep their defaults
    path.write_text(
        '"stacks:create": "role:member"\n'
        '"resource_types:OS::Nova::Flavor": "rule:allow_everybody"\n'
        '"resource_types:OS::Heat::*": "rule:deny_everybody"\n'
    )
    later = os.stat(path).st_mtime + 5
    os.utime(path, (later, later))  # the file cache keys on mtime
    assert policy.allowed("stacks:create", ctx("member"))
    assert policy.resource_type_allowed("OS::Nova::Flavor", ctx("reader"))
    assert not policy.resource_type_allowed("OS::Heat::None", ctx("admin"))


def test_a_missing_policy_file_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        OsloPolicy(policy_file=tmp_path / "nope.yaml")


def test_legacy_defaults_when_new_defaults_are_not_enforced():
    legacy = OsloPolicy(enforce_new_defaults=False)
    assert legacy.allowed("stacks:create", ctx("anything"))
    assert not legacy.allowed("stacks:create", ctx("heat_stack_user"))
    assert legacy.allowed("stacks:lookup", ctx("heat_stack_user", "other"))
    assert not legacy.allowed("stacks:global_index", ctx("admin"))
    assert OsloPolicy().conf.oslo_policy.enforce_new_defaults is True


def test_a_config_file_sets_the_options(tmp_path):
    (tmp_path / "policy.yaml").write_text('"stacks:index": "role:admin"\n')
    conf_file = tmp_path / "kiln.conf"
    conf_file.write_text("[oslo_policy]\npolicy_file = policy.yaml\nenforce_new_defaults = false\n")
    conf = cfg.ConfigOpts()
    conf(["--config-file", str(conf_file)], project="kiln", default_config_dirs=[])
    policy = OsloPolicy(conf=conf)
    assert policy.conf is not cfg.CONF
    assert not policy.allowed("stacks:index", ctx("reader"))  # found beside the config file
    assert policy.allowed("stacks:create", ctx("anything"))  # legacy defaults on


def test_an_unregistered_rule_is_a_bug(policy):
    with pytest.raises(InternalError):
        policy.enforce("stacks:no_such_rule", ctx("admin"))


def test_credentials_are_project_scoped():
    creds = credentials(ctx("admin", admin_project=False))
    assert creds["project_domain_id"] == "default"
    assert "domain_id" not in creds  # would make oslo.policy treat the token as domain-scoped
    assert creds["is_admin"] is False
