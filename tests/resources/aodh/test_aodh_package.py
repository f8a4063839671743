"""The OS::Aodh plugins: registered from the package."""

from __future__ import annotations

import kiln.resources.aodh
from kiln.plugin import PluginRegistry
from kiln.resources.aodh.alarm import Alarm
from kiln.schema.custom import CustomConstraints


def test_the_package_registers_the_alarm() -> None:
    registry = PluginRegistry()
    registry.register_package(kiln.resources.aodh)
    assert registry.names() == ["OS::Aodh::Alarm"]
    assert registry.plugin("OS::Aodh::Alarm") is Alarm


def test_time_constraints_are_checked_at_validation() -> None:
    registry = PluginRegistry()
    registry.register_package(kiln.resources.aodh)
    alarm = registry.get("OS::Aodh::Alarm")
    assert alarm is not None
    custom = CustomConstraints.offline()
    props = {"meter_name": "cpu_util", "threshold": 1}
    assert alarm.validate_properties(props, [], custom) == []
    bad = {**props, "time_constraints": [{"name": "t", "start": "never", "duration": 1}]}
    assert alarm.validate_properties(bad, [], custom)
