"""OS::Heat::StructuredConfig: a software config holding a map."""

from __future__ import annotations

import pytest
from heat_schema_support import IO_ROWS, NO_DEFAULT, table, undocumented

from kiln.core.errors import StackValidationFailed
from kiln.resources.heat.structured_config import StructuredConfig
from kiln.testing.plugin_context import decide, fake_resource, run_action


def test_schema_matches_the_reference() -> None:
    assert table(StructuredConfig.properties_schema) == {
        "group": ("string", False, "Heat::Ungrouped", False, []),
        "options": ("map", False, NO_DEFAULT, False, []),
        **IO_ROWS,
        "config": ("map", False, NO_DEFAULT, False, []),
    }
    assert list(StructuredConfig.attributes_schema) == ["config"]
    assert undocumented(StructuredConfig) == []


def test_config_map_is_stored_and_returned() -> None:
    config = {"config": {"foo": {"get_input": "bar"}}, "list": [1, 2]}
    res, ctx = fake_resource(StructuredConfig, {"group": "puppet", "config": config})
    run_action(res, "create")
    assert ctx.physical_id is not None
    assert ctx.data["config"] == config and ctx.data["group"] == "puppet"
    assert res.get_attribute("config") == config
    assert res.reference_id() == ctx.physical_id


def test_unset_config_is_an_empty_map() -> None:
    res, _ = fake_resource(StructuredConfig)
    run_action(res, "create")
    assert res.get_attribute("config") == {}


def test_config_must_be_a_map() -> None:
    with pytest.raises(StackValidationFailed, match="is not a map"):
        fake_resource(StructuredConfig, {"config": "text"})


def test_any_change_replaces() -> None:
    res, _ = fake_resource(StructuredConfig, {"config": {"a": 1}})
    assert decide(res, {"config": {"a": 2}}).kind == "replace"
    assert decide(res, {"config": {"a": 1}, "group": "salt"}).kind == "replace"
    assert decide(res, {"config": {"a": 1}}).kind == "unchanged"
