"""OS::Neutron::SecurityGroup and ...SecurityGroupRule against the simulated Neutron."""

from __future__ import annotations

from typing import Any

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import Conflict, NotFound
from kiln.plugin import ResourceFailure
from kiln.resources.neutron.security_group import SecurityGroup
from kiln.resources.neutron.security_group_rule import SecurityGroupRule
from kiln.testing.plugin_context import decide, run_action

SSH = {"protocol": "tcp", "port_range_min": 22, "port_range_max": 22}
DEFAULT_EGRESS = {
    ("egress", "IPv4", None, None, None, None),
    ("egress", "IPv6", None, None, None, None),
}


@pytest.fixture
def sandbox() -> Sandbox:
    return Sandbox()


def rules(sandbox: Sandbox, group: str) -> set[tuple[Any, ...]]:
    return {
        (
            r.direction,
            r.ethertype,
            r.protocol,
            r.port_range_min,
            r.remote_ip_prefix,
            r.remote_group_id,
        )
        for r in sandbox.client.get_security_group(group).rules
    }


def test_create_without_rules_keeps_the_default_egress(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(SecurityGroup, {"description": "d"})
    group = sandbox.client.get_security_group(ctx.physical_id or "")
    assert (group.name, group.description) == (ctx.physical_resource_name(), "d")
    assert rules(sandbox, group.id) == DEFAULT_EGRESS
    assert res.get_attribute("show")["id"] == group.id


def test_ingress_rules_are_added_to_the_defaults(sandbox: Sandbox) -> None:
    _, ctx = sandbox.created(
        SecurityGroup,
        {"rules": [{**SSH, "remote_ip_prefix": "10.0.0.0/8"}, {"remote_mode": "remote_group_id"}]},
    )
    group = ctx.physical_id
    assert rules(sandbox, group or "") == DEFAULT_EGRESS | {
        ("ingress", "IPv4", "tcp", 22, "10.0.0.0/8", None),
        ("ingress", "IPv4", None, None, None, group),  # no group given: the group itself
    }


def test_an_egress_rule_replaces_the_defaults(sandbox: Sandbox) -> None:
    egress = {"direction": "egress", "protocol": "udp", "port_range_min": 53, "port_range_max": 53}
    _, ctx = sandbox.created(SecurityGroup, {"rules": [egress]})
    assert rules(sandbox, ctx.physical_id or "") == {("egress", "IPv4", "udp", 53, None, None)}


def test_update_reconciles_rules_and_renames(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(SecurityGroup, {"rules": [SSH]})
    ssh_id = next(
        r.id
        for r in sandbox.client.get_security_group(ctx.physical_id or "").rules
        if r.protocol == "tcp"
    )
    http = {"protocol": "tcp", "port_range_min": 80, "port_range_max": 80}
    new = {"name": "web", "rules": [SSH, http]}
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    group = sandbox.client.get_security_group(ctx.physical_id or "")
    assert group.name == "web"
    assert rules(sandbox, group.id) == DEFAULT_EGRESS | {
        ("ingress", "IPv4", "tcp", 22, None, None),
        ("ingress", "IPv4", "tcp", 80, None, None),
    }
    assert ssh_id in {r.id for r in group.rules}  # an unchanged rule is kept, not recreated
    run_action(res, "update", new_properties={"name": "web", "rules": [{"direction": "egress"}]})
    assert rules(sandbox, group.id) == {("egress", "IPv4", None, None, None, None)}


def test_stateful_cannot_change_while_ports_use_the_group(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(SecurityGroup, {"stateful": True})
    run_action(res, "update", new_properties={"stateful": False})
    assert not sandbox.client.get_security_group(ctx.physical_id or "").stateful
    network = sandbox.client.create_network({}).id
    sandbox.client.create_port({"network_id": network, "security_groups": [ctx.physical_id]})
    with pytest.raises(ResourceFailure, match="stateful"):
        run_action(res, "update", new_properties={"stateful": True})


def test_delete_in_use_is_a_conflict_and_delete_twice_succeeds(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(SecurityGroup, {"rules": [SSH]})
    network = sandbox.client.create_network({}).id
    port = sandbox.client.create_port({"network_id": network, "security_groups": [ctx.physical_id]})
    with pytest.raises(Conflict):
        run_action(res, "delete")
    sandbox.client.delete_port(port.id)
    run_action(res, "delete")
    with pytest.raises(NotFound):
        sandbox.client.get_security_group(ctx.physical_id or "")
    run_action(res, "delete")


def test_find_existing_after_a_crash(sandbox: Sandbox) -> None:
    _, ctx = sandbox.created(SecurityGroup)
    first, ctx.physical_id = ctx.physical_id, None
    assert sandbox.again(ctx, SecurityGroup).find_existing() == first


# -- OS::Neutron::SecurityGroupRule ----------------------------------------------------------
@pytest.fixture
def group(sandbox: Sandbox) -> str:
    return sandbox.client.create_security_group({"name": "web"}).id


def test_rule_create_resolves_names_and_deletes(sandbox: Sandbox, group: str) -> None:
    properties = {
        "security_group": "web",
        "remote_group": "web",
        "port_range_min": 443,
        "port_range_max": 443,
    }
    res, ctx = sandbox.created(SecurityGroupRule, properties)
    rule = sandbox.client.get_security_group_rule(ctx.physical_id or "")
    assert (rule.security_group_id, rule.remote_group_id, rule.protocol) == (group, group, "tcp")
    assert (rule.port_range_min, rule.port_range_max) == (443, 443)
    assert res.get_attribute("show")["id"] == rule.id
    assert decide(res, {**properties, "port_range_max": 444}).kind == "replace"
    run_action(res, "delete")
    with pytest.raises(NotFound):
        sandbox.client.get_security_group_rule(rule.id)
    run_action(res, "delete")


def test_duplicate_rule_is_the_clouds_conflict(sandbox: Sandbox, group: str) -> None:
    properties = {"security_group": group, "remote_ip_prefix": "10.0.0.0/8"}
    sandbox.created(SecurityGroupRule, properties)
    res, _ = sandbox.resource(SecurityGroupRule, properties)
    with pytest.raises(Conflict) as raised:
        run_action(res, "create")
    assert raised.value.message


def test_rule_find_existing_after_a_crash(sandbox: Sandbox, group: str) -> None:
    properties = {"security_group": "web", "protocol": "udp", "remote_ip_prefix": "10.1.2.3/8"}
    _, ctx = sandbox.created(SecurityGroupRule, properties)
    first, ctx.physical_id = ctx.physical_id, None
    assert sandbox.again(ctx, SecurityGroupRule).find_existing() == first
    other, _ = sandbox.resource(SecurityGroupRule, {"security_group": "web", "protocol": "icmp"})
    assert other.find_existing() is None
