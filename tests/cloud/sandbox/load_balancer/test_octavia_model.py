"""The Octavia model: status machines, the tree's immutability, validation, VIP ports."""

from __future__ import annotations

import math

import pytest
from octavia_support import ADMIN, DEMO, OTHER, octavia_cloud

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound, OverLimit
from kiln.cloud.sandbox.simulator import FaultRule


@pytest.fixture
def env():
    cloud, model, neutron = octavia_cloud()
    subnet = neutron.add_subnet(DEMO.project_id, "10.0.0.0/24")
    return cloud, model, neutron, subnet


def make_tree(model, subnet):
    lb = model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"], "name": "web"})
    listener = model.create_listener(
        DEMO, {"loadbalancer_id": lb["id"], "protocol": "HTTP", "protocol_port": 80}
    )
    pool = model.create_pool(
        DEMO, {"listener_id": listener["id"], "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"}
    )
    return lb, listener, pool


def test_load_balancer_create_makes_vip_port_and_becomes_active(env):
    _, model, neutron, subnet = env
    lb = model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"], "name": "web"})
    assert lb["provisioning_status"] == "PENDING_CREATE"
    assert lb["operating_status"] == "OFFLINE"
    port = neutron.ports[lb["vip_port_id"]]
    assert port["device_owner"] == "Octavia"
    assert port["name"] == f"octavia-lb-{lb['id']}"
    assert lb["vip_address"] == port["fixed_ips"][0]["ip_address"]
    assert lb["vip_network_id"] == subnet["network_id"]
    shown = model.get_load_balancer(DEMO, lb["id"])
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "ONLINE")
    assert shown["provider"] == "amphora"
    assert shown["project_id"] == shown["tenant_id"] == DEMO.project_id


def test_load_balancer_vip_by_network_and_taken_address(env):
    _, model, _, subnet = env
    lb = model.create_load_balancer(
        DEMO, {"vip_network_id": subnet["network_id"], "vip_address": "10.0.0.50"}
    )
    assert lb["vip_subnet_id"] == subnet["id"]
    assert lb["vip_address"] == "10.0.0.50"
    with pytest.raises(Conflict):
        model.create_load_balancer(
            DEMO, {"vip_subnet_id": subnet["id"], "vip_address": "10.0.0.50"}
        )


def test_load_balancer_create_validation(env):
    _, model, _, subnet = env
    with pytest.raises(BadRequest, match="VIP"):
        model.create_load_balancer(DEMO, {"name": "x"})
    with pytest.raises(NotFound):
        model.create_load_balancer(DEMO, {"vip_subnet_id": "no-such-subnet"})
    with pytest.raises(BadRequest, match="provider"):
        model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"], "provider": "f5"})
    with pytest.raises(BadRequest, match="flavor"):
        model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"], "flavor_id": "nope"})
    with pytest.raises(Forbidden):
        model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"], "project_id": "x"})


def test_projects_are_isolated_and_admin_sees_all(env):
    _, model, _, subnet = env
    lb = model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"], "name": "web"})
    with pytest.raises(NotFound, match=f"Load Balancer {lb['id']} not found"):
        model.get_load_balancer(OTHER, lb["id"])
    assert model.list_load_balancers(OTHER) == []
    assert [d["id"] for d in model.list_load_balancers(ADMIN, name="web")] == [lb["id"]]
    assert model.list_load_balancers(DEMO, name="other") == []


