"""Template resources: interface, nested validation, facade compatibility (section 7)."""

from __future__ import annotations

from typing import Any

from kiln.template.inputs import build_stack
from kiln.template.provider import ProviderResource, nested_parameters
from kiln.testing.heat_types import HEAT_TEST_TYPES

BOX = """\
heat_template_version: 2021-04-16
parameters:
  size: {type: number, constraints: [{range: {max: 10}}]}
  names: {type: comma_delimited_list, default: ""}
  cfg: {type: json, default: {}}
outputs:
  out: {value: {get_param: size}}
"""


def provider(
    template: str, files: dict[str, Any], env: dict[str, Any] | None = None
) -> tuple[Any, ProviderResource]:
    stack = build_stack(template, files=files, environment=env, types=HEAT_TEST_TYPES)
    typed = stack.typed["n"]
    assert isinstance(typed, ProviderResource)
    return stack, typed


def test_interface_types_and_required() -> None:
    stack, typed = provider(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: box.yaml, properties: "
        "{size: 3, names: [a, b]}}\n",
        {"box.yaml": BOX},
    )
    assert not stack.errors
    kinds = {name: (str(s.type), s.required) for name, s in typed.property_schemas.items()}
    assert kinds == {"size": ("Number", True), "names": ("List", False), "cfg": ("Map", False)}
    assert typed.attribute_names == ["out", "show"]
    assert typed.nested_parameters == {"size": 3, "names": "a,b"}
    assert typed.nested is not None and typed.nested.parameter_values["names"] == ["a", "b"]


def test_constraints_carry_over_to_properties() -> None:
    stack, _ = provider(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: box.yaml, properties: "
        "{size: 30}}\n",
        {"box.yaml": BOX},
    )
    assert any("30 is out of range" in e.message for e in stack.errors)


def test_unknown_and_missing_properties() -> None:
    stack, _ = provider(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: box.yaml, properties: "
        "{colour: red}}\n",
        {"box.yaml": BOX},
    )
    messages = {e.message for e in stack.errors}
    assert "Unknown Property colour" in messages
    assert "Property size not assigned" in messages


def test_missing_file_is_a_clear_error() -> None:
    stack = build_stack("heat_template_version: 2021-04-16\nresources:\n  n: {type: gone.yaml}\n")
    assert any('Could not fetch remote template "gone.yaml"' in e.message for e in stack.errors)


def test_nested_parse_errors_carry_the_nested_file_location() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: bad.yaml}\n",
        files={"bad.yaml": "heat_template_version: 2021-04-16\nresources: [\n"},
    )
    assert len(stack.errors) == 1
    assert stack.errors[0].location is not None
    assert stack.errors[0].location.file == "bad.yaml"


def test_strict_outputs_in_a_provider() -> None:
    stack, _ = provider(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: box.yaml}\n",
        {
            "box.yaml": "heat_template_version: 2021-04-16\noutputs:\n  o: {Description: x, "
            "value: 1}\n"
        },
    )
    assert any(
        '"Description" is not a valid keyword inside a output definition' in e.message
        for e in stack.errors
    )


def test_facade_checks_against_the_overridden_type() -> None:
    provider_template = """\
heat_template_version: 2021-04-16
parameters:
  type: {type: number}
  extra: {type: string}
"""
    stack = build_stack(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: OS::Heat::Value, "
        "properties: {value: 1, type: 2, extra: x}}\n",
        environment={"resource_registry": {"OS::Heat::Value": "value.yaml"}},
        files={"value.yaml": provider_template},
        types=HEAT_TEST_TYPES,
    )
    messages = {e.message for e in stack.errors}
    assert "Required property value for facade OS::Heat::Value missing in provider" in messages
    assert (
        "Property type type mismatch between facade OS::Heat::Value (String) and provider (Number)"
    ) in messages
    assert "Provider requires property extra unknown in facade OS::Heat::Value" in messages
    assert "Attribute value for facade OS::Heat::Value missing in provider" in messages


def test_a_provider_may_use_the_type_it_overrides() -> None:
    provider_template = """\
heat_template_version: 2021-04-16
parameters:
  value: {type: json}
resources:
  real: {type: OS::Heat::Value, properties: {value: {get_param: value}}}
outputs:
  value: {value: {get_attr: [real, value]}}
  show: {value: null}
"""
    stack = build_stack(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: OS::Heat::Value, "
        "properties: {value: {a: 1}}}\n",
        environment={"resource_registry": {"OS::Heat::Value": "value.yaml"}},
        files={"value.yaml": provider_template},
        types=HEAT_TEST_TYPES,
    )
    assert not stack.errors, [e.full_message for e in stack.errors]
    nested = stack.typed["n"].nested  # type: ignore[attr-defined]
    assert nested.typed["real"].implementation == "Value"


def test_parameter_defaults_make_properties_optional() -> None:
    stack, typed = provider(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: box.yaml}\n",
        {"box.yaml": BOX},
        env={"parameter_defaults": {"size": 4}},
    )
    assert not stack.errors
    assert typed.property_schemas["size"].required is False


def test_nested_parameters_conversion() -> None:
    assert nested_parameters({"l": ["a", None, "b"], "m": {"k": 1}, "n": 3}) == {
        "l": "a,,b",
        "m": {"k": 1},
        "n": 3,
    }
    assert nested_parameters({"l": [{"k": "v"}]}) == {"l": ".member.0.k=v"}
