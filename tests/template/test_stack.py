"""StackDefinition: errors collected in one pass, limits, pseudo parameters, outputs."""

from __future__ import annotations

from kiln.core.errors import KilnError
from kiln.core.paths import render_path
from kiln.template.inputs import build_stack
from kiln.template.stack import Limits, StackIdentity
from kiln.testing.heat_types import HEAT_TEST_TYPES, CreatedState


def errors_of(template: str, **kwargs: object) -> list[KilnError]:
    stack = build_stack(template, types=HEAT_TEST_TYPES, **kwargs)  # type: ignore[arg-type]
    return stack.errors


def test_independent_errors_are_all_reported_with_locations() -> None:
    errors = errors_of("""\
heat_template_version: 2021-04-16
parameters:
  n: {type: number, default: abc}
  s: {type: strin}
resources:
  a:
    type: OS::Heat::Value
    properties: {value: {get_resource: nope}}
  b:
    type: My::Missing
  c:
    type: OS::Heat::Value
    properties: {value: 1, colour: red}
  d: {type: OS::Heat::None, depends_on: ghost}
outputs:
  o: {value: {get_attr: [a, nosuch]}}
""")
    rendered = [(render_path(e.path), e.message, str(e.location)) for e in errors]
    messages = " | ".join(m for _, m, _ in rendered)
    assert "could not convert string to float: 'abc'" in messages
    assert "Invalid type (strin)" in messages
    assert 'The specified reference "nope" (in a.Properties.value) is incorrect.' in messages
    assert "The Resource Type (My::Missing) could not be found." in messages
    assert "Unknown Property colour" in messages
    assert 'The specified reference "ghost" (in d) is incorrect.' in messages
    assert "The Referenced Attribute (a nosuch) is incorrect." in messages
    assert len(errors) == 7
    assert all(e.location is not None and e.location.file == "<template>" for e in errors)
    by_message = {m: loc for _, m, loc in rendered}
    assert by_message["The Resource Type (My::Missing) could not be found."] == "<template>:10:5"


def test_resource_limit_counts_disabled_resources() -> None:
    body = "".join(f"  r{i}: {{type: OS::Heat::None, condition: false}}\n" for i in range(4))
    template = "heat_template_version: 2021-04-16\nresources:\n" + body
    errors = errors_of(template, limits=Limits(max_resources_per_stack=3))
    assert [e.message for e in errors] == [
        "Request limit exceeded: Maximum resources per stack exceeded."
    ]
    assert not errors_of(template, limits=Limits(max_resources_per_stack=-1))


def test_resource_limit_counts_the_nested_tree() -> None:
    inner = "heat_template_version: 2021-04-16\nresources:\n" + "".join(
        f"  r{i}: {{type: OS::Heat::None}}\n" for i in range(3)
    )
    template = """\
heat_template_version: 2021-04-16
resources:
  a: {type: inner.yaml}
  b: {type: inner.yaml}
"""
    errors = errors_of(template, files={"inner.yaml": inner}, limits=Limits(7))
    assert any("Maximum resources per stack exceeded" in e.message for e in errors)
    assert not errors_of(template, files={"inner.yaml": inner}, limits=Limits(8))


def test_nested_depth_limit() -> None:
    files = {
        f"l{i}.yaml": "heat_template_version: 2021-04-16\nresources:\n"
        f"  n: {{type: l{i + 1}.yaml}}\n"
        for i in range(7)
    }
    files["l7.yaml"] = "heat_template_version: 2021-04-16\n"
    template = "heat_template_version: 2021-04-16\nresources:\n  n: {type: l0.yaml}\n"
    errors = errors_of(template, files=files)
    assert any("Recursion depth exceeds 5." in e.message for e in errors)
    deep = next(e for e in errors if "Recursion depth" in e.message)
    assert render_path(deep.path).startswith("resources.n<nested_stack>.resources.n<nested_stack>")


def test_pseudo_parameters() -> None:
    stack = build_stack(
        """\
heat_template_version: 2021-04-16
outputs:
  name: {value: {get_param: OS::stack_name}}
  id: {value: {get_param: OS::stack_id}}
  project: {value: {get_param: OS::project_id}}
""",
        identity=StackIdentity(name="web", id="1234", project_id="p1"),
    )
    values = {k: v.value for k, v in stack.output_values().items()}
    assert values == {"name": "web", "id": "1234", "project": "p1"}


