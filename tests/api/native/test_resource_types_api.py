"""Resource types: list, schema, generated template (heat-api.md 2.7, 3.12)."""

from __future__ import annotations

import json

import pytest

from kiln.api.policy import OsloPolicy
from kiln.testing.api_harness import make_api

pytestmark = pytest.mark.timeout(60)

ADMIN_ROLES = ("admin", "member", "reader")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    return make_api(tmp_path_factory.mktemp("types"))


@pytest.fixture
def guarded(tmp_path):
    rules = tmp_path / "policy.yaml"
    rules.write_text('"resource_types:OS::Heat::Value": "rule:project_admin"\n')
    return make_api(tmp_path, policy=OsloPolicy(policy_file=rules))


def _types(api, query=""):
    return api.client.simulate_get(api.url("/resource_types"), query_string=query)


def test_list_names_sorted(api):
    found = _types(api, "with_description=False")
    assert found.status_code == 200
    names = found.json["resource_types"]
    assert names == sorted(names)
    assert {"OS::Heat::RandomString", "OS::Heat::None", "OS::Heat::SoftwareConfig"} <= set(names)


def test_list_with_descriptions(api):
    items = _types(api, "with_description=true").json["resource_types"]
    random = next(i for i in items if i["resource_type"] == "OS::Heat::RandomString")
    assert set(random) == {"resource_type", "description"}
    assert "random string" in random["description"].lower()


def test_list_filters(api):
    assert _types(api, "name=OS::Heat::Res").json["resource_types"] == [
        "OS::Heat::ResourceChain",
        "OS::Heat::ResourceGroup",
    ]
    assert _types(api, "name=Heat").json["resource_types"] == []  # matched at the start
    assert _types(api, "name=.*String$").json["resource_types"] == ["OS::Heat::RandomString"]
    assert _types(api, "name=([").json["resource_types"] == []  # a bad pattern lists none
    assert len(_types(api, "support_status=SUPPORTED").json["resource_types"]) > 5
    assert _types(api, "support_status=DEPRECATED").json["resource_types"] == []
    assert _types(api, "version=5.0.0").json["resource_types"] == []
    bad = _types(api, "support_status=MAYBE")
    assert (bad.status_code, bad.json["error"]["type"]) == (400, "Invalid")


def test_schema_of_a_type(api):
    found = api.client.simulate_get(api.url("/resource_types/OS%3A%3AHeat%3A%3ARandomString"))
    assert found.status_code == 200
    doc = found.json
    assert set(doc) == {"resource_type", "properties", "attributes", "support_status"}
    assert doc["resource_type"] == "OS::Heat::RandomString"
    assert doc["properties"]["length"] == {
        "type": "integer",
        "description": "Length of the string to generate.",
        "default": 32,
        "required": False,
        "constraints": [{"range": {"min": 1, "max": 512}}],
        "update_allowed": False,
        "immutable": False,
    }
    assert "sequence" not in doc["properties"]  # hidden
    assert doc["properties"]["character_classes"]["schema"]["*"]["type"] == "map"
    assert doc["attributes"]["value"]["type"] == "string"
    assert doc["attributes"]["show"]["type"] == "map"
    assert doc["support_status"] == {
        "status": "SUPPORTED",
        "version": None,
        "message": None,
        "previous_status": None,
    }
    described = api.client.simulate_get(
        api.url("/resource_types/OS::Heat::RandomString"), query_string="with_description=true"
    )
    assert described.json["description"]


def test_unknown_type_is_entity_not_found(api):
    found = api.client.simulate_get(api.url("/resource_types/OS::Nova::Nothing"))
    assert found.status_code == 404
    assert found.json["error"]["type"] == "EntityNotFound"
    assert (
        found.json["error"]["message"]
        == "The Resource Type (OS::Nova::Nothing) could not be found."
    )
    generated = api.client.simulate_get(api.url("/resource_types/OS::Nova::Nothing/template"))
    assert generated.status_code == 404


