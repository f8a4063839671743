"""The Octavia REST app: versions, both prefixes, status codes and Octavia error bodies."""

from __future__ import annotations

import math

import pytest
from falcon import testing
from octavia_support import DEMO, octavia_cloud

from kiln.cloud.api.errors import Unauthorized
from kiln.cloud.sandbox.load_balancer.app import create_load_balancer_app


class Tokens:
    def scope(self, token):
        if token != "demo-token":
            raise Unauthorized("The request you have made requires authentication.")
        return DEMO


@pytest.fixture
def rest():
    cloud, _, neutron = octavia_cloud()
    subnet = neutron.add_subnet(DEMO.project_id, "10.9.0.0/24")
    client = testing.TestClient(
        create_load_balancer_app(cloud, Tokens()), headers={"X-Auth-Token": "demo-token"}
    )
    return cloud, client, subnet


def test_version_document_is_public(rest):
    _, client, _ = rest
    versions = testing.TestClient(client.app).simulate_get("/").json["versions"]
    assert [v["id"] for v in versions] == ["v2.0", "v2.27"]
    assert versions[1]["status"] == "CURRENT"
    assert versions[0]["links"][0]["href"].endswith("/v2")


def test_crud_under_both_prefixes(rest):
    _, client, subnet = rest
    created = client.simulate_post(
        "/v2.0/lbaas/loadbalancers", json={"loadbalancer": {"vip_subnet_id": subnet["id"]}}
    )
    assert created.status_code == 201
    lb_id = created.json["loadbalancer"]["id"]
    shown = client.simulate_get(f"/v2/lbaas/loadbalancers/{lb_id}")
    assert shown.json["loadbalancer"]["provisioning_status"] == "ACTIVE"
    listed = client.simulate_get("/v2/lbaas/loadbalancers", params={"id": lb_id})
    assert [d["id"] for d in listed.json["loadbalancers"]] == [lb_id]
    put = client.simulate_put(
        f"/v2.0/lbaas/loadbalancers/{lb_id}", json={"loadbalancer": {"name": "renamed"}}
    )
    assert (put.status_code, put.json["loadbalancer"]["provisioning_status"]) == (
        200,
        "PENDING_UPDATE",
    )
    pool = client.simulate_post(
        "/v2/lbaas/pools",
        json={"pool": {"loadbalancer_id": lb_id, "protocol": "TCP", "lb_algorithm": "SOURCE_IP"}},
    ).json["pool"]
    member = client.simulate_post(
        f"/v2/lbaas/pools/{pool['id']}/members",
        json={"member": {"address": "10.9.0.20", "protocol_port": 22}},
    )
    assert member.status_code == 201
    refused = client.simulate_delete(f"/v2/lbaas/loadbalancers/{lb_id}")
    assert refused.status_code == 400
    assert refused.json["faultstring"] == f"Cannot delete Load Balancer {lb_id} - it has children"
    gone = client.simulate_delete(f"/v2/lbaas/loadbalancers/{lb_id}", params={"cascade": "true"})
    assert gone.status_code == 204
    assert client.simulate_get(f"/v2/lbaas/pools/{pool['id']}").status_code == 404


def test_error_bodies(rest):
    cloud, client, subnet = rest
    missing = client.simulate_get("/v2/lbaas/listeners/nope")
    assert missing.status_code == 404
    assert missing.json == {
        "faultcode": "Client",
        "faultstring": "Listener nope not found.",
        "debuginfo": None,
    }
    cloud.sim.delays["load_balancer.loadbalancer.create"] = math.inf
    lb_id = client.simulate_post(
        "/v2/lbaas/loadbalancers", json={"loadbalancer": {"vip_subnet_id": subnet["id"]}}
    ).json["loadbalancer"]["id"]
    conflict = client.simulate_post(
        "/v2/lbaas/listeners",
        json={"listener": {"loadbalancer_id": lb_id, "protocol": "TCP", "protocol_port": 1}},
    )
    assert conflict.status_code == 409
    assert conflict.json["faultstring"] == (
        f"Load Balancer {lb_id} is immutable and cannot be updated."
    )
    bad = client.simulate_post("/v2/lbaas/healthmonitors", json={"nothing": {}})
    assert bad.status_code == 400 and bad.json["faultcode"] == "Client"
    anonymous = testing.TestClient(client.app).simulate_get("/v2/lbaas/loadbalancers")
    assert anonymous.status_code == 401


def test_catalog_and_quota_routes(rest):
    _, client, _ = rest
    providers = client.simulate_get("/v2/lbaas/providers").json["providers"]
    assert providers[0] == {"name": "amphora", "description": "The Octavia Amphora driver."}
    assert client.simulate_get("/v2/lbaas/flavors").json == {"flavors": []}
    assert client.simulate_get("/v2/lbaas/availabilityzones").json == {"availability_zones": []}
    assert client.simulate_get("/v2/lbaas/flavors/x").status_code == 404
    quota = client.simulate_get(f"/v2/lbaas/quotas/{DEMO.project_id}").json["quota"]
    assert quota["load_balancer"] == 100
    denied = client.simulate_put(
        f"/v2/lbaas/quotas/{DEMO.project_id}", json={"quota": {"load_balancer": 1}}
    )
    assert denied.status_code == 403