def test_cfn_pseudo_parameters_and_mappings() -> None:
    stack = build_stack(
        """\
AWSTemplateFormatVersion: '2010-09-09'
Mappings:
  Sizes: {small: {flavor: m1.small}}
Parameters:
  Size: {Type: String, Default: small, AllowedValues: [small]}
Resources:
  R: {Type: 'OS::Heat::Value', Properties: {value: {'Fn::FindInMap': [Sizes, {Ref: Size}, flavor]}}}
Outputs:
  Region: {Value: {Ref: 'AWS::Region'}}
  Name: {Value: {Ref: 'AWS::StackName'}}
  Flavor: {Value: {'Fn::GetAtt': [R, value]}}
  Missing: {Value: {'Fn::FindInMap': [Sizes, large, flavor]}}
""",
        types=HEAT_TEST_TYPES,
        identity=StackIdentity(name="web"),
    )
    assert not stack.errors
    CreatedState().create_all(stack)
    outputs = stack.output_values()
    assert outputs["Region"].value == "ap-southeast-1"
    assert outputs["Name"].value == "web"
    assert outputs["Flavor"].value == "m1.small"
    assert outputs["Missing"].error is not None
    assert "large" in outputs["Missing"].error


def test_resource_facade_outside_a_nested_template() -> None:
    stack = build_stack("""\
heat_template_version: 2021-04-16
outputs:
  o: {value: {resource_facade: metadata}}
""")
    assert "only valid in a nested template" in (stack.output_values()["o"].error or "")


def test_resource_facade_in_a_nested_template() -> None:
    inner = """\
heat_template_version: 2021-04-16
resources:
  v:
    type: OS::Heat::Value
    properties:
      value: {resource_facade: metadata}
"""
    stack = build_stack(
        """\
heat_template_version: 2021-04-16
resources:
  n:
    type: inner.yaml
    metadata: {role: db}
    deletion_policy: Retain
""",
        files={"inner.yaml": inner},
        types=HEAT_TEST_TYPES,
    )
    assert not stack.errors
    nested = stack.typed["n"].nested  # type: ignore[attr-defined]
    assert nested.facade("metadata") == {"role": "db"}
    assert nested.facade("deletion_policy") == "Retain"


def test_external_resource_has_no_dependencies() -> None:
    stack = build_stack(
        """\
heat_template_version: 2021-04-16
resources:
  a: {type: OS::Heat::Value, properties: {value: 1}}
  b:
    type: OS::Heat::Value
    external_id: abc
    properties: {value: {get_attr: [a, value]}}
""",
        types=HEAT_TEST_TYPES,
    )
    assert not stack.errors
    assert stack.resources["b"].requires == frozenset()
    assert stack.resources["b"].external_id == "abc"


def test_snapshot_deletion_policy_needs_support() -> None:
    errors = errors_of("""\
heat_template_version: 2021-04-16
resources:
  a: {type: OS::Heat::Value, properties: {value: 1}, deletion_policy: snapshot}
""")
    assert [e.message for e in errors] == ['"Snapshot" deletion policy not supported']


def test_every_condition_is_validated_even_unused() -> None:
    errors = errors_of("""\
heat_template_version: 2016-10-14
conditions:
  unused: {equals: [{get_param: nowhere}, 1]}
""")
    assert any("The Parameter (nowhere) was not provided." in e.message for e in errors)


def test_and_validates_every_operand() -> None:
    errors = errors_of("""\
heat_template_version: 2016-10-14
conditions:
  c: {and: [false, typo]}
""")
    assert any('Invalid condition "typo"' in e.message for e in errors)


def test_undeclared_parameter_in_an_output_is_caught_at_validation() -> None:
    errors = errors_of("""\
heat_template_version: 2021-04-16
outputs:
  o: {value: {get_param: nope}}
""")
    assert [render_path(e.path) for e in errors] == ["outputs.o.value"]


def test_duplicate_names_include_pseudo_parameters() -> None:
    errors = errors_of("""\
heat_template_version: 2021-04-16
resources:
  OS::stack_name: {type: OS::Heat::None}
""")
    assert any("Duplicate names {'OS::stack_name'}" in e.message for e in errors)
