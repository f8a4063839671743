"""Template versions and their functions (heat-api.md 2.6 T2, T3)."""

from __future__ import annotations

import pytest

from kiln.testing.api_harness import make_api

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    return make_api(tmp_path_factory.mktemp("versions"))


def _functions(api, version, query=""):
    return api.client.simulate_get(
        api.url(f"/template_versions/{version}/functions"), query_string=query
    )


def test_versions_cfn_first_then_hot_by_date_with_aliases(api):
    found = api.client.simulate_get(api.url("/template_versions"))
    assert found.status_code == 200
    versions = found.json["template_versions"]
    assert versions[:3] == [
        {"version": "AWSTemplateFormatVersion.2010-09-09", "type": "cfn", "aliases": []},
        {"version": "HeatTemplateFormatVersion.2012-12-12", "type": "cfn", "aliases": []},
        {"version": "heat_template_version.2013-05-23", "type": "hot", "aliases": []},
    ]
    assert {
        "version": "heat_template_version.2016-10-14",
        "type": "hot",
        "aliases": ["heat_template_version.newton"],
    } in versions
    assert versions[-1]["aliases"] == ["heat_template_version.wallaby"]
    assert len(versions) == 13


def test_functions_of_a_version_each_with_a_description(api):
    found = _functions(api, "heat_template_version.2016-10-14")
    assert found.status_code == 200
    items = found.json["template_functions"]
    names = [f["functions"] for f in items]
    assert names == sorted(names)
    assert {"get_attr", "if", "yaql", "map_replace", "str_split"} <= set(names)
    assert "filter" not in names  # from 2017-02-24
    assert "Fn::Select" not in names  # removed functions are left out
    assert "equals" not in names
    assert all(f["description"] for f in items)


def test_condition_functions_on_request_and_aliases(api):
    plain = {
        f["functions"]
        for f in _functions(api, "heat_template_version.pike").json["template_functions"]
    }
    with_conditions = _functions(
        api, "heat_template_version.pike", "with_condition_func=true"
    ).json["template_functions"]
    names = {f["functions"] for f in with_conditions}
    assert names - plain == {"equals", "not", "and", "or"}
    cfn = _functions(api, "AWSTemplateFormatVersion.2010-09-09", "with_condition_func=true")
    assert {"Fn::Equals", "Fn::If", "Ref", "Fn::GetAtt"} <= {
        f["functions"] for f in cfn.json["template_functions"]
    }


def test_old_hot_keeps_the_cfn_functions(api):
    names = {
        f["functions"]
        for f in _functions(api, "heat_template_version.2013-05-23").json["template_functions"]
    }
    assert {"Fn::Join", "Ref", "get_param"} <= names


def test_unknown_version_is_not_found(api):
    found = _functions(api, "heat_template_version.2099-01-01")
    assert found.status_code == 404
    assert found.json["error"] == {
        "type": "NotFound",
        "message": "Template with version heat_template_version.2099-01-01 not found",
        "traceback": None,
    }
    assert _functions(api, "nonsense").status_code == 404
    assert _functions(api, "heat_template_version.pike", "with_condition_func=x").status_code == 400
