"""Stack lookups redirect to the canonical URL (heat-api.md 1.5)."""

from __future__ import annotations

import pytest

from kiln.api.native.lookup import parse_arn
from kiln.engine.service import Caller, StackRequest
from kiln.testing.api_harness import OTHER_PROJECT, PROJECT, make_api

TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {"r": {"type": "OS::Heat::None"}}}


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path)


def _stack(api, name="web"):
    return api.engine.service.create_stack(
        Caller(PROJECT, "user-1"), StackRequest(name=name, template=TEMPLATE)
    )


def test_name_redirects_to_canonical_url_keeping_the_query(api):
    stack_id = _stack(api)
    found = api.client.simulate_get(
        api.url("/stacks/web"), query_string="a=1&a=2", headers={"Accept": "application/json"}
    )
    assert found.status_code == 302
    assert found.headers["Location"] == (
        f"http://falconframework.org/v1/{PROJECT}/stacks/web/{stack_id}?a=1&a=2"
    )
    assert found.json["code"] == "302 Found"
    assert "x-openstack-request-id" not in found.headers  # added by the pipeline, not here


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_every_method_redirects_an_id(api, method):
    stack_id = _stack(api)
    found = api.client.simulate_request(method, api.url(f"/stacks/{stack_id}"))
    assert found.status_code == 302
    assert found.headers["Location"].endswith(f"/stacks/web/{stack_id}")


def test_unknown_stack_is_heats_entity_not_found(api):
    found = api.client.simulate_get(api.url("/stacks/nope"))
    assert found.status_code == 404
    assert found.json["error"]["type"] == "EntityNotFound"
    assert found.json["error"]["message"] == "The Stack (nope) could not be found."
    assert found.json["title"] == "Not Found"


def test_other_projects_tenant_segment_is_forbidden(api):
    _stack(api)
    found = api.client.simulate_get(f"/v1/{OTHER_PROJECT}/stacks/web")
    assert found.status_code == 403
    assert found.json["error"]["type"] == "HTTPForbidden"


def test_another_projects_stack_is_not_found(api):
    stack_id = _stack(api)
    api.as_user(project_id=OTHER_PROJECT)
    found = api.client.simulate_get(api.url(f"/stacks/{stack_id}"))
    assert found.status_code == 404


def test_arn_redirects_without_a_lookup(api):
    arn = f"arn:openstack:heat::{PROJECT}:stacks/web/abc/resources/r"
    found = api.client.simulate_get(api.url(f"/stacks/{arn}"))
    assert found.status_code == 302
    assert found.headers["Location"].endswith(f"/v1/{PROJECT}/stacks/web/abc/resources/r")


def test_parse_arn():
    assert parse_arn("arn:openstack:heat::t:stacks/n/i") == ("t", "n", "i", "")
    assert parse_arn("arn:aws:heat::t:stacks/n/i") is None
    assert parse_arn("arn:openstack:heat::t:stacks/n") is None


def test_version_document_and_unknown_paths(api):
    root = api.client.simulate_get("/")
    assert root.status_code == 300
    assert root.json["versions"][0]["id"] == "v1.0"
    assert root.json["versions"][0]["links"][0]["href"].endswith("/v1/")
    v1 = api.client.simulate_get("/v1")
    assert v1.status_code == 200 and v1.json["version"]["status"] == "CURRENT"
    assert api.client.simulate_get("/v2/x").status_code == 300
    assert api.client.simulate_get("/nothing").status_code == 404
    assert api.client.simulate_get(api.url("/nothing/here/at/all")).status_code == 404
