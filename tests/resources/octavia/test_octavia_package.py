"""The OS::Octavia plugins: registered from the package, each in the file its name implies."""

from __future__ import annotations

import inspect
import pathlib

import kiln.resources.octavia
from kiln.plugin import PluginRegistry
from kiln.resources.octavia.health_monitor import HealthMonitor
from kiln.resources.octavia.listener import Listener
from kiln.resources.octavia.load_balancer import LoadBalancer
from kiln.resources.octavia.pool import Pool
from kiln.resources.octavia.pool_member import PoolMember
from kiln.schema.custom import CustomConstraints

EXPECTED = {
    "OS::Octavia::HealthMonitor": (HealthMonitor, "health_monitor.py"),
    "OS::Octavia::Listener": (Listener, "listener.py"),
    "OS::Octavia::LoadBalancer": (LoadBalancer, "load_balancer.py"),
    "OS::Octavia::Pool": (Pool, "pool.py"),
    "OS::Octavia::PoolMember": (PoolMember, "pool_member.py"),
}


def registry() -> PluginRegistry:
    found = PluginRegistry()
    found.register_package(kiln.resources.octavia)
    return found


def test_the_package_registers_exactly_the_octavia_types() -> None:
    found = registry()
    assert found.names() == sorted(EXPECTED)
    for name, (plugin, filename) in EXPECTED.items():
        assert found.plugin(name) is plugin
        assert pathlib.Path(inspect.getfile(plugin)).name == filename


def test_stack_validation_runs_the_cross_property_checks() -> None:
    custom = CustomConstraints.offline()
    pool = registry().get("OS::Octavia::Pool")
    assert pool is not None
    props = {"lb_algorithm": "ROUND_ROBIN", "protocol": "HTTP"}
    (error,) = pool.validate_properties(props, [], custom)
    assert "listener, loadbalancer" in error.message
    assert pool.validate_properties({**props, "listener": "l"}, [], custom) == []
    member = registry().get("OS::Octavia::PoolMember")
    assert member is not None
    bad = {"pool": "p", "address": "not-an-ip", "protocol_port": 80}
    assert member.validate_properties(bad, [], custom)