def test_generated_cfn_template(api):
    found = api.client.simulate_get(api.url("/resource_types/OS::Heat::RandomString/template"))
    assert found.status_code == 200
    tmpl = found.json
    assert tmpl["HeatTemplateFormatVersion"] == "2012-12-12"
    assert tmpl["Description"] == "Initial template of RandomString"
    assert tmpl["Parameters"]["length"] == {
        "Type": "Number",
        "Description": "Length of the string to generate.",
        "Default": 32,
        "MinValue": 1,
        "MaxValue": 512,
    }
    resource = tmpl["Resources"]["RandomString"]
    assert resource["Type"] == "OS::Heat::RandomString"
    assert resource["Properties"]["length"] == {"Ref": "length"}
    assert tmpl["Outputs"]["value"]["Value"] == {"Fn::GetAtt": ["RandomString", "value"]}
    assert tmpl["Outputs"]["OS::stack_id"] == {"Value": {"Ref": "RandomString"}}


def test_generated_hot_template_validates(api):
    found = api.client.simulate_get(
        api.url("/resource_types/OS::Heat::RandomString/template"), query_string="template_type=HOT"
    )
    tmpl = found.json
    assert tmpl["heat_template_version"] == "2016-10-14"
    assert tmpl["parameters"]["length"]["constraints"] == [{"range": {"min": 1, "max": 512}}]
    assert tmpl["resources"]["RandomString"]["properties"]["salt"] == {"get_param": "salt"}
    assert set(tmpl["outputs"]) == {"value", "show", "OS::stack_id"}
    assert tmpl["outputs"]["OS::stack_id"] == {"value": {"get_resource": "RandomString"}}
    checked = api.client.simulate_post(api.url("/validate"), json={"template": tmpl})
    assert checked.status_code == 200, checked.json
    bad = api.client.simulate_get(
        api.url("/resource_types/OS::Heat::None/template"), query_string="template_type=xml"
    )
    assert bad.status_code == 400
    assert bad.json["error"]["message"] == (
        'Template type is not supported: Invalid template type "xml", valid types are: cfn, hot.'
    )


def test_admin_only_types_hidden_and_refused(guarded):
    assert "OS::Heat::Value" not in _types(guarded).json["resource_types"]
    described = _types(guarded, "with_description=true").json["resource_types"]
    assert "OS::Heat::Value" not in {i["resource_type"] for i in described}
    for path in ("/resource_types/OS::Heat::Value", "/resource_types/OS::Heat::Value/template"):
        refused = guarded.client.simulate_get(guarded.url(path))
        assert refused.status_code == 403
        assert refused.json["error"]["message"] == "You are not authorized to use OS::Heat::Value."
    guarded.as_user(roles=ADMIN_ROLES)
    assert "OS::Heat::Value" in _types(guarded).json["resource_types"]
    assert (
        guarded.client.simulate_get(guarded.url("/resource_types/OS::Heat::Value")).status_code
        == 200
    )


NESTED_VALUE = {
    "heat_template_version": "2021-04-16",
    "resources": {"inner": {"type": "OS::Heat::Value", "properties": {"value": 1}}},
}


@pytest.mark.parametrize(
    "resource",
    [
        {"type": "inner.yaml"},
        {
            "type": "OS::Heat::ResourceGroup",
            "properties": {"count": 1, "resource_def": {"type": "OS::Heat::Value"}},
        },
        {"type": "OS::Heat::ResourceChain", "properties": {"resources": ["OS::Heat::Value"]}},
    ],
    ids=["template-resource", "group-member", "chain-member"],
)
def test_admin_only_types_are_refused_in_nested_stacks_too(guarded, resource):
    body = {
        "stack_name": "nested-policy",
        "template": {"heat_template_version": "2021-04-16", "resources": {"outer": resource}},
        "files": {"inner.yaml": json.dumps(NESTED_VALUE)},
    }
    refused = guarded.client.simulate_post(guarded.url("/stacks"), json=body)
    assert refused.status_code == 403, refused.json
    assert refused.json["error"]["message"] == "You are not authorized to use OS::Heat::Value."
    guarded.as_user(roles=ADMIN_ROLES)
    assert guarded.client.simulate_post(guarded.url("/stacks"), json=body).status_code == 201
