"""OS::Heat::SoftwareConfig: the stored config, its attribute, replacement on any change."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from heat_schema_support import IO_ROWS, NO_DEFAULT, table, undocumented

from kiln.core.errors import StackValidationFailed
from kiln.plugin.names import physical_resource_name
from kiln.resources.heat.software_config import SoftwareConfig
from kiln.testing.plugin_context import decide, fake_resource, run_action


def test_schema_matches_the_reference() -> None:
    assert table(SoftwareConfig.properties_schema) == {
        "group": ("string", False, "Heat::Ungrouped", False, []),
        "config": ("string", False, NO_DEFAULT, False, []),
        "options": ("map", False, NO_DEFAULT, False, []),
        **IO_ROWS,
    }
    assert list(SoftwareConfig.attributes_schema) == ["config"]
    assert undocumented(SoftwareConfig) == []


PROPS = {
    "group": "script",
    "config": "#!/bin/sh\necho $foo",
    "options": {"debug": True},
    "inputs": [{"name": "foo", "default": "bar"}],
    "outputs": [{"name": "result", "error_output": True}],
}


def test_create_stores_the_config_under_a_new_uuid() -> None:
    res, ctx = fake_resource(SoftwareConfig, PROPS, name="cfg", stack_name="s")
    assert res.reference_id() == "cfg"
    assert res.get_attribute("config") is None
    assert run_action(res, "create") == 1
    assert ctx.physical_id is not None and uuid.UUID(ctx.physical_id).version == 4
    assert res.reference_id() == ctx.physical_id
    assert ctx.data == {
        "name": physical_resource_name("s", "cfg", ctx.resource_uuid),
        "group": "script",
        "config": "#!/bin/sh\necho $foo",
        "options": {"debug": True},
        "inputs": [
            {
                "name": "foo",
                "description": None,
                "type": "String",
                "default": "bar",
                "replace_on_change": False,
            }
        ],
        "outputs": [
            {"name": "result", "description": None, "type": "String", "error_output": True}
        ],
    }
    assert ctx.redacted == set()
    assert res.get_attribute("config") == PROPS["config"]
    assert res.get_attribute("show") == {"id": ctx.physical_id, **ctx.data}


def test_unset_fields_are_stored_empty_and_the_attribute_is_empty_text() -> None:
    res, ctx = fake_resource(SoftwareConfig)
    run_action(res, "create")
    assert (ctx.data["group"], ctx.data["options"], ctx.data["inputs"]) == (
        "Heat::Ungrouped",
        {},
        [],
    )
    assert ctx.data["config"] is None
    assert res.get_attribute("config") == ""


def test_config_id_comes_from_the_context_randomness() -> None:
    ids = []
    for seed in (3, 3, 4):
        res, ctx = fake_resource(SoftwareConfig, seed=seed)
        run_action(res, "create")
        ids.append(ctx.physical_id)
    assert ids[0] == ids[1] != ids[2]


def test_delete_removes_the_stored_config() -> None:
    res, ctx = fake_resource(SoftwareConfig, PROPS)
    run_action(res, "create")
    ctx.data_set("unrelated", 1)
    assert run_action(res, "delete") == 1
    assert ctx.data == {"unrelated": 1}
    assert res.get_attribute("config") == ""  # gone: empty, as Heat when not found
    assert run_action(res, "delete") == 1  # not found is fine


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ({"inputs": [{"description": "x"}]}, "Property name not assigned"),
        ({"outputs": [{"name": "o", "type": "Float"}]}, '"Float" is not an allowed value'),
        ({"inputs": [{"name": "i", "bogus": 1}]}, "Unknown Property bogus"),
        ({"options": "text"}, '"text" is not a map'),
    ],
)
def test_schema_errors(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(StackValidationFailed, match=message):
        fake_resource(SoftwareConfig, properties)


@pytest.mark.parametrize(
    "change",
    [
        {"config": "echo other"},
        {"group": "ansible"},
        {"options": {}},
        {"inputs": [{"name": "foo"}]},
        {"outputs": []},
    ],
)
def test_any_change_replaces(change: dict[str, Any]) -> None:
    res, _ = fake_resource(SoftwareConfig, PROPS)
    assert decide(res, {**PROPS, **change}).kind == "replace"
    assert decide(res, PROPS).kind == "unchanged"
