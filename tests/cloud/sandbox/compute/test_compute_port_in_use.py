"""Nova refuses a port that already has a device: 409 "Port <id> is still in use."."""

from __future__ import annotations

from typing import Any

import pytest
from falcon import testing

from conftest import DEMO, StaticTokens
from kiln.cloud.api.errors import Conflict, NotFound
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute.adapter import ComputeAdapter
from kiln.cloud.sandbox.compute.app import create_compute_app


@pytest.fixture
def network_id(full: SandboxCloud) -> str:
    net = full.network.create_network(DEMO, {"name": "private"})
    full.network.create_subnet(DEMO, {"network_id": net["id"], "cidr": "10.0.0.0/24"})
    return str(net["id"])


def _boot(compute: ComputeAdapter, full: SandboxCloud, *port_ids: str) -> Any:
    image = next(i for i in full.store.list("image") if i["status"] == "active")
    return compute.create_server(
        {
            "name": "vm",
            "imageRef": image["id"],
            "flavorRef": "1",
            "networks": [{"port": p} for p in port_ids],
        }
    )


def _port(full: SandboxCloud, network_id: str) -> str:
    return str(full.network.create_port(DEMO, {"network_id": network_id})["id"])


def test_booting_with_a_port_of_another_server_is_refused(
    full: SandboxCloud, compute: ComputeAdapter, network_id: str
) -> None:
    port, free = _port(full, network_id), _port(full, network_id)
    first = _boot(compute, full, port)
    with pytest.raises(Conflict) as err:
        _boot(compute, full, free, port)
    assert err.value.message == f"Port {port} is still in use."
    assert [s["id"] for s in full.store.list("server")] == [first.id]
    assert full.network.get_port_internal(port)["device_id"] == first.id
    released = full.network.get_port_internal(free)  # bound first, then let go again
    assert (released["device_id"], released["status"]) == ("", "DOWN")


def test_a_port_any_device_holds_is_in_use(
    full: SandboxCloud, compute: ComputeAdapter, network_id: str
) -> None:
    port = full.network.create_port(DEMO, {"network_id": network_id, "device_id": "some-router"})
    with pytest.raises(Conflict, match="is still in use"):
        _boot(compute, full, port["id"])
    assert full.store.list("server") == []


def test_attaching_a_port_in_use_is_refused(
    full: SandboxCloud, compute: ComputeAdapter, network_id: str
) -> None:
    port = _port(full, network_id)
    holder = _boot(compute, full, port)
    other = _boot(compute, full)
    for server in (other, holder):  # another server's port, and one the server already has
        with pytest.raises(Conflict) as err:
            compute.create_server_interface(server.id, {"port_id": port})
        assert err.value.message == f"Port {port} is still in use."
    assert full.network.get_port_internal(port)["device_id"] == holder.id
    with pytest.raises(NotFound):
        compute.create_server_interface(other.id, {"port_id": "no-such-port"})
    compute.delete_server_interface(holder.id, port)
    assert compute.create_server_interface(other.id, {"port_id": port}).port_id == port
    assert full.network.get_port_internal(port)["device_id"] == other.id


def test_the_conflict_is_nova_s_body_over_rest(
    full: SandboxCloud, compute: ComputeAdapter, network_id: str
) -> None:
    port = _port(full, network_id)
    holder = _boot(compute, full, port)
    client = testing.TestClient(create_compute_app(full, StaticTokens()))
    headers = {"X-Auth-Token": "demo-token"}
    image = next(i for i in full.store.list("image") if i["status"] == "active")
    body = {"name": "b", "imageRef": image["id"], "flavorRef": "1", "networks": [{"port": port}]}
    expected = {"conflictingRequest": {"code": 409, "message": f"Port {port} is still in use."}}
    booted = client.simulate_post("/v2.1/servers", json={"server": body}, headers=headers)
    assert (booted.status_code, booted.json) == (409, expected)
    attached = client.simulate_post(
        f"/v2.1/servers/{holder.id}/os-interface",
        json={"interfaceAttachment": {"port_id": port}},
        headers=headers,
    )
    assert (attached.status_code, attached.json) == (409, expected)
