"""Template: top-level sections per version (reference 1.4, 1.6, 4.1), CFN section names,
size limit of structured templates (8.4), description."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kiln.core.errors import (
    InvalidTemplateSection,
    InvalidTemplateVersion,
    KilnError,
    RequestLimitExceeded,
    StackValidationFailed,
    TemplateParseError,
)
from kiln.core.paths import Location
from kiln.template.inputs import build_stack
from kiln.template.loader import load_template
from kiln.template.template import MAX_TEMPLATE_SIZE, Template
from kiln.template.versions import AWS_KEY, HEAT_CFN_KEY, HOT_DATES, HOT_KEY

HOT_SECTIONS = ["description", "parameter_groups", "parameters", "resources", "outputs"]
CFN_SECTIONS = ["Description", "Mappings", "Parameters", "Resources", "Outputs"]

# (version key, version, sections accepted besides the version key)
ACCEPTED = [
    *((HOT_KEY, d, HOT_SECTIONS) for d in HOT_DATES if d < "2016-10-14"),
    *((HOT_KEY, d, [*HOT_SECTIONS, "conditions"]) for d in HOT_DATES if d >= "2016-10-14"),
    (AWS_KEY, "2010-09-09", [*CFN_SECTIONS, "Conditions"]),
    (HEAT_CFN_KEY, "2012-12-12", CFN_SECTIONS),
]


@pytest.mark.parametrize(("key", "version", "sections"), ACCEPTED, ids=lambda v: str(v))
def test_every_allowed_section_is_accepted(key: str, version: str, sections: list[str]) -> None:
    data: dict[str, Any] = {key: version, **{s: None for s in sections}}
    template = Template.from_data(data)
    assert template.version.key == key
    assert template.version.date == version
    assert set(template.data) == {key, *sections}


@pytest.mark.parametrize(
    ("text", "section"),
    [
        # misspelt, other-format or other-version sections
        ("heat_template_version: 2021-04-16\nresource:\n  r: {type: x}\n", "resource"),
        ("heat_template_version: 2021-04-16\nResources: {}\n", "Resources"),
        ("heat_template_version: 2021-04-16\nDescription: x\n", "Description"),
        ("heat_template_version: 2021-04-16\nmappings: {}\n", "mappings"),
        ("heat_template_version: 2021-04-16\nMappings: {}\n", "Mappings"),
        ("heat_template_version: 2016-04-08\nconditions: {}\n", "conditions"),
        ("heat_template_version: 2013-05-23\nconditions: {}\n", "conditions"),
        ("AWSTemplateFormatVersion: '2010-09-09'\nresources: {}\n", "resources"),
        ("AWSTemplateFormatVersion: '2010-09-09'\nparameter_groups: []\n", "parameter_groups"),
        ("AWSTemplateFormatVersion: '2010-09-09'\nconditions: {}\n", "conditions"),
        ("HeatTemplateFormatVersion: '2012-12-12'\nConditions: {}\n", "Conditions"),
        ("HeatTemplateFormatVersion: '2012-12-12'\nParameterGroups: []\n", "ParameterGroups"),
        # quirk 20, Rec: the internal placeholder key is rejected too
        ("heat_template_version: 2021-04-16\n__undefined__: 1\n", "__undefined__"),
    ],
)
def test_unknown_section_is_invalid_with_its_location(text: str, section: str) -> None:
    with pytest.raises(InvalidTemplateSection) as info:
        Template.load(text, "t.yaml")
    assert info.value.message == f"The template section is invalid: {section}"
    assert info.value.location == Location("t.yaml", 2, 1)


def test_section_location_points_at_the_offending_key() -> None:
    text = "heat_template_version: 2021-04-16\ndescription: ok\nresources: {}\n\nfoo: 1\n"
    with pytest.raises(InvalidTemplateSection) as info:
        Template.load(text, "t.yaml")
    assert info.value.location == Location("t.yaml", 5, 1)


def test_section_location_in_json() -> None:
    text = '{\n  "heat_template_version": "2021-04-16",\n  "bogus": {}\n}\n'
    with pytest.raises(InvalidTemplateSection) as info:
        Template.load(text, "t.json")
    assert info.value.location is not None
    assert (info.value.location.file, info.value.location.line) == ("t.json", 3)


def test_non_string_section_key_is_invalid() -> None:
    with pytest.raises(InvalidTemplateSection, match="The template section is invalid: 5"):
        Template.from_data({HOT_KEY: "2021-04-16", 5: {}})


def test_version_errors_are_located_in_the_text() -> None:
    with pytest.raises(InvalidTemplateVersion) as info:
        Template.load("description: x\nheat_template_version: 2019-01-01\n", "t.yaml")
    assert '"heat_template_version" should be one of' in info.value.message
    assert info.value.location == Location("t.yaml", 2, 1)


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ([1, 2], TemplateParseError, "The template is not a JSON object or YAML mapping."),
        ("heat_template_version: 2021-04-16", TemplateParseError, "not a JSON object"),
        (None, TemplateParseError, "not a JSON object"),
        ({"description": "x"}, InvalidTemplateVersion, "Template version was not provided"),
        ({HOT_KEY: 20161014}, InvalidTemplateVersion, "Template version was not provided"),
        ({HOT_KEY: "2021-04-16", "foo": 1}, InvalidTemplateSection, "invalid: foo"),
    ],
)
def test_from_data_errors(data: Any, error: type[KilnError], message: str) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        Template.from_data(data)


def test_from_data_size_limit_is_the_length_of_the_json_text() -> None:
    data = {HOT_KEY: "2021-04-16", "description": "x" * 40}
    size = len(json.dumps(data))
    assert Template.from_data(data, max_size=size).description == "x" * 40
    with pytest.raises(RequestLimitExceeded) as info:
        Template.from_data(data, max_size=size - 1)
    assert info.value.message == (
        f"Request limit exceeded: Template size ({size} bytes) exceeds maximum "
        f"allowed size ({size - 1} bytes)."
    )


def test_from_data_default_limit_is_heats() -> None:
    assert MAX_TEMPLATE_SIZE == 524288
    big = {HOT_KEY: "2021-04-16", "description": "x" * MAX_TEMPLATE_SIZE}
    with pytest.raises(RequestLimitExceeded, match=r"\(524288 bytes\)"):
        Template.from_data(big)


def test_load_applies_the_size_limit_to_the_text() -> None:
    text = "heat_template_version: 2021-04-16\ndescription: " + "x" * 100 + "\n"
    assert Template.load(text, max_size=len(text)).description == "x" * 100
    with pytest.raises(RequestLimitExceeded, match=f"Template size \\({len(text)} bytes\\)"):
        Template.load(text, max_size=len(text) - 1)


def test_from_document_keeps_name_and_source() -> None:
    doc = load_template("heat_template_version: 2021-04-16\nresources: {}\n", "top.yaml")
    template = Template.from_document(doc)
    assert template.name == "top.yaml"
    assert template.locate(("resources",)) == Location("top.yaml", 2, 1)


def test_from_data_knows_no_locations() -> None:
    template = Template.from_data({HOT_KEY: "2021-04-16", "resources": {}}, "api")
    assert template.name == "api"
    assert template.locate(("resources",)) is None


# -- canonical section access ------------------------------------------------------------------

CFN = """\
AWSTemplateFormatVersion: '2010-09-09'
Description: A CFN template
Mappings: {M: {k: {v: 1}}}
Resources: {R: {Type: 'OS::Heat::None'}}
Outputs: {O: {Value: 1}}
Conditions: {C: true}
"""


@pytest.mark.parametrize(
    ("canonical", "key", "value"),
    [
        ("description", "Description", "A CFN template"),
        ("mappings", "Mappings", {"M": {"k": {"v": 1}}}),
        ("resources", "Resources", {"R": {"Type": "OS::Heat::None"}}),
        ("outputs", "Outputs", {"O": {"Value": 1}}),
        ("conditions", "Conditions", {"C": True}),
        ("parameters", "Parameters", None),
    ],
)
def test_cfn_sections_under_canonical_names(canonical: str, key: str, value: Any) -> None:
    template = Template.load(CFN)
    assert template.version.is_cfn
    assert template.section_key(canonical) == key
    assert template.section(canonical) == value


@pytest.mark.parametrize("canonical", ["resources", "outputs", "parameter_groups", "conditions"])
def test_hot_section_keys_are_canonical(canonical: str) -> None:
    template = Template.load("heat_template_version: 2021-04-16\n")
    assert template.section_key(canonical) == canonical
    assert template.section(canonical) is None


@pytest.mark.parametrize("value", ["", "resources: \n", "resources: {}\n"])
def test_absent_null_or_empty_mapping_sections_are_empty(value: str) -> None:
    template = Template.load("heat_template_version: 2021-04-16\n" + value)
    assert template.mapping_section("resources") == ({}, [])


@pytest.mark.parametrize(
    ("text", "canonical", "message"),
    [
        (
            "heat_template_version: 2021-04-16\nresources: [a]\n",
            "resources",
            '"resources" must contain a map of resource maps. Found a [list] instead',
        ),
        (
            "heat_template_version: 2021-04-16\noutputs: 5\n",
            "outputs",
            '"outputs" must contain a map of output maps. Found a [int] instead',
        ),
        (
            "heat_template_version: 2021-04-16\nparameters: x\n",
            "parameters",
            '"parameters" must contain a map of parameter maps. Found a [str] instead',
        ),
        (
            "HeatTemplateFormatVersion: '2012-12-12'\nResources: [a]\n",
            "resources",
            '"Resources" must contain a map of resource maps. Found a [list] instead',
        ),
    ],
)
def test_mapping_section_that_is_not_a_map(text: str, canonical: str, message: str) -> None:
    template = Template.load(text)
    entries, errors = template.mapping_section(canonical)
    assert entries == {}
    assert len(errors) == 1
    assert isinstance(errors[0], StackValidationFailed)
    assert errors[0].message == message
    assert errors[0].path == (template.section_key(canonical),)


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("heat_template_version: 2021-04-16\ndescription: Web tier\n", "Web tier"),
        ("heat_template_version: 2021-04-16\ndescription: |\n  two\n  lines\n", "two\nlines\n"),
        ("HeatTemplateFormatVersion: '2012-12-12'\nDescription: CFN text\n", "CFN text"),
    ],
)
def test_description_text(text: str, description: str) -> None:
    assert Template.load(text).description == description


def test_description_is_never_evaluated() -> None:
    text = "heat_template_version: 2021-04-16\ndescription: {get_param: undeclared}\n"
    template = Template.load(text)
    assert template.section("description") == {"get_param": "undeclared"}
    assert build_stack(template).errors == []


def test_from_data_applies_the_loaders_depth_bound() -> None:
    # Evaluator fuzz finding: deep data raised RecursionError (measuring, parsing).
    deep: Any = "x"
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(RequestLimitExceeded) as info:
        Template.from_data({HOT_KEY: "2021-04-16", "description": deep}, "t.json")
    assert info.value.message == (
        "Request limit exceeded: Template t.json: nesting depth exceeds maximum allowed "
        "depth (100)."
    )
    cyclic: dict[str, Any] = {HOT_KEY: "2021-04-16"}
    cyclic["description"] = [cyclic]
    with pytest.raises(RequestLimitExceeded, match="nesting depth exceeds"):
        Template.from_data(cyclic)


def test_from_data_rejects_an_int_no_json_text_can_hold() -> None:
    # Evaluator fuzz finding: json.dumps raised ValueError (int_max_str_digits).
    data = {HOT_KEY: "2021-04-16", "description": int("f" * 5000, 16)}
    with pytest.raises(TemplateParseError, match="Template <template> is not valid JSON data"):
        Template.from_data(data)
