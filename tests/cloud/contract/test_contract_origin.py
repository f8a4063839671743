"""The resource behind a cloud call reaches the sandbox's call log on both paths
(in process through the context variable, over HTTP through a request header)."""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.scope import calling_for


def test_calls_name_their_origin(contract_cloud: Any) -> None:
    network = contract_cloud.client("network")
    with calling_for("stack-1/net"):
        created = network.create_network({"name": "traced"})
    network.get_network(created.id)  # outside: no origin
    log = contract_cloud.sandbox.sim.call_log("network")
    origins = {(c.operation, c.origin) for c in log}
    assert ("create_network", "stack-1/net") in origins
    assert ("get_network", None) in origins