def test_children_set_parents_pending_until_the_delay_passes(env):
    cloud, model, _, subnet = env
    lb, listener, pool = make_tree(model, subnet)
    cloud.sim.delays["load_balancer.member.*"] = math.inf
    member = model.create_member(DEMO, pool["id"], {"address": "10.0.0.10", "protocol_port": 80})
    assert member["provisioning_status"] == "PENDING_CREATE"
    assert model.get_pool(DEMO, pool["id"])["provisioning_status"] == "PENDING_UPDATE"
    assert model.get_listener(DEMO, listener["id"])["provisioning_status"] == "PENDING_UPDATE"
    assert model.get_load_balancer(DEMO, lb["id"])["provisioning_status"] == "PENDING_UPDATE"
    message = f"Load Balancer {lb['id']} is immutable and cannot be updated."
    with pytest.raises(Conflict, match=message):
        model.update_listener(DEMO, listener["id"], {"name": "x"})
    with pytest.raises(Conflict, match=message):
        model.create_member(DEMO, pool["id"], {"address": "10.0.0.11", "protocol_port": 80})
    with pytest.raises(Conflict, match=message):
        model.delete_load_balancer(DEMO, lb["id"], cascade=True)


def test_delay_ends_pending_state_on_the_simulated_clock():
    now = [1000.0]
    cloud, model, neutron = octavia_cloud()
    cloud.store.now = lambda: now[0]
    subnet = neutron.add_subnet(DEMO.project_id, "10.1.0.0/24")
    cloud.sim.delays["load_balancer.loadbalancer.create"] = 5
    lb = model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"]})
    assert model.get_load_balancer(DEMO, lb["id"])["provisioning_status"] == "PENDING_CREATE"
    with pytest.raises(Conflict):
        model.create_listener(
            DEMO, {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 22}
        )
    now[0] += 5
    assert model.get_load_balancer(DEMO, lb["id"])["provisioning_status"] == "ACTIVE"


def test_outcome_fault_ends_in_error(env):
    cloud, model, _, subnet = env
    cloud.sim.add_fault(
        FaultRule(service="load_balancer", operation="create_load_balancer", final_state="ERROR")
    )
    lb = model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"]})
    assert model.get_load_balancer(DEMO, lb["id"])["provisioning_status"] == "ERROR"
    with pytest.raises(Conflict):
        model.create_listener(
            DEMO, {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 22}
        )
    model.delete_load_balancer(DEMO, lb["id"])  # an LB in ERROR may still be deleted
    with pytest.raises(NotFound):
        model.get_load_balancer(DEMO, lb["id"])


def test_listener_rules(env):
    _, model, _, subnet = env
    lb, listener, _ = make_tree(model, subnet)
    assert model.get_load_balancer(DEMO, lb["id"])["listeners"] == [{"id": listener["id"]}]
    with pytest.raises(Conflict, match="protocol_port 80"):
        model.create_listener(
            DEMO, {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 80}
        )
    udp = model.create_listener(
        DEMO, {"loadbalancer_id": lb["id"], "protocol": "UDP", "protocol_port": 80}
    )
    assert udp["connection_limit"] == -1
    with pytest.raises(BadRequest, match="TERMINATED_HTTPS"):
        model.create_listener(
            DEMO,
            {"loadbalancer_id": lb["id"], "protocol": "TERMINATED_HTTPS", "protocol_port": 443},
        )
    with pytest.raises(BadRequest, match="protocol"):
        model.create_listener(
            DEMO, {"loadbalancer_id": lb["id"], "protocol": "FTP", "protocol_port": 21}
        )
    with pytest.raises(BadRequest):
        model.create_listener(
            DEMO, {"loadbalancer_id": lb["id"], "protocol": "TCP", "protocol_port": 0}
        )
    with pytest.raises(BadRequest):
        model.update_listener(DEMO, listener["id"], {"protocol_port": 81})


