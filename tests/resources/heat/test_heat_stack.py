"""OS::Heat::Stack (local form) with a fake stacks client."""

from __future__ import annotations

from typing import Any

import pytest
from heat_schema_support import NO_DEFAULT, table, undocumented

from kiln.core.errors import KilnError
from kiln.plugin import ResourceFailure
from kiln.resources.heat.stack import Stack
from kiln.testing.plugin_context import FakeNestedStacks, decide, fake_resource, run_action

TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  p: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: p}}}
outputs:
  out: {value: {get_attr: [v, value]}}
"""
JSON_TEMPLATE = '{"heat_template_version": "2021-04-16", "resources": {}}'


def test_schema_matches_the_reference() -> None:
    assert table(Stack.properties_schema) == {
        "context": ("map", False, NO_DEFAULT, True, []),
        "context.region_name": ("string", False, NO_DEFAULT, False, []),
        "context.credential_secret_id": ("string", False, NO_DEFAULT, True, []),
        "context.ca_cert": ("string", False, NO_DEFAULT, True, []),
        "context.insecure": ("boolean", False, False, True, []),
        "template": ("string", True, NO_DEFAULT, True, []),
        "timeout": ("integer", False, NO_DEFAULT, True, []),
        "parameters": ("map", False, {}, True, []),
    }
    assert list(Stack.attributes_schema) == ["stack_name", "outputs"]
    assert not Stack.dynamic_attributes
    assert undocumented(Stack) == []


def stack(properties: dict[str, Any], **kw: Any) -> tuple[Stack, FakeNestedStacks, Any]:
    stacks = FakeNestedStacks(environment={"parameter_defaults": {"x": 1}}, files={"f": "F"})
    res, ctx = fake_resource(Stack, properties, clients={"stacks": stacks}, **kw)
    return res, stacks, ctx


def test_create_parses_the_template_and_passes_parameters_and_timeout() -> None:
    res, stacks, ctx = stack(
        {"template": TEMPLATE, "parameters": {"p": "hi"}, "timeout": 7},
        name="nested",
        stack_name="top",
    )
    assert res.get_attribute("outputs") is None and res.get_attribute("stack_name") is None
    run_action(res, "create")
    child = stacks.children[ctx.physical_id]
    assert child.template["resources"]["v"]["type"] == "OS::Heat::Value"
    assert child.parameters == {"p": "hi"} and child.timeout_mins == 7
    assert child.environment == {"parameter_defaults": {"x": 1}} and child.files == {"f": "F"}
    assert res.reference_id() == ctx.physical_id
    assert res.get_attribute("stack_name") == ctx.physical_resource_name()
    assert res.get_attribute("stack_name").startswith("top-nested-")
    assert res.get_attribute("outputs") == {"out": "hi"}  # the fake's attribute: the property
    assert res.get_attribute("show") is None


def test_a_json_template_is_accepted() -> None:
    res, stacks, ctx = stack({"template": JSON_TEMPLATE})
    run_action(res, "create")
    assert stacks.children[ctx.physical_id].template == {
        "heat_template_version": "2021-04-16",
        "resources": {},
    }


def test_update_sends_the_new_template_and_parameters() -> None:
    res, stacks, ctx = stack({"template": TEMPLATE, "parameters": {"p": "a"}})
    run_action(res, "create")
    run_action(res, "update", new_properties={"template": TEMPLATE, "parameters": {"p": "b"}})
    child = stacks.children[ctx.physical_id]
    assert (child.action, child.parameters) == ("UPDATE", {"p": "b"})
    assert res.get_attribute("outputs") == {"out": "b"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("resources: {}", "Template format version not found."),
        ("[1, 2]", "The template is not a JSON object or YAML mapping."),
        ("a: [", ""),
    ],
)
def test_a_bad_template_is_refused_at_path_template(text: str, message: str) -> None:
    typed = {"template": text, "parameters": {}, "context": None, "timeout": None}
    (error,) = Stack.validate(typed)
    assert error.path[:1] == ("template",) and message in error.message
    res, stacks, _ = stack({"template": text})
    with pytest.raises(KilnError):
        run_action(res, "create")
    assert stacks.children == {}


@pytest.mark.parametrize(
    "context", [{"region_name": "RegionTwo"}, {"credential_secret_id": "secret"}]
)
def test_remote_stacks_are_not_supported(context: dict[str, Any]) -> None:
    typed = {"template": TEMPLATE, "parameters": {}, "context": context, "timeout": None}
    (error,) = Stack.validate(typed)
    assert isinstance(error, ResourceFailure)
    assert "remote stacks are not supported" in error.message
    assert error.path == ("context", next(iter(context)))
    res, stacks, _ = stack({"template": TEMPLATE, "context": context})
    with pytest.raises(ResourceFailure, match="remote stacks are not supported"):
        run_action(res, "create")
    assert stacks.children == {}


def test_a_local_context_is_fine() -> None:
    typed = {"template": TEMPLATE, "parameters": {}, "context": {"insecure": True}}
    assert Stack.validate(typed) == []


@pytest.mark.parametrize(
    ("new", "kind"),
    [
        ({"template": TEMPLATE, "parameters": {"p": "b"}}, "update"),
        ({"template": JSON_TEMPLATE}, "update"),
        ({"template": TEMPLATE, "timeout": 3}, "update"),
        ({"template": TEMPLATE, "context": {"ca_cert": "pem"}}, "update"),
        ({"template": TEMPLATE, "context": {"region_name": "R2"}}, "replace"),
        ({"template": TEMPLATE}, "unchanged"),
    ],
)
def test_update_decisions(new: dict[str, Any], kind: str) -> None:
    res, _, _ = stack({"template": TEMPLATE})
    assert decide(res, new).kind == kind


def test_a_failed_child_fails_the_action() -> None:
    res, stacks, _ = stack({"template": TEMPLATE})
    stacks.fail_reason = "bad"
    with pytest.raises(ResourceFailure, match="Nested stack CREATE failed: bad"):
        run_action(res, "create")


def test_delete() -> None:
    res, stacks, ctx = stack({"template": TEMPLATE})
    run_action(res, "create")
    stacks.polls = 2
    assert run_action(res, "delete") == 2
    assert stacks.state(ctx.physical_id) is None
