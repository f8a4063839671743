"""The /_sim control endpoint over real HTTP, with tokens from the sandbox identity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from keystoneauth1 import session
from keystoneauth1.identity import v3

from kiln.testing.sandbox_harness import SandboxServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    running = SandboxServer(Path(tmp_path_factory.mktemp("control")), services=()).start()
    yield running
    running.stop()


def http(server: SandboxServer, user: str) -> session.Session:
    auth = server.auth(user)
    return session.Session(
        auth=v3.Password(
            auth_url=auth["auth_url"],
            username=user,
            password=auth["password"],
            project_name=user,
            user_domain_id="default",
            project_domain_id="default",
        )
    )


def test_faults_are_added_listed_and_removed(server: SandboxServer) -> None:
    admin = http(server, "admin")
    url = f"{server.handle.url}/_sim/faults"
    rule = {"service": "compute", "operation": "create_server", "status": 503, "count": 2}
    added = admin.post(url, json=rule)
    assert added.status_code == 201
    fault_id = added.json()["fault"]["id"]
    assert [f["id"] for f in admin.get(url).json()["faults"]] == [fault_id]
    assert server.cloud.sim.faults[0].status == 503
    assert admin.delete(f"{url}/{fault_id}").status_code == 204
    assert admin.get(url).json()["faults"] == []
    bad = admin.post(url, json={"nope": 1}, raise_exc=False)
    assert bad.status_code == 400


def test_latency_delays_quotas_and_the_request_log(server: SandboxServer) -> None:
    admin = http(server, "admin")
    base = f"{server.handle.url}/_sim"
    assert admin.put(f"{base}/latency", json={"compute.*": 0.2}).json() == {
        "latency": {"compute.*": 0.2}
    }
    assert server.cloud.sim.latency == {"compute.*": 0.2}
    admin.put(f"{base}/delays", json={"compute.server.create": "inf"})
    assert server.cloud.sim.delay("compute", "server", "create") == float("inf")
    quotas = admin.put(f"{base}/quotas/p1", json={"instances": 3}).json()["quotas"]
    assert quotas["instances"] == 3
    server.cloud.sim.enter(None, "compute", "get_server", "s1")
    log = admin.get(f"{base}/requests", params={"service": "compute"}).json()["requests"]
    assert [(r["operation"], r["target"]) for r in log] == [("get_server", "s1")]


def test_controls_need_an_admin_token(server: SandboxServer) -> None:
    demo = http(server, "demo")
    got = demo.get(f"{server.handle.url}/_sim/faults", raise_exc=False)
    assert got.status_code == 403
    anonymous = session.Session().get(f"{server.handle.url}/_sim/faults", raise_exc=False)
    assert anonymous.status_code == 401


def test_firing_an_alarm_needs_the_alarming_service(server: SandboxServer) -> None:
    admin = http(server, "admin")
    got = admin.post(
        f"{server.handle.url}/_sim/alarms/a1/fire", json={"state": "alarm"}, raise_exc=False
    )
    assert got.status_code == 404
    bad = admin.post(
        f"{server.handle.url}/_sim/alarms/a1/fire", json={"state": "red"}, raise_exc=False
    )
    assert bad.status_code == 400
