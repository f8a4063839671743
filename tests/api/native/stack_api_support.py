"""Helpers shared by the /stacks route tests: templates, a recording policy, shortcuts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kiln.api.context import RequestContext
from kiln.api.faults import Forbidden
from kiln.api.native.support import Policy
from kiln.testing.api_harness import ApiHarness

JSON = {"Accept": "application/json"}

VALUE_TEMPLATE = """\
heat_template_version: 2018-08-31
description: A value and a secret
parameters:
  secret: {type: string, default: s3cr3t, hidden: true}
  count: {type: number, default: 2}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: count}}}
outputs:
  answer: {value: {get_attr: [v, value]}, description: The answer}
  broken: {value: {list_join: [",", {get_attr: [v, value]}]}}
"""

NONE_TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"r": {"type": "OS::Heat::None"}},
}

NESTED_CHILD = """\
heat_template_version: 2018-08-31
parameters:
  size: {type: number, default: 1}
resources:
  inner: {type: OS::Heat::Value, properties: {value: {get_param: size}}}
"""

NESTED_PARENT = {
    "heat_template_version": "2018-08-31",
    "parameters": {"size": {"type": "number", "default": 1}},
    "resources": {
        "child": {"type": "child.yaml", "properties": {"size": {"get_param": "size"}}},
        "r": {"type": "OS::Heat::None"},
    },
}


class RecordingPolicy(Policy):
    """Allows everything but ``denied``; remembers every rule asked for."""

    def __init__(self, denied: Iterable[str] = ()) -> None:
        self.denied = set(denied)
        self.rules: list[str] = []

    def enforce(
        self, rule: str, context: RequestContext, target: dict[str, Any] | None = None
    ) -> None:
        self.rules.append(rule)
        if rule in self.denied:
            raise Forbidden(rule)


def create(api: ApiHarness, name: str = "web", template: Any = VALUE_TEMPLATE, **body: Any) -> str:
    """Create a stack through the API and run the engine; its id."""
    found = api.client.simulate_post(
        api.url("/stacks"), json={"stack_name": name, "template": template, **body}
    )
    assert found.status_code == 201, found.json
    api.run()
    return str(found.json["stack"]["id"])


def show(api: ApiHarness, name: str, stack_id: str, query: str = "") -> dict[str, Any]:
    found = api.client.simulate_get(api.url(f"/stacks/{name}/{stack_id}"), query_string=query)
    assert found.status_code == 200, found.json
    return dict(found.json["stack"])


def error(found: Any) -> tuple[int, str, str]:
    """(status, Heat error type, message) of an error answer."""
    return found.status_code, found.json["error"]["type"], found.json["error"]["message"]
