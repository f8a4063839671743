"""Simulator: call faults, outcome faults, latency, delays, quotas and the call log."""

from __future__ import annotations

import pytest

from kiln.cloud.api.errors import Conflict, OverLimit, Unavailable
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.simulator import FaultRule, SandboxConfig, Simulator

DEMO = CloudScope("demo-project")


def test_a_call_fault_fails_the_matching_calls_it_counts() -> None:
    sim = Simulator()
    sim.add_fault(FaultRule(service="compute", operation="create_*", status=503, count=2))
    for _ in range(2):
        with pytest.raises(Unavailable):
            sim.enter(DEMO, "compute", "create_server")
    sim.enter(DEMO, "compute", "create_server")  # used up
    sim.enter(DEMO, "network", "create_port")  # never matched
    assert sim.faults == []
    assert [c.fault for c in sim.call_log("compute")] == [503, 503, None]


def test_skip_lets_the_first_calls_pass_and_status_picks_the_error() -> None:
    sim = Simulator()
    sim.add_fault(FaultRule(operation="delete_port", status=409, skip=1, count=None))
    sim.enter(DEMO, "network", "delete_port")
    for _ in range(3):
        with pytest.raises(Conflict):
            sim.enter(DEMO, "network", "delete_port")


def test_a_fault_can_be_limited_to_one_project() -> None:
    sim = Simulator()
    sim.add_fault(FaultRule(status=500, project_id="other"))
    sim.enter(DEMO, "compute", "get_server")
    with pytest.raises(Unavailable):
        sim.enter(CloudScope("other"), "compute", "get_server")


def test_outcome_faults_are_separate_from_call_faults() -> None:
    sim = Simulator()
    rule = sim.add_fault(
        FaultRule(service="compute", operation="create_server", final_state="ERROR")
    )
    sim.enter(DEMO, "compute", "create_server")  # the call itself succeeds
    assert sim.outcome(DEMO, "compute", "create_server") is rule
    assert sim.outcome(DEMO, "compute", "create_server") is None


def test_latency_sleeps_by_the_most_specific_pattern() -> None:
    slept: list[float] = []
    sim = Simulator(
        SandboxConfig(latency={"*": 0.2, "compute.*": 0.5, "compute.get_server": 0}),
        sleep=slept.append,
    )
    sim.enter(DEMO, "network", "create_port")
    sim.enter(DEMO, "compute", "create_server")
    sim.enter(DEMO, "compute", "get_server")
    assert slept == [0.2, 0.5]


def test_delays_default_to_zero_and_follow_patterns() -> None:
    sim = Simulator(SandboxConfig(delays={"compute.server.*": 3, "compute.server.delete": 1}))
    assert sim.delay("compute", "server", "create") == 3
    assert sim.delay("compute", "server", "delete") == 1
    assert sim.delay("network", "port", "create") == 0


def test_quotas_take_project_overrides_then_the_defaults() -> None:
    sim = Simulator(SandboxConfig(quotas={"instances": 3}))
    sim.check_quota("p", "instances", used=2)
    with pytest.raises(OverLimit, match="instances"):
        sim.check_quota("p", "instances", used=3)
    sim.project_quotas["p"] = {"instances": 10}
    sim.check_quota("p", "instances", used=9)


def test_config_from_a_document_rejects_unknown_settings() -> None:
    config = SandboxConfig.from_mapping(
        {"latency": {"*": "0.2"}, "faults": [{"operation": "create_server", "status": 500}]}
    )
    assert config.latency == {"*": 0.2}
    assert config.faults[0].operation == "create_server"
    with pytest.raises(ValueError, match="latencies"):
        SandboxConfig.from_mapping({"latencies": {}})
