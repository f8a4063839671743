"""The types of Kiln's global environment through the API: listed and shown as Heat shows
the types of its global environment, and never copied into a stack's environment."""

from __future__ import annotations

import pathlib

import pytest
from stack_api_support import create

from kiln.testing.api_harness import ApiHarness, make_api

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> ApiHarness:
    return make_api(pathlib.Path(tmp_path_factory.mktemp("global-types")))


def test_a_type_mapped_to_a_template_is_listed_a_plain_alias_is_not(api: ApiHarness) -> None:
    listed = api.client.simulate_get(api.url("/resource_types")).json["resource_types"]
    assert "AWS::CloudWatch::Alarm" in listed
    assert "OS::Aodh::Alarm" in listed
    # Heat lists the plugins and the template mappings of its global registry only.
    assert "OS::Ceilometer::Alarm" not in listed
    assert "OS::Metering::Alarm" not in listed
    assert listed == sorted(listed)
    described = api.client.simulate_get(
        api.url("/resource_types"), query_string="name=AWS::CloudWatch&with_description=true"
    ).json["resource_types"]
    assert [d["resource_type"] for d in described] == ["AWS::CloudWatch::Alarm"]
    assert "OS::Aodh::Alarm" in described[0]["description"]


def test_an_alias_shows_the_schema_of_its_target(api: ApiHarness) -> None:
    alias = api.client.simulate_get(api.url("/resource_types/OS::Ceilometer::Alarm")).json
    target = api.client.simulate_get(api.url("/resource_types/OS::Aodh::Alarm")).json
    assert alias["resource_type"] == "OS::Ceilometer::Alarm"
    assert alias["properties"] == target["properties"]
    assert alias["attributes"] == target["attributes"]
    generated = api.client.simulate_get(
        api.url("/resource_types/OS::Metering::Alarm/template"), query_string="template_type=hot"
    ).json
    assert generated["resources"]["Alarm"]["type"] == "OS::Metering::Alarm"
    assert "meter_name" in generated["parameters"]


def test_a_template_type_shows_its_parameters_as_properties(api: ApiHarness) -> None:
    shown = api.client.simulate_get(api.url("/resource_types/AWS::CloudWatch::Alarm")).json
    assert shown["resource_type"] == "AWS::CloudWatch::Alarm"
    metric = shown["properties"]["MetricName"]
    assert (metric["type"], metric["required"]) == ("string", True)
    statistic = shown["properties"]["Statistic"]
    assert statistic["constraints"] == [
        {"allowed_values": ["SampleCount", "Average", "Sum", "Minimum", "Maximum"]}
    ]
    assert shown["properties"]["AlarmActions"]["type"] == "list"
    assert shown["properties"]["Namespace"]["required"] is False
    assert set(shown["attributes"]) == {"show"}
    generated = api.client.simulate_get(
        api.url("/resource_types/AWS::CloudWatch::Alarm/template")
    ).json
    assert generated["Resources"]["TemplateResource"]["Type"] == "AWS::CloudWatch::Alarm"
    assert generated["Parameters"]["Period"]["Type"] == "Number"


def test_the_stack_environment_is_the_users_own(api: ApiHarness) -> None:
    stack_id = create(
        api,
        "own-env",
        {
            "heat_template_version": "2021-04-16",
            "resources": {"r": {"type": "My::Random"}},
        },
        environment={"resource_registry": {"My::Random": "OS::Heat::RandomString"}},
    )
    found = api.client.simulate_get(api.url(f"/stacks/own-env/{stack_id}/environment")).json
    assert found["resource_registry"] == {
        "My::Random": "OS::Heat::RandomString",
        "resources": {},
    }
