"""OS::Heat::None: accepts anything, does nothing, is never updated nor replaced."""

from __future__ import annotations

import uuid

import pytest

from kiln.plugin import PluginRegistry
from kiln.resources.heat.none_resource import NoneResource
from kiln.schema.custom import CustomConstraints
from kiln.testing.plugin_context import decide, fake_resource, run_action

ANYTHING = {"flavor": "m1.huge", "networks": [{"port": 1}], "nested": {"a": None}}


def test_schema_accepts_anything_and_answers_every_attribute() -> None:
    assert NoneResource.properties_schema == {}
    assert NoneResource.accepts_any_properties and NoneResource.dynamic_attributes
    described = PluginRegistry([NoneResource]).get("OS::Heat::None")
    assert described is not None
    assert described.property_schemas is None and described.attribute_schemas is None
    assert described.validate_properties(ANYTHING, (), CustomConstraints.offline()) == []
    assert described.has_attribute("first_address")


def test_properties_pass_unvalidated() -> None:
    _, ctx = fake_resource(NoneResource, ANYTHING)
    assert ctx.properties == ANYTHING


def test_create_sets_a_random_uuid_and_the_placeholder_flag() -> None:
    res, ctx = fake_resource(NoneResource, ANYTHING, name="server")
    assert res.reference_id() == "server"  # logical name before create
    assert run_action(res, "create") == 1
    assert ctx.physical_id is not None
    assert uuid.UUID(ctx.physical_id).version == 4
    assert ctx.data == {"is_placeholder": True}
    assert res.reference_id() == ctx.physical_id


def test_physical_id_comes_from_the_context_randomness() -> None:
    ids = []
    for seed in (1, 1, 2):
        res, ctx = fake_resource(NoneResource, seed=seed)
        run_action(res, "create")
        ids.append(ctx.physical_id)
    assert ids[0] == ids[1] != ids[2]


@pytest.mark.parametrize("attribute", ["show", "first_address", "value", "anything"])
def test_every_attribute_is_null(attribute: str) -> None:
    res, _ = fake_resource(NoneResource, ANYTHING)
    run_action(res, "create")
    assert res.get_attribute(attribute) is None


@pytest.mark.parametrize("action", ["update", "suspend", "resume", "check", "snapshot", "delete"])
def test_other_actions_do_nothing(action: str) -> None:
    res, ctx = fake_resource(NoneResource, ANYTHING)
    run_action(res, "create")
    before = (ctx.physical_id, dict(ctx.data))
    assert run_action(res, action) == 1
    assert (ctx.physical_id, ctx.data) == before


@pytest.mark.parametrize(
    ("new_properties", "new_metadata", "stored_status"),
    [
        (ANYTHING, None, "COMPLETE"),
        ({"flavor": "m1.small"}, None, "COMPLETE"),
        ({}, {"changed": True}, "COMPLETE"),
        ({"flavor": "m1.small"}, None, "FAILED"),
    ],
)
def test_never_updated_nor_replaced(
    new_properties: dict[str, object], new_metadata: object, stored_status: str
) -> None:
    res, _ = fake_resource(NoneResource, ANYTHING)
    decision = decide(res, new_properties, new_metadata, stored_status=stored_status)
    assert decision.kind == "unchanged"


@pytest.mark.parametrize("stored_action", ["INIT", "DELETE"])
def test_created_again_when_it_does_not_exist(stored_action: str) -> None:
    res, _ = fake_resource(NoneResource, ANYTHING)
    assert decide(res, ANYTHING, stored_action=stored_action).kind == "replace"
