"""OS::Neutron::Port against the simulated Neutron: addresses, groups, updates, replacement."""

from __future__ import annotations

from typing import Any

import pytest
from neutron_plugin_support import Sandbox

from kiln.cloud.api.errors import Conflict, NotFound
from kiln.resources.neutron.port import Port
from kiln.testing.plugin_context import decide, run_action, typed_properties

NET = {"network": "private"}


@pytest.fixture
def sandbox() -> Sandbox:
    sandbox = Sandbox()
    network = sandbox.client.create_network({"name": "private"}).id
    sandbox.client.create_subnet(
        {"network_id": network, "cidr": "10.0.0.0/24", "name": "private-subnet"}
    )
    sandbox.client.create_security_group({"name": "web"})
    return sandbox


def group_id(sandbox: Sandbox, name: str) -> str:
    return sandbox.client.find_security_group(name, project_id=sandbox.project).id


def test_create_defaults_and_attributes(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Port, NET)
    network = sandbox.client.find_network("private")
    (address,) = res.get_attribute("fixed_ips")
    assert address["subnet_id"] == network.subnet_ids[0]
    assert res.get_attribute("security_groups") == [group_id(sandbox, "default")]
    assert res.get_attribute("status") == "DOWN"
    assert res.get_attribute("network_id") == network.id
    assert res.get_attribute("name") == ctx.physical_resource_name()
    assert res.get_attribute("mac_address").startswith("fa:16:3e")
    assert res.get_attribute("network")["id"] == network.id
    assert [s["cidr"] for s in res.get_attribute("subnets")] == ["10.0.0.0/24"]
    assert res.get_attribute("tenant_id") == sandbox.project
    assert res.get_attribute("admin_state_up") is True


def test_fixed_ips_groups_and_pairs_are_resolved(sandbox: Sandbox) -> None:
    raw = Port.translate(
        {
            "network_id": "private",
            "fixed_ips": [{"subnet_id": "private-subnet", "ip_address": "10.0.0.42"}],
            "security_groups": ["web"],
            "allowed_address_pairs": [{"ip_address": "10.0.0.0/28"}],
        }
    )
    res, _ = sandbox.created(Port, typed_properties(Port, raw))
    subnet = sandbox.client.find_subnet("private-subnet").id
    assert res.get_attribute("fixed_ips") == [{"subnet_id": subnet, "ip_address": "10.0.0.42"}]
    assert res.get_attribute("security_groups") == [group_id(sandbox, "web")]
    assert res.get_attribute("allowed_address_pairs")[0]["ip_address"] == "10.0.0.0/28"


def test_no_fixed_ips_and_no_groups(sandbox: Sandbox) -> None:
    res, _ = sandbox.created(Port, {**NET, "no_fixed_ips": True, "security_groups": []})
    assert res.get_attribute("fixed_ips") == []
    assert res.get_attribute("security_groups") == []


def test_update_in_place(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Port, {**NET, "security_groups": ["web"]})
    before = res.get_attribute("fixed_ips")
    new: dict[str, Any] = {**NET, "name": "p", "fixed_ips": [], "admin_state_up": False}
    assert decide(res, new).kind == "update"
    run_action(res, "update", new_properties=new)
    live = sandbox.client.get_port(ctx.physical_id or "")
    assert (live.name, live.admin_state_up) == ("p", False)
    assert live.fixed_ips == before  # [] leaves the addresses alone
    assert live.security_group_ids == [group_id(sandbox, "default")]  # groups removed
    new = {**new, "fixed_ips": [{"ip_address": "10.0.0.77"}], "security_groups": ["web"]}
    run_action(res, "update", new_properties=new)
    live = sandbox.client.get_port(ctx.physical_id or "")
    assert [ip["ip_address"] for ip in live.fixed_ips] == ["10.0.0.77"]
    assert live.security_group_ids == [group_id(sandbox, "web")]


def test_binding_profile_is_merged_with_the_live_one(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Port, {**NET, "value_specs": {"binding:profile": {"a": 1}}})
    sandbox.client.update_port(ctx.physical_id or "", {"binding:profile": {"a": 1, "ext": 2}})
    new = {**NET, "value_specs": {"binding:profile": {"b": 3}}}
    run_action(res, "update", new_properties=new)
    live = sandbox.client.get_port(ctx.physical_id or "")
    assert live.raw["binding:profile"] == {"ext": 2, "b": 3}


@pytest.mark.parametrize("change", [{"network": "public"}, {"mac_address": "fa:16:3e:00:00:01"}])
def test_network_and_mac_replace(sandbox: Sandbox, change: dict[str, Any]) -> None:
    res, _ = sandbox.created(Port, NET)
    assert decide(res, {**NET, **change}).kind == "replace"


def test_replace_always_replaces_on_any_update(sandbox: Sandbox) -> None:
    res, _ = sandbox.created(Port, {**NET, "replacement_policy": "REPLACE_ALWAYS"})
    assert decide(res, {**NET, "replacement_policy": "REPLACE_ALWAYS", "name": "x"}).kind == (
        "replace"
    )


def test_prepare_for_replace_frees_the_addresses_and_rollback_restores_them(
    sandbox: Sandbox,
) -> None:
    fixed = [{"ip_address": "10.0.0.42"}]
    old, old_ctx = sandbox.created(Port, {**NET, "fixed_ips": fixed})
    cookie = old.prepare_for_replace()
    assert old.get_attribute("fixed_ips")[0]["ip_address"] == "10.0.0.42"  # only recorded
    assert old.check_prepare_for_replace_complete(cookie)
    assert old.get_attribute("fixed_ips") == []
    assert old.check_prepare_for_replace_complete(cookie)  # again (a resumed step): no harm
    assert old_ctx.data["port_fip"][0]["ip_address"] == "10.0.0.42"
    new, _ = sandbox.created(Port, {**NET, "fixed_ips": fixed})  # takes the same address
    assert new.get_attribute("fixed_ips")[0]["ip_address"] == "10.0.0.42"
    # the rollback: the replacement still holds the address and gives it back
    assert old.check_restore_prev_rsrc_complete(old.restore_prev_rsrc(new.ctx.physical_id))
    assert new.get_attribute("fixed_ips") == []
    assert old.get_attribute("fixed_ips")[0]["ip_address"] == "10.0.0.42"
    assert "port_fip" not in old_ctx.data
    assert old.restore_prev_rsrc(None) is None  # nothing left to restore


def test_a_taken_address_is_the_clouds_conflict(sandbox: Sandbox) -> None:
    sandbox.created(Port, {**NET, "fixed_ips": [{"ip_address": "10.0.0.42"}]})
    res, _ = sandbox.resource(Port, {**NET, "fixed_ips": [{"ip_address": "10.0.0.42"}]})
    with pytest.raises(Conflict) as raised:
        run_action(res, "create")
    assert raised.value.kind == "IpAddressAlreadyAllocated"


def test_delete_twice_and_find_existing(sandbox: Sandbox) -> None:
    res, ctx = sandbox.created(Port, NET)
    first, ctx.physical_id = ctx.physical_id, None
    assert sandbox.again(ctx, Port).find_existing() == first
    ctx.physical_id = first
    run_action(res, "delete")
    with pytest.raises(NotFound):
        sandbox.client.get_port(first or "")
    run_action(res, "delete")
