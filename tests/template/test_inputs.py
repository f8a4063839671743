"""build_stack / build_environment: every accepted form of template and environment, and the
request combination of environment, environment files and top-level parameters (reference
6.2, 6.3 Rec: the command line wins)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kiln.core.errors import (
    ConflictingMergeStrategyForParam,
    EnvironmentParseError,
    KilnError,
    RequestLimitExceeded,
    StackValidationFailed,
    TemplateParseError,
    UnknownUserParameter,
)
from kiln.core.paths import Location
from kiln.template.inputs import EnvironmentInput, as_template, build_environment, build_stack
from kiln.template.loader import load_environment, load_template
from kiln.template.stack import Limits, StackIdentity
from kiln.template.template import Template
from kiln.testing.heat_types import HEAT_TEST_TYPES

TEXT = """\
heat_template_version: 2021-04-16
parameters:
  a: {type: string, default: tmpl}
  l: {type: comma_delimited_list, default: ""}
  n: {type: number, default: 1}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: a}}}
outputs:
  a: {value: {get_param: a}}
"""
DATA: dict[str, Any] = {
    "heat_template_version": "2021-04-16",
    "parameters": {
        "a": {"type": "string", "default": "tmpl"},
        "l": {"type": "comma_delimited_list", "default": ""},
        "n": {"type": "number", "default": 1},
    },
    "resources": {"v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "a"}}}},
    "outputs": {"a": {"value": {"get_param": "a"}}},
}


def template_forms() -> list[tuple[str, Any]]:
    return [
        ("text", TEXT),
        ("bytes", TEXT.encode()),
        ("json text", json.dumps(DATA)),
        ("dict", DATA),
        ("document", load_template(TEXT, "t.yaml")),
        ("template", Template.load(TEXT, "t.yaml")),
    ]


@pytest.mark.parametrize(
    ("form", "template"), template_forms(), ids=[f for f, _ in template_forms()]
)
def test_every_template_form_builds_the_same_stack(form: str, template: Any) -> None:
    stack = build_stack(template, types=HEAT_TEST_TYPES)
    assert stack.errors == []
    assert stack.version.date == "2021-04-16"
    assert list(stack.resources) == ["v"]
    assert stack.output_values()["a"].value == "tmpl"


def test_a_template_object_is_used_as_is() -> None:
    template = Template.load(TEXT, "t.yaml")
    assert as_template(template) is template
    assert build_stack(template).template is template


def test_a_document_keeps_its_name_and_positions() -> None:
    doc = load_template(TEXT + "  bad: {value: {get_param: nope}}\n", "t.yaml")
    stack = build_stack(doc)
    assert [str(e.location) for e in stack.errors] == ["t.yaml:10:9"]


def test_text_templates_are_named_template() -> None:
    stack = build_stack(TEXT + "  bad: {value: {get_param: nope}}\n")
    assert stack.errors[0].location == Location("<template>", 10, 9)


@pytest.mark.parametrize(
    ("template", "error"),
    [
        ("- a\n", TemplateParseError),
        ("description: x\n", TemplateParseError),  # no version key in text
        ("heat_template_version: [\n", TemplateParseError),
        ([1], TemplateParseError),
    ],
)
def test_bad_templates_raise(template: Any, error: type[KilnError]) -> None:
    with pytest.raises(error):
        build_stack(template)


@pytest.mark.parametrize("template", [TEXT, DATA], ids=["text", "dict"])
def test_the_size_limit_applies_to_text_and_data(template: Any) -> None:
    with pytest.raises(RequestLimitExceeded, match="exceeds maximum allowed size"):
        build_stack(template, limits=Limits(max_template_size=100))
    assert build_stack(template, limits=Limits(max_template_size=10_000)).errors == []


def test_a_mapping_template_is_copied_not_kept() -> None:
    data = dict(DATA)
    stack = build_stack(data)
    data["description"] = "changed later"
    assert "description" not in stack.template.data


# -- environments --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "environment",
    [
        "parameters:\n  a: env\n",
        b"parameters:\n  a: env\n",
        '{"parameters": {"a": "env"}}',
        {"parameters": {"a": "env"}},
        load_environment("parameters:\n  a: env\n", "e.yaml"),
    ],
    ids=["text", "bytes", "json", "dict", "document"],
)
def test_every_environment_form(environment: EnvironmentInput) -> None:
    stack = build_stack(TEXT, environment=environment, types=HEAT_TEST_TYPES)
    assert stack.errors == []
    assert stack.environment.parameters == {"a": "env"}
    assert stack.output_values()["a"].value == "env"


@pytest.mark.parametrize("environment", [None, {}, "", "{}"])
def test_empty_environments(environment: EnvironmentInput) -> None:
    stack = build_stack(TEXT, environment=environment)
    assert stack.environment.parameters == {}
    assert stack.output_values()["a"].value == "tmpl"


@pytest.mark.parametrize(
    ("environment", "message", "where"),
    [
        ("parameters:\n  a: x\nbogus: 1\n", 'environment has wrong section "bogus"', (3, 1)),
        ("parameters:\n", 'environment has empty section "parameters"', (1, 1)),
        ("- a\n", "The environment is not a valid YAML mapping data type.", (1, 1)),
        ("parameters: [\n", "Error parsing environment <environment>", (2, 1)),
    ],
)
def test_inline_environment_errors_are_located(
    environment: str, message: str, where: tuple[int, int]
) -> None:
    with pytest.raises(EnvironmentParseError) as info:
        build_stack(TEXT, environment=environment)
    assert message in info.value.message
    assert info.value.location == Location("<environment>", *where)


def test_unknown_parameter_in_the_environment() -> None:
    stack = build_stack(TEXT, environment={"parameters": {"zzz": 1}})
    assert [(e.kind, e.message) for e in stack.errors] == [
        ("UnknownUserParameter", "The Parameter (zzz) was not defined in template.")
    ]
    assert isinstance(stack.errors[0], UnknownUserParameter)


# -- environment files and top-level parameters --------------------------------------------------


def values(**kwargs: Any) -> dict[str, Any]:
    stack = build_stack(TEXT, **kwargs)
    assert stack.errors == [], [e.full_message for e in stack.errors]
    return dict(stack.parameter_values)


@pytest.mark.parametrize(
    ("files", "parameters", "expected"),
    [
        ([("e1", "parameters: {a: one}\n")], None, "one"),
        ([("e1", "parameters: {a: one}\n"), ("e2", "parameters: {a: two}\n")], None, "two"),
        ([("e1", "parameters: {a: one}\n"), ("e2", "parameter_defaults: {a: pd}\n")], None, "one"),
        ([("e1", "parameter_defaults: {a: pd}\n")], None, "pd"),
        # 6.3 Rec: top-level parameters are applied after the files (the command line wins)
        ([("e1", "parameters: {a: one}\n"), ("e2", "parameters: {a: two}\n")], {"a": "cli"}, "cli"),
        ([], {"a": "cli"}, "cli"),
        ([("e1", {"parameters": {"a": "dict"}})], None, "dict"),
        ([("e1", b"parameters: {a: bytes}\n")], None, "bytes"),
        ([("e1", load_environment("parameters: {a: doc}\n", "e1"))], None, "doc"),
        ([("e1", "parameters: {a: null}\n")], None, "tmpl"),  # null counts as not given
    ],
)
def test_environment_files_in_order_then_parameters(
    files: list[tuple[str, EnvironmentInput]], parameters: dict[str, Any] | None, expected: str
) -> None:
    assert values(environment_files=files, parameters=parameters)["a"] == expected


def test_merge_strategies_apply_per_file() -> None:
    files: list[tuple[str, EnvironmentInput]] = [
        ("e1", "parameter_merge_strategies: {l: merge}\nparameters: {l: [x]}\n"),
        ("e2", "parameters: {l: [y, z]}\n"),
    ]
    assert values(environment_files=files)["l"] == ["x", "y", "z"]


def test_top_level_parameters_replace_merged_values() -> None:
    files: list[tuple[str, EnvironmentInput]] = [
        ("e1", "parameter_merge_strategies: {l: merge}\nparameters: {l: [x]}\n"),
    ]
    assert values(environment_files=files, parameters={"l": "c"})["l"] == ["c"]


def test_build_environment_alone() -> None:
    template = Template.load(TEXT)
    env = build_environment(
        template,
        {"parameter_defaults": {"n": 5}},
        [("e1", "parameters: {a: one}\nresource_registry: {My::T: OS::Heat::None}\n")],
        {"l": "p,q"},
    )
    assert env.parameters == {"a": "one", "l": "p,q"}
    assert env.parameter_defaults == {}  # the inline environment yields to the files (6.2)
    assert env.registry.to_dict() == {"My::T": "OS::Heat::None", "resources": {}}


def test_registry_of_a_later_file_extends_the_earlier_one() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\nresources:\n  a: {type: My::A}\n  b: {type: My::B}\n",
        environment_files=[
            ("e1", "resource_registry: {My::A: OS::Heat::None}\n"),
            ("e2", "resource_registry: {My::B: OS::Heat::None}\n"),
        ],
        types=HEAT_TEST_TYPES,
    )
    assert stack.errors == []
    assert {n: t.implementation for n, t in stack.typed.items()} == {
        "a": "NoneResource",
        "b": "NoneResource",
    }


def test_error_in_an_environment_file_names_the_file() -> None:
    with pytest.raises(EnvironmentParseError) as info:
        build_stack(TEXT, environment_files=[("env1.yaml", "bogus: 1\n")])
    assert info.value.full_message == 'env1.yaml: bogus: environment has wrong section "bogus"'
    assert info.value.location == Location("env1.yaml", 1, 1)


def test_syntax_error_in_an_environment_file_is_located_in_it() -> None:
    with pytest.raises(EnvironmentParseError) as info:
        build_stack(
            TEXT,
            environment_files=[("env1.yaml", "parameters: {a: x}\n"), ("env2.yaml", "a: [\n")],
        )
    assert "Error parsing environment env2.yaml" in info.value.message
    assert info.value.location == Location("env2.yaml", 2, 1)


@pytest.mark.parametrize(
    ("second", "error", "where"),
    [
        ("parameters: {a: two}\nbogus: 2\n", EnvironmentParseError, (2, 1)),
        (
            "parameter_merge_strategies:\n  a: overwrite\nparameters: {a: y}\n",
            ConflictingMergeStrategyForParam,
            (2, 3),
        ),
    ],
)
def test_error_in_a_later_environment_file_is_located_in_that_file(
    second: str, error: type[KilnError], where: tuple[int, int]
) -> None:
    first = "parameter_merge_strategies: {a: merge}\nparameters: {a: x}\n"
    with pytest.raises(error) as info:
        build_stack(TEXT, environment_files=[("env1.yaml", first), ("env2.yaml", second)])
    assert info.value.full_message.startswith("env2.yaml: ")
    assert info.value.location == Location("env2.yaml", *where)


def test_inline_environment_is_ignored_when_there_are_environment_files() -> None:
    got = values(
        environment={"parameters": {"a": "inline", "n": 9}},
        environment_files=[("e1", "parameters: {l: x}\n")],
    )
    assert (got["a"], got["n"]) == ("tmpl", 1)


def test_later_file_sets_a_nested_templates_parameter() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\nresources:\n  n: {type: box.yaml}\n",
        files={
            "box.yaml": "heat_template_version: 2021-04-16\nparameters:\n  size: {type: string}\n"
        },
        environment_files=[
            ("e1", {"parameter_defaults": {"size": "a"}}),
            ("e2", {"parameter_defaults": {"size": "b"}}),
        ],
    )
    assert stack.environment.parameter_defaults == {"size": "b"}


# -- the rest of build_stack's options -----------------------------------------------------------


def test_options_reach_the_stack() -> None:
    stack = build_stack(
        "heat_template_version: 2021-04-16\n"
        "parameters:\n  req: {type: string}\n"
        "outputs:\n"
        "  name: {value: {get_param: OS::stack_name}}\n"
        "  f: {value: {get_file: f.txt}}\n",
        files={"f.txt": "content"},
        identity=StackIdentity(name="web", id="1", project_id="p"),
        check_values=False,
    )
    assert stack.errors == []  # a missing value is tolerated without value checking
    assert {k: v.value for k, v in stack.output_values().items()} == {
        "name": "web",
        "f": "content",
    }


def test_missing_required_value_is_an_error_when_checking_values() -> None:
    text = "heat_template_version: 2021-04-16\nparameters:\n  req: {type: string}\n"
    assert [e.kind for e in build_stack(text).errors] == ["UserParameterMissing"]
    assert build_stack(text, allow_missing=True).errors == []


# -- data the API could not have parsed from JSON (evaluator fuzz findings) ---------------------


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("environment", [[{"a": 1}], 0, "- a\n"], ids=["list", "int", "text"])
def test_an_environment_that_is_not_a_mapping_is_an_environment_error(
    environment: Any,
) -> None:
    # A list or an int given as data raised ValueError/TypeError from dict().
    with pytest.raises(EnvironmentParseError, match="not a valid YAML mapping data type"):
        build_stack(TEXT, environment=environment)
    with pytest.raises(EnvironmentParseError, match="not a valid YAML mapping data type"):
        build_stack(TEXT, environment_files=[("e.yaml", environment)])


def test_too_deep_environment_data_is_a_request_limit() -> None:
    # Nested 1000 deep, data raised RecursionError (copying, merging).
    deep = {"parameters": {"a": _deep(1000)}}
    with pytest.raises(RequestLimitExceeded, match="Environment <environment>: nesting depth"):
        build_stack(TEXT, environment=deep)
    with pytest.raises(RequestLimitExceeded, match=r"Environment e\.yaml: nesting depth"):
        build_stack(TEXT, environment_files=[("e.yaml", deep)])
    assert build_stack(TEXT, environment={"parameters": {"a": str(_deep(50))}}).errors == []


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (["a"], 'environment section "parameters" must be a map. Found a list instead'),
        (True, 'environment section "parameters" must be a map. Found a boolean instead'),
        ({1: "x"}, 'environment section "parameters" has a non-string name 1'),
    ],
)
def test_request_parameters_must_be_a_map_of_names(parameters: Any, message: str) -> None:
    # They come from the request body; a list raised ValueError from dict().
    with pytest.raises(EnvironmentParseError) as info:
        build_stack(TEXT, parameters=parameters)
    assert info.value.message == message


def test_too_deep_or_unwritable_parameter_values_are_errors() -> None:
    with pytest.raises(RequestLimitExceeded, match="Parameters: nesting depth exceeds"):
        build_stack(TEXT, parameters={"a": _deep(1000)})
    # More digits than Python writes as text (no JSON text can hold it).
    with pytest.raises(StackValidationFailed, match="Parameters is not valid JSON data"):
        build_stack(TEXT, parameters={"a": int("f" * 5000, 16)})


def test_a_too_deep_template_or_files_entry_given_as_data_is_a_request_limit() -> None:
    deep = {**DATA, "outputs": {"d": {"value": _deep(1000)}}}
    with pytest.raises(RequestLimitExceeded, match="Template <template>: nesting depth"):
        build_stack(deep)
    provider = {"heat_template_version": "2021-04-16", "resources": {"n": {"type": "n.yaml"}}}
    stack = build_stack(provider, files={"n.yaml": deep}, types=HEAT_TEST_TYPES)
    assert [e.kind for e in stack.errors] == ["RequestLimitExceeded"]
    assert "Template n.yaml: nesting depth exceeds" in stack.errors[0].message