def test_pool_rules(env):
    _, model, _, subnet = env
    lb, listener, pool = make_tree(model, subnet)
    assert model.get_listener(DEMO, listener["id"])["default_pool_id"] == pool["id"]
    assert pool["listeners"] == [{"id": listener["id"]}]
    assert pool["loadbalancers"] == [{"id": lb["id"]}]
    body = {"listener_id": listener["id"], "protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"}
    with pytest.raises(Conflict, match="already has default pool"):
        model.create_pool(DEMO, body)
    tcp = model.create_listener(
        DEMO, {"loadbalancer_id": lb["id"], "protocol": "HTTP", "protocol_port": 8080}
    )
    with pytest.raises(BadRequest, match="invalid while the listener protocol"):
        model.create_pool(DEMO, {**body, "listener_id": tcp["id"], "protocol": "UDP"})
    with pytest.raises(BadRequest, match="cookie"):
        model.create_pool(
            DEMO,
            {
                "loadbalancer_id": lb["id"],
                "protocol": "HTTP",
                "lb_algorithm": "ROUND_ROBIN",
                "session_persistence": {"type": "APP_COOKIE"},
            },
        )
    with pytest.raises(BadRequest, match="listener_id or a loadbalancer_id"):
        model.create_pool(DEMO, {"protocol": "HTTP", "lb_algorithm": "ROUND_ROBIN"})
    spare = model.create_pool(
        DEMO, {"loadbalancer_id": lb["id"], "protocol": "HTTP", "lb_algorithm": "SOURCE_IP"}
    )
    model.update_listener(DEMO, tcp["id"], {"default_pool_id": spare["id"]})
    assert model.get_pool(DEMO, spare["id"])["listeners"] == [{"id": tcp["id"]}]


def test_members_and_health_monitor(env):
    _, model, _, subnet = env
    _, _, pool = make_tree(model, subnet)
    member = model.create_member(
        DEMO, pool["id"], {"address": "10.0.0.10", "protocol_port": 80, "name": "m1"}
    )
    shown = model.get_member(DEMO, pool["id"], member["id"])
    assert (shown["provisioning_status"], shown["operating_status"]) == ("ACTIVE", "NO_MONITOR")
    assert shown["weight"] == 1
    with pytest.raises(Conflict):
        model.create_member(DEMO, pool["id"], {"address": "10.0.0.10", "protocol_port": 80})
    with pytest.raises(BadRequest):
        model.create_member(
            DEMO, pool["id"], {"address": "10.0.0.12", "protocol_port": 80, "weight": 300}
        )
    monitor_body = {
        "pool_id": pool["id"],
        "type": "HTTP",
        "delay": 5,
        "timeout": 3,
        "max_retries": 3,
    }
    with pytest.raises(BadRequest, match="timeout"):
        model.create_health_monitor(DEMO, {**monitor_body, "timeout": 10})
    monitor = model.create_health_monitor(DEMO, monitor_body)
    assert monitor["url_path"] == "/" and monitor["max_retries_down"] == 3
    assert model.get_pool(DEMO, pool["id"])["healthmonitor_id"] == monitor["id"]
    assert model.get_member(DEMO, pool["id"], member["id"])["operating_status"] == "ONLINE"
    with pytest.raises(Conflict, match="already has a health monitor"):
        model.create_health_monitor(DEMO, monitor_body)
    with pytest.raises(BadRequest, match="timeout"):
        model.update_health_monitor(DEMO, monitor["id"], {"delay": 1})
    model.update_health_monitor(DEMO, monitor["id"], {"delay": 10, "timeout": 9})
    assert model.get_health_monitor(DEMO, monitor["id"])["timeout"] == 9
    model.delete_health_monitor(DEMO, monitor["id"])
    assert model.get_pool(DEMO, pool["id"])["healthmonitor_id"] is None
    assert model.get_member(DEMO, pool["id"], member["id"])["operating_status"] == "NO_MONITOR"
    model.update_member(DEMO, pool["id"], member["id"], {"weight": 5})
    assert model.get_member(DEMO, pool["id"], member["id"])["weight"] == 5
    model.delete_member(DEMO, pool["id"], member["id"])
    with pytest.raises(NotFound):
        model.get_member(DEMO, pool["id"], member["id"])
    assert model.get_pool(DEMO, pool["id"])["members"] == []


