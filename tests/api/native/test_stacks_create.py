"""Creating, adopting and previewing stacks (heat-api.md 2.1.1, 2.1.2, 3.4)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import pytest
from stack_api_support import (
    JSON,
    NESTED_CHILD,
    NESTED_PARENT,
    NONE_TEMPLATE,
    VALUE_TEMPLATE,
    create,
    error,
    show,
)

from kiln.api.native.support import ApiSettings
from kiln.testing.api_harness import PROJECT, make_api

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path)


@pytest.fixture(scope="module")
def shared_api(tmp_path_factory):
    """For the tests that create nothing."""
    return make_api(tmp_path_factory.mktemp("shared"))


def post(api, body):
    return api.client.simulate_post(api.url("/stacks"), json=body, headers=JSON)


def test_create_answers_201_with_location_and_id_links(api):
    found = post(api, {"stack_name": "web", "template": NONE_TEMPLATE})
    assert found.status_code == 201
    stack_id = found.json["stack"]["id"]
    location = f"http://falconframework.org/v1/{PROJECT}/stacks/web/{stack_id}"
    assert found.headers["Location"] == location
    assert found.json == {"stack": {"id": stack_id, "links": [{"href": location, "rel": "self"}]}}
    assert show(api, "web", stack_id)["stack_status"] == "CREATE_IN_PROGRESS"
    api.run()
    shown = show(api, "web", stack_id)
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert shown["disable_rollback"] is True and shown["timeout_mins"] is None
    assert shown["tags"] == []


def test_text_template_environment_files_and_parameters(api):
    env_file = "file:///tmp/env.yaml"
    body = {
        "stack_name": "web",
        "template": VALUE_TEMPLATE,
        # heatclient sends the files by name; the inline copy is then ignored
        "environment": {"parameters": {"count": 99}},
        "environment_files": [env_file],
        "files": {env_file: "parameter_defaults:\n  count: 5\n"},
        "tags": ["a", "b"],
        "timeout_mins": "30",
        "disable_rollback": "false",
    }
    stack_id = create(api, **{k: v for k, v in body.items() if k != "stack_name"})
    shown = show(api, "web", stack_id)
    assert shown["parameters"]["count"] == "5"
    assert shown["tags"] == ["a", "b"]
    assert (shown["timeout_mins"], shown["disable_rollback"]) == (30, False)
    # the top-level parameters win over every environment
    other = create(
        api,
        "other",
        environment="parameters:\n  count: 7\n",
        parameters={"count": 8},
        tags="x,,y",
    )
    shown = show(api, "other", other)
    assert shown["parameters"]["count"] == "8"
    assert shown["tags"] == ["x", "y"]


def test_unparsable_documents_are_400_with_a_location(api):
    bad = "heat_template_version: 2018-08-31\nresources:\n  a: [b\n"
    status, kind, message = error(post(api, {"stack_name": "web", "template": bad}))
    assert (status, kind) == (400, "HTTPBadRequest")
    assert message.startswith("Template not in valid format: <template>:4:1: ")
    found = post(api, {"stack_name": "web", "template": "foo: 1"})
    assert error(found)[2] == (
        "Template not in valid format: <template>:1:1: Template format version not found."
    )
    found = post(
        api, {"stack_name": "web", "template": NONE_TEMPLATE, "environment": "bogus: {}\n"}
    )
    status, kind, message = error(found)
    assert (status, kind) == (400, "HTTPBadRequest")
    assert message.startswith("Environment not in valid format: <environment>:1:1: ")
    assert 'wrong section "bogus"' in message
    found = post(api, {"stack_name": "web", "template": [1, 2]})
    assert error(found)[:2] == (400, "HTTPBadRequest")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"template": NONE_TEMPLATE}, "No stack name specified"),
        ({"stack_name": "web"}, "No template specified"),
        (
            {"stack_name": "web", "template": NONE_TEMPLATE, "converge": True},
            "converge flag only supported in stack update (or update preview) request.",
        ),
        (
            {"stack_name": "web", "template": NONE_TEMPLATE, "timeout_mins": "soon"},
            "Only integer is acceptable by 'timeout_mins'.",
        ),
        (
            {"stack_name": "web", "template": NONE_TEMPLATE, "timeout_mins": -5},
            "Value '-5' is invalid for 'timeout_mins' which only accepts non-negative integer.",
        ),
        (
            {"stack_name": "web", "template": NONE_TEMPLATE, "disable_rollback": "maybe"},
            'Unrecognized value "maybe" for "disable_rollback", acceptable values are: true, '
            "false.",
        ),
        (
            {"stack_name": "web", "template": NONE_TEMPLATE, "tags": "x" * 81},
            f'Invalid tag, "{"x" * 81}" is longer than 80 characters',
        ),
        (
            {"stack_name": "web", "template": NONE_TEMPLATE, "environment_files": ["e.yaml"]},
            "Environment files not found in files: e.yaml",
        ),
    ],
)
def test_bad_bodies_are_heats_400s(shared_api, body, expected):
    api = shared_api
    assert error(post(api, body)) == (400, "HTTPBadRequest", expected)


def test_wrongly_typed_members_are_400s(shared_api):
    api = shared_api
    for extra in ({"tags": 5}, {"parameters": [1]}, {"files": "x"}, {"environment": 3}):
        found = post(api, {"stack_name": "web", "template": NONE_TEMPLATE, **extra})
        assert error(found)[:2] == (400, "HTTPBadRequest"), extra


def test_names_duplicates_and_unsupported_members(api):
    status, kind, message = error(post(api, {"stack_name": "9lives", "template": NONE_TEMPLATE}))
    assert (status, kind) == (400, "StackValidationFailed")
    assert message == (
        'Invalid stack name 9lives must contain only alphanumeric or "_-." characters, '
        "must start with alpha and must be 255 characters or less."
    )
    create(api, "web", NONE_TEMPLATE)
    found = post(api, {"stack_name": "web", "template": NONE_TEMPLATE})
    assert error(found) == (409, "StackExists", "The Stack (web) already exists.")
    found = post(api, {"stack_name": "web2", "template": NONE_TEMPLATE, "files_container": "c"})
    assert error(found)[:2] == (400, "NotSupported")


def test_limits_template_size_and_stacks_per_project(tmp_path):
    api = make_api(tmp_path, settings=ApiSettings(max_template_size=200, max_stacks_per_tenant=1))
    for template in (VALUE_TEMPLATE, json.loads(json.dumps({**NONE_TEMPLATE, "x": "y" * 300}))):
        status, kind, message = error(post(api, {"stack_name": "big", "template": template}))
        assert (status, kind) == (400, "RequestLimitExceeded")
        assert message.startswith("Request limit exceeded: Template size (")
        assert message.endswith("exceeds maximum allowed size (200 bytes).")
    create(api, "one", NONE_TEMPLATE)
    found = post(api, {"stack_name": "two", "template": NONE_TEMPLATE})
    assert error(found) == (
        400,
        "RequestLimitExceeded",
        "Request limit exceeded: You have reached the maximum stacks per tenant, 1. "
        "Please delete some stacks.",
    )
    api.as_user(roles=["admin", "member", "reader"])  # admins are exempt
    assert post(api, {"stack_name": "two", "template": NONE_TEMPLATE}).status_code == 201


@pytest.fixture
def served() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 with /t.yaml (a template) and /big (too big)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            pages = {"/t.yaml": VALUE_TEMPLATE.encode(), "/big": b"x" * 600_000}
            page = pages.get(self.path)
            self.send_response(200 if page else 404)
            self.end_headers()
            self.wfile.write(page or b"")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_template_url_is_fetched(api, served):
    found = post(api, {"stack_name": "web", "template_url": f"{served}/t.yaml"})
    assert found.status_code == 201
    api.run()
    assert show(api, "web", found.json["stack"]["id"])["description"] == "A value and a secret"
    for url, why in [
        ("ftp://example.org/t.yaml", "Invalid URL scheme ftp"),
        (f"{served}/missing", "Failed to retrieve template from"),
        (f"{served}/big", "Template exceeds maximum allowed size (524288 bytes)"),
    ]:
        status, kind, message = error(post(api, {"stack_name": "w2", "template_url": url}))
        assert (status, kind) == (400, "HTTPBadRequest")
        assert message.startswith(f"Could not retrieve template: {why}"), message


def test_abandon_then_adopt(api):
    stack_id = create(api, "web", VALUE_TEMPLATE, parameters={"count": 4, "secret": "pw"})
    data = api.client.simulate_delete(api.url(f"/stacks/web/{stack_id}/abandon")).json
    assert data["resources"]["v"]["resource_id"]
    # hidden values never leave Kiln, not even in abandon data
    assert data["environment"]["parameters"] == {"count": 4, "secret": "******"}
    body = {"stack_name": "again", "adopt_stack_data": json.dumps(data), "template": None}
    found = post(api, body)
    assert found.status_code == 201, found.json
    api.run()
    adopted = found.json["stack"]["id"]
    shown = show(api, "again", adopted)
    assert shown["stack_status"] == "ADOPT_COMPLETE"
    assert shown["parameters"]["count"] == "4"
    # a masked value is left out: the default applies, or the value the request gives
    assert api.engine.service.get_stack(adopted).parameters == {"count": 4}
    found = post(api, {**body, "stack_name": "third", "parameters": {"secret": "pw"}})
    assert found.status_code == 201
    third = found.json["stack"]["id"]
    assert api.engine.service.get_stack(third).parameters == {"count": 4, "secret": "pw"}
    found = post(api, {"stack_name": "bad", "adopt_stack_data": '{"resources": {}}'})
    assert error(found) == (400, "HTTPBadRequest", "Invalid adopt data: 'template'")
    found = post(api, {"stack_name": "bad", "adopt_stack_data": "template: [x\n"})
    status, kind, message = error(found)
    assert (status, kind) == (400, "HTTPBadRequest")
    assert message.startswith("Invalid adopt data: ")


def test_adopt_and_abandon_can_be_switched_off(tmp_path):
    api = make_api(
        tmp_path, settings=ApiSettings(enable_stack_adopt=False, enable_stack_abandon=False)
    )
    found = post(api, {"stack_name": "web", "adopt_stack_data": "{}"})
    assert error(found) == (400, "NotSupported", "Stack Adopt is not supported.")
    stack_id = create(api, "web", NONE_TEMPLATE)
    for method, sub in (("DELETE", "abandon"), ("GET", "export")):
        found = api.client.simulate_request(method, api.url(f"/stacks/web/{stack_id}/{sub}"))
        assert error(found) == (400, "NotSupported", "Stack Abandon is not supported.")


PREVIEW_KEYS = {
    "id",
    "links",
    "stack_name",
    "description",
    "template_description",
    "creation_time",
    "updated_time",
    "deletion_time",
    "notification_topics",
    "capabilities",
    "parameters",
    "outputs",
    "disable_rollback",
    "timeout_mins",
    "stack_owner",
    "parent",
    "stack_user_project_id",
    "tags",
    "resources",
}


def test_preview_shows_the_stack_it_would_make(api):
    body = {
        "stack_name": "web",
        "template": NESTED_PARENT,
        "files": {"child.yaml": NESTED_CHILD},
        "parameters": {"size": 3},
        "tags": "a",
    }
    found = api.client.simulate_post(api.url("/stacks/preview"), json=body)
    assert found.status_code == 200, found.json
    stack = found.json["stack"]
    assert set(stack) == PREVIEW_KEYS
    assert stack["id"] == "None" and stack["links"][0]["href"].endswith("/stacks/web/None")
    assert stack["parameters"] == {
        "OS::stack_id": "None",
        "OS::stack_name": "web",
        "OS::project_id": PROJECT,
        "size": "3",
    }
    assert (stack["tags"], stack["stack_user_project_id"]) == (["a"], None)
    nested, plain = stack["resources"]
    assert plain["resource_name"] == "r" and plain["resource_action"] == "INIT"
    assert plain["stack_identity"] == {
        "tenant": PROJECT,
        "stack_name": "web",
        "stack_id": "None",
        "path": "",
    }
    assert plain["properties"] == {}
    # a resource owning a nested stack is the list of that stack's resources
    assert [r["resource_name"] for r in nested] == ["inner"]
    assert nested[0]["properties"] == {"value": 3}
    assert nested[0]["parent_resource"] == "child"
    assert api.client.simulate_get(api.url("/stacks")).json["stacks"] == []
    # a preview checks what a create checks
    create(api, "taken", NONE_TEMPLATE)
    found = api.client.simulate_post(
        api.url("/stacks/preview"), json={"stack_name": "taken", "template": NONE_TEMPLATE}
    )
    assert error(found)[:2] == (409, "StackExists")


def test_resources_per_stack_are_limited(shared_api):
    resources = {f"r{i}": {"type": "OS::Heat::None"} for i in range(1001)}
    template = {"heat_template_version": "2018-08-31", "resources": resources}
    found = post(shared_api, {"stack_name": "huge", "template": template})
    assert error(found) == (
        400,
        "RequestLimitExceeded",
        "Request limit exceeded: Maximum resources per stack exceeded.",
    )
