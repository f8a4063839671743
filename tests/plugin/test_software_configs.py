"""The software-config store a plugin reaches through its context."""

from __future__ import annotations

from kiln.plugin.software_configs import SERVICE, software_configs
from kiln.testing.plugin_context import FakeContext


def test_the_store_is_the_software_config_client() -> None:
    store = {"id-1": {"config": "x"}}
    found = software_configs(FakeContext(clients={SERVICE: store}))
    assert found is not None
    assert found.get("id-1") == {"config": "x"}
    assert found.get("id-2") is None


def test_no_store_when_the_context_supplies_none() -> None:
    assert software_configs(FakeContext()) is None