def test_delete_with_children_needs_cascade_and_releases_the_vip(env):
    _, model, neutron, subnet = env
    lb, listener, pool = make_tree(model, subnet)
    member = model.create_member(DEMO, pool["id"], {"address": "10.0.0.10", "protocol_port": 80})
    with pytest.raises(BadRequest, match="it has children"):
        model.delete_load_balancer(DEMO, lb["id"])
    model.delete_load_balancer(DEMO, lb["id"], cascade=True)
    with pytest.raises(NotFound):
        model.get_load_balancer(DEMO, lb["id"])
    with pytest.raises(NotFound):
        model.get_listener(DEMO, listener["id"])
    with pytest.raises(NotFound):
        model.get_member(DEMO, pool["id"], member["id"])
    assert lb["vip_port_id"] not in neutron.ports


def test_pending_delete_then_gone_and_unlinked():
    now = [1000.0]
    cloud, model, neutron = octavia_cloud()
    cloud.store.now = lambda: now[0]
    subnet = neutron.add_subnet(DEMO.project_id, "10.2.0.0/24")
    lb, listener, pool = make_tree(model, subnet)
    cloud.sim.delays["load_balancer.listener.delete"] = 2
    model.delete_listener(DEMO, listener["id"])
    assert model.get_listener(DEMO, listener["id"])["provisioning_status"] == "PENDING_DELETE"
    assert model.get_load_balancer(DEMO, lb["id"])["provisioning_status"] == "PENDING_UPDATE"
    now[0] += 2
    with pytest.raises(NotFound):
        model.get_listener(DEMO, listener["id"])
    shown = model.get_load_balancer(DEMO, lb["id"])
    assert (shown["provisioning_status"], shown["listeners"]) == ("ACTIVE", [])
    assert model.get_pool(DEMO, pool["id"])["listeners"] == []


def test_quotas(env):
    _, model, _, subnet = env
    model.update_quota(ADMIN, DEMO.project_id, {"load_balancer": 1})
    assert model.get_quota(DEMO, DEMO.project_id)["load_balancer"] == 1
    model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"]})
    with pytest.raises(OverLimit):
        model.create_load_balancer(DEMO, {"vip_subnet_id": subnet["id"]})
    with pytest.raises(Forbidden):
        model.update_quota(DEMO, DEMO.project_id, {"load_balancer": 5})
    model.reset_quota(ADMIN, DEMO.project_id)
    assert model.get_quota(DEMO, DEMO.project_id)["load_balancer"] == 100


def test_flavors_and_zones(env):
    _, model, _, subnet = env
    assert "amphora" in [p["name"] for p in model.list_providers(DEMO)]
    assert model.list_catalog(DEMO, "lb_flavor") == []
    with pytest.raises(Forbidden):
        model.create_catalog_entry(
            DEMO, "lb_flavorprofile", {"name": "p", "provider_name": "amphora"}
        )
    profile = model.create_catalog_entry(
        ADMIN, "lb_flavorprofile", {"name": "p", "provider_name": "amphora", "flavor_data": "{}"}
    )
    flavor = model.create_catalog_entry(
        ADMIN, "lb_flavor", {"name": "small", "flavor_profile_id": profile["id"]}
    )
    zone_profile = model.create_catalog_entry(
        ADMIN, "lb_availability_zone_profile", {"name": "zp", "provider_name": "amphora"}
    )
    model.create_catalog_entry(
        ADMIN,
        "lb_availability_zone",
        {"name": "az1", "availability_zone_profile_id": zone_profile["id"]},
    )
    lb = model.create_load_balancer(
        DEMO, {"vip_subnet_id": subnet["id"], "flavor_id": flavor["id"], "availability_zone": "az1"}
    )
    assert (lb["flavor_id"], lb["availability_zone"]) == (flavor["id"], "az1")
    with pytest.raises(Conflict, match="in use"):
        model.delete_catalog_entry(ADMIN, "lb_flavor", flavor["id"])
