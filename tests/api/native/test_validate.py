"""POST /validate: Heat's validate document, every error at once (heat-api.md 2.6, 3.7)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from kiln.api.policy import OsloPolicy
from kiln.testing.api_harness import make_api

pytestmark = pytest.mark.timeout(60)

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "description": "Two strings",
    "parameter_groups": [{"label": "Sizing", "description": "How big", "parameters": ["n"]}],
    "parameters": {
        "n": {
            "type": "number",
            "label": "Length",
            "default": 8,
            "constraints": [{"range": {"min": 1, "max": 64}, "description": "one to 64"}],
        },
        "secret": {"type": "string", "hidden": True, "constraints": [{"length": {"min": 4}}]},
    },
    "resources": {
        "s": {"type": "OS::Heat::RandomString", "properties": {"length": {"get_param": "n"}}},
        "v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "secret"}}},
    },
}

BROKEN = """heat_template_version: 2018-08-31
resources:
  a:
    type: OS::Nope
  b:
    type: OS::Heat::RandomString
    properties:
      length: 0
"""

NESTED = """heat_template_version: 2018-08-31
description: The inner one
parameters:
  size: {type: number}
resources:
  inner: {type: OS::Heat::None}
"""


@pytest.fixture
def api(tmp_path):
    return make_api(tmp_path)


def _validate(api, body, query=""):
    return api.client.simulate_post(api.url("/validate"), json=body, query_string=query)


def test_document_of_a_valid_template(api):
    found = _validate(api, {"template": TEMPLATE, "parameters": {"secret": "hush-hush"}})
    assert found.status_code == 200, found.json
    doc = found.json
    assert set(doc) == {"Description", "Parameters", "ParameterGroups", "Environment"}
    assert doc["Description"] == "Two strings"
    assert doc["Parameters"]["n"] == {
        "Type": "Number",
        "Description": "",
        "Label": "Length",
        "NoEcho": "false",
        "Default": 8,
        "MinValue": 1,
        "MaxValue": 64,
        "ConstraintDescription": "one to 64",
    }
    secret = doc["Parameters"]["secret"]
    assert (secret["NoEcho"], secret["Value"], secret["MinLength"]) == ("true", "hush-hush", 4)
    assert doc["ParameterGroups"] == TEMPLATE["parameter_groups"]
    assert doc["Environment"] == {
        "parameters": {"secret": "hush-hush"},
        "parameter_defaults": {},
        "resource_registry": {"resources": {}},
        "event_sinks": [],
    }
    assert not any(name.startswith("OS::") for name in doc["Parameters"])


def test_every_error_listed_with_its_place_in_the_text(api):
    found = _validate(api, {"template": BROKEN})
    assert found.status_code == 400
    error = found.json["error"]
    assert error["type"] == "HTTPBadRequest"
    assert error["message"].splitlines() == [
        "resources.a.type: The Resource Type (OS::Nope) could not be found.",
        "Property error: resources.b.properties.length: 0 is out of range (min: 1, max: 512)",
    ]
    details = error["details"]["errors"]
    assert [e["type"] for e in details] == ["StackValidationFailed", "StackValidationFailed"]
    assert [e["location"] for e in details] == ["<template>:4:5", "<template>:8:7"]


def test_unparsable_text_is_not_in_valid_format(api):
    found = _validate(api, {"template": "heat_template_version: 2018-08-31\nresources: [\n"})
    assert found.status_code == 400
    assert found.json["error"]["message"].startswith("Template not in valid format: ")
    assert found.json["error"]["details"]["location"].startswith("<template>:")


def test_environment_text_and_environment_files(api):
    template = {
        "heat_template_version": "2018-08-31",
        "parameters": {"a": {"type": "string"}, "b": {"type": "string"}},
        "resources": {},
    }
    found = _validate(
        api,
        {
            "template": template,
            "environment": "parameters: {a: ignored}\n",
            "environment_files": ["one.yaml", "two.yaml"],
            "files": {
                "one.yaml": "parameters: {a: first}\n",
                "two.yaml": '{"parameters": {"b": 2}}',
            },
        },
    )
    assert found.status_code == 200, found.json
    assert found.json["Parameters"]["a"]["Value"] == "first"
    assert found.json["Environment"]["parameters"] == {"a": "first", "b": 2}
    missing = _validate(api, {"template": template, "environment_files": ["gone.yaml"]})
    assert missing.status_code == 400
    assert "gone.yaml" in missing.json["error"]["message"]


def test_bad_environment_is_reported(api):
    found = _validate(api, {"template": TEMPLATE, "environment": {"nonsense": {}}})
    assert found.status_code == 400
    assert found.json["error"]["message"] == (
        'Environment not in valid format: nonsense: environment has wrong section "nonsense"'
    )


def test_show_nested_lists_the_parameters_of_template_resources(api):
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {"box": {"type": "My::Box", "properties": {"size": 3}}},
    }
    body = {
        "template": template,
        "files": {"box.yaml": NESTED},
        "environment": {"resource_registry": {"My::Box": "box.yaml"}},
    }
    plain = _validate(api, body)
    assert plain.status_code == 200, plain.json
    assert "NestedParameters" not in plain.json
    nested = _validate(api, body, "show_nested=true")
    assert nested.json["NestedParameters"] == {
        "box": {
            "Type": "My::Box",
            "Description": "The inner one",
            "Parameters": {
                "size": {
                    "Type": "Number",
                    "Description": "",
                    "Label": "size",
                    "NoEcho": "false",
                    "Value": 3,
                }
            },
        }
    }


def test_request_errors(api):
    assert _validate(api, {}).status_code == 400
    assert _validate(api, {}).json["error"]["message"] == "No template specified"
    no_body = api.client.simulate_post(api.url("/validate"))
    assert no_body.status_code == 400 and no_body.json["error"]["type"] == "HTTPBadRequest"
    ignored = _validate(api, {"template": TEMPLATE}, "ignore_errors=99001")
    assert ignored.status_code == 200
    bad_codes = _validate(api, {"template": TEMPLATE}, "ignore_errors=1,99001,x")
    assert bad_codes.json["error"]["message"] == "Invalid codes in ignore_errors : ['1', 'x']"
    bad_bool = _validate(api, {"template": TEMPLATE}, "show_nested=maybe")
    assert bad_bool.status_code == 400
    swift = _validate(api, {"template": TEMPLATE, "files_container": "c"})
    assert (swift.status_code, swift.json["error"]["type"]) == (400, "NotSupported")
    bad_files = _validate(api, {"template": TEMPLATE, "files": ["x"]})
    assert bad_files.status_code == 400


class _Serve(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        payload = BROKEN.encode() if self.path == "/broken.yaml" else b"x" * 600
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Serve)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_template_url_is_fetched_and_named_in_locations(tmp_path, web):
    from kiln.api.native.support import ApiSettings

    api = make_api(tmp_path, settings=ApiSettings(max_template_size=512))
    found = _validate(api, {"template_url": f"{web}/broken.yaml"})
    assert found.status_code == 400
    assert found.json["error"]["details"]["location"] == f"{web}/broken.yaml:4:5"
    too_big = _validate(api, {"template_url": f"{web}/big.yaml"})
    assert too_big.status_code == 400
    assert "exceeds maximum allowed size (512 bytes)" in too_big.json["error"]["message"]
    local = _validate(api, {"template_url": "file:///etc/passwd"})
    assert local.status_code == 400
    assert local.json["error"]["message"].startswith("Could not retrieve template: ")


def test_types_the_policy_forbids_are_refused(tmp_path):
    rules = tmp_path / "policy.yaml"
    rules.write_text('"resource_types:OS::Heat::Value": "rule:project_admin"\n')
    api = make_api(tmp_path, policy=OsloPolicy(policy_file=rules))
    found = _validate(api, {"template": TEMPLATE})
    assert found.status_code == 403
    assert found.json["error"] == {
        "type": "Forbidden",
        "message": "You are not authorized to use OS::Heat::Value.",
        "traceback": None,
    }
    api.as_user(roles=("admin", "member", "reader"))
    assert _validate(api, {"template": TEMPLATE}).status_code == 200


def test_limits_keep_their_type(api):
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(1001)},
    }
    found = _validate(api, {"template": template})
    assert found.status_code == 400
    assert found.json["error"]["type"] == "RequestLimitExceeded"
    assert found.json["error"]["message"] == (
        "Request limit exceeded: Maximum resources per stack exceeded."
    )
