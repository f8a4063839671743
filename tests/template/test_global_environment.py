"""The global environment (reference template-language 6.2, 6.5, 7.1): merging the files
of environment_dir, and every stack's registry layered over it."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.plugin.registry import PluginRegistry
from kiln.schema.custom import CustomConstraints
from kiln.schema.resource_types import GlobalEnvironment
from kiln.template.global_environment import (
    global_environment,
    merge_global_files,
    resolve_global_type,
    system_registry,
    template_types,
)
from kiln.template.inputs import build_stack
from kiln.template.stack import StackDefinition
from kiln.template.template import Template

ENV_DIR = "file:///etc/kiln/environment.d/"
PROVIDER = """
heat_template_version: 2021-04-16
description: A value with a label.
parameters:
  label: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: label}}}
outputs:
  labelled: {value: {get_attr: [v, value]}}
"""
GLOBAL_FILES = [
    (
        ENV_DIR + "10-aliases.yaml",
        """
resource_registry:
  "Old::Value": OS::Heat::Value
  "Old::Gone": OS::Heat::None
  "Labelled::Value": ../templates/labelled.yaml
""",
    ),
    (ENV_DIR + "20-undo.yaml", 'resource_registry: {"Old::Gone": null}\n'),
]
LABELLED = "file:///etc/kiln/templates/labelled.yaml"
HOT = "heat_template_version: 2021-04-16\nresources:\n"


def environment(files: list[tuple[str, str]] = GLOBAL_FILES) -> GlobalEnvironment:
    merged = merge_global_files(files)
    return global_environment(merged, {LABELLED: PROVIDER})


@pytest.fixture(scope="module")
def types() -> PluginRegistry:
    return PluginRegistry.discover(global_environment=environment())


def build(types: PluginRegistry, resources: str, **kw: Any) -> StackDefinition:
    custom = types.custom_constraints(CustomConstraints.offline())
    return build_stack(HOT + resources, types=types, custom=custom, **kw)


def test_files_merge_in_order_and_a_later_null_deletes() -> None:
    merged = merge_global_files(GLOBAL_FILES)
    assert merged.resource_registry == {
        "Old::Value": "OS::Heat::Value",
        "Labelled::Value": LABELLED,  # relative to the file that names it
        "resources": {},
    }
    assert merged.template_locations == [LABELLED]
    assert merged.skipped == []


def test_a_file_that_is_not_an_environment_is_skipped_and_reported() -> None:
    files = [
        (ENV_DIR + "a.yaml", "resource_registry: {A::B: OS::Heat::None}\n"),
        (ENV_DIR + "b.yaml", "resource_registry: [not, a, map]\n"),
        (ENV_DIR + "c.yaml", "parameters: {x: 1}\nextra: {}\n"),
        (ENV_DIR + "d.yaml", "key: [unclosed\n"),
    ]
    merged = merge_global_files(files)
    assert merged.resource_registry == {"A::B": "OS::Heat::None", "resources": {}}
    assert [name for name, _ in merged.skipped] == [
        ENV_DIR + n for n in ("b.yaml", "c.yaml", "d.yaml")
    ]
    assert 'wrong section "extra"' in merged.skipped[1][1]


def test_only_the_templates_the_registry_names_are_kept() -> None:
    merged = merge_global_files(GLOBAL_FILES)
    kept = global_environment(merged, {LABELLED: PROVIDER, "file:///other.yaml": "x"})
    assert dict(kept.templates) == {LABELLED: PROVIDER}


def test_an_empty_global_environment_adds_no_layer() -> None:
    assert system_registry(GlobalEnvironment()) is None
    assert system_registry(environment()) is not None


def test_an_alias_of_the_global_environment_resolves(types: PluginRegistry) -> None:
    stack = build(types, "  v: {type: Old::Value, properties: {value: 1}}\n")
    assert stack.errors == []
    assert stack.typed["v"].implementation == "Value"
    assert stack.resources["v"].type == "Old::Value"  # the type as written is kept


def test_a_deleted_global_entry_is_gone(types: PluginRegistry) -> None:
    stack = build(types, "  g: {type: Old::Gone}\n")
    assert [e.message for e in stack.errors] == [
        "The Resource Type (Old::Gone) could not be found."
    ]


def test_the_user_registry_wins_over_the_global_one(types: PluginRegistry) -> None:
    stack = build(
        types,
        "  v: {type: Old::Value}\n",
        environment={"resource_registry": {"Old::Value": "OS::Heat::None"}},
    )
    assert stack.errors == []
    assert stack.typed["v"].implementation == "NoneResource"


def test_a_user_null_cannot_delete_a_global_entry(types: PluginRegistry) -> None:
    stack = build(
        types,
        "  v: {type: Old::Value, properties: {value: 1}}\n",
        environment={"resource_registry": {"Old::Value": None}},
    )
    assert stack.errors == []
    assert stack.typed["v"].implementation == "Value"


def test_environment_files_keep_the_global_layer(types: PluginRegistry) -> None:
    stack = build(
        types,
        "  v: {type: Old::Value, properties: {value: 1}}\n  w: {type: My::Value}\n",
        environment_files=[("env.yaml", {"resource_registry": {"My::Value": "OS::Heat::None"}})],
    )
    assert stack.errors == []
    assert stack.typed["v"].implementation == "Value"


def test_the_stack_environment_shows_only_the_user_layer(types: PluginRegistry) -> None:
    stack = build(
        types,
        "  v: {type: Old::Value, properties: {value: 1}}\n",
        environment={"resource_registry": {"My::Thing": "OS::Heat::None"}},
    )
    assert stack.environment.to_dict()["resource_registry"] == {
        "My::Thing": "OS::Heat::None",
        "resources": {},
    }


def test_a_global_provider_template_is_read_from_the_global_environment(
    types: PluginRegistry,
) -> None:
    stack = build(types, "  l: {type: Labelled::Value, properties: {label: hi}}\n")
    assert stack.errors == []
    provider = stack.typed["l"]
    assert provider.implementation == "TemplateResource"
    assert provider.has_attribute("labelled")
    bad = build(types, "  l: {type: Labelled::Value, properties: {colour: red}}\n")
    assert "Unknown Property colour" in str(bad.errors[0])


def test_a_user_mapping_to_the_same_location_gets_no_global_template(
    types: PluginRegistry,
) -> None:
    # Only the global environment's own mappings may use what it read (7.1).
    stack = build(
        types,
        "  l: {type: Mine::Labelled, properties: {label: hi}}\n",
        environment={"resource_registry": {"Mine::Labelled": LABELLED}},
    )
    assert [e.message for e in stack.errors] == [
        f'Could not fetch remote template "{LABELLED}": not present in the files map'
    ]


def test_a_global_template_that_was_not_read_is_reported(types: PluginRegistry) -> None:
    unread = PluginRegistry.discover(
        global_environment=global_environment(merge_global_files(GLOBAL_FILES), {})
    )
    stack = build(unread, "  l: {type: Labelled::Value, properties: {label: hi}}\n")
    assert [e.message for e in stack.errors] == [
        f'Could not fetch remote template "{LABELLED}": not present in the files map '
        "and not read with the global environment"
    ]


def test_the_files_map_comes_before_the_global_template(types: PluginRegistry) -> None:
    other = PROVIDER.replace("label:", "tag:").replace("get_param: label", "get_param: tag")
    stack = build(
        types, "  l: {type: Labelled::Value, properties: {tag: x}}\n", files={LABELLED: other}
    )
    assert stack.errors == []


def test_a_definition_without_an_environment_has_the_global_layer(
    types: PluginRegistry,
) -> None:
    template = Template.load(HOT + "  v: {type: Old::Value, properties: {value: 1}}\n")
    stack = StackDefinition(template, types=types)
    assert stack.errors == []


def test_the_catalogue_view_of_global_types(types: PluginRegistry) -> None:
    env = types.global_environment
    assert template_types(env) == ["Labelled::Value"]
    is_plugin = lambda name: types.plugin(name) is not None  # noqa: E731
    alias = resolve_global_type(env, "Old::Value", is_plugin)
    assert (alias.kind, alias.target) == ("builtin", "OS::Heat::Value")
    provider = resolve_global_type(env, "Labelled::Value", is_plugin)
    assert (provider.kind, provider.target, provider.system) == ("template", LABELLED, True)
    assert resolve_global_type(GlobalEnvironment(), "Old::Value", is_plugin).kind == "missing"
