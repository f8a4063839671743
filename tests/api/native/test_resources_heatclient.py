"""python-heatclient against the resource and event routes over real HTTP (cheroot).

The client resolves names through the lookup redirect, then calls the canonical
URLs: what `openstack stack resource ...` and `stack event list` / `--wait` do.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import pytest
from cheroot import wsgi
from heatclient import client as heat_client
from heatclient import exc as heat_exc
from heatclient.common import event_utils

from kiln.engine.service import Caller, StackRequest
from kiln.template.loader import load_template
from kiln.testing.api_harness import PROJECT, ApiHarness, make_api

TEMPLATE = """\
heat_template_version: 2018-08-31
resources:
  a: {type: OS::Heat::RandomString, properties: {length: 8}}
  b:
    type: OS::Heat::TestResource
    metadata: {role: web}
    properties: {value: {get_attr: [a, value]}}
  g:
    type: OS::Heat::ResourceGroup
    properties: {count: 1, resource_def: {type: OS::Heat::None}}
"""


@pytest.fixture
def served(tmp_path) -> Iterator[tuple[ApiHarness, object, str]]:
    api = make_api(tmp_path)
    request = StackRequest(name="web", template=load_template(TEMPLATE).data)
    stack_id = api.engine.service.create_stack(Caller(PROJECT, "user-1"), request)
    api.run()
    server = wsgi.Server(("127.0.0.1", 0), api.client.app, numthreads=2)
    server.timeout = 1
    server.prepare()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.bind_addr[1]}/v1/{PROJECT}"
    try:
        yield api, heat_client.Client("1", endpoint=endpoint, token="unused"), stack_id
    finally:
        server.stop()
        thread.join(10)


@pytest.mark.timeout(60)
def test_heatclient_resources(served) -> None:
    _, hc, stack_id = served
    listed = {r.resource_name: r for r in hc.resources.list("web")}
    assert set(listed) == {"a", "b", "g"}
    assert listed["b"].stack_name == "web"
    nested = hc.resources.list("web", nested_depth=1)
    member = next(r for r in nested if r.resource_name == "0")
    assert member.parent_resource == "g" and member.stack_name.startswith("web-g-")
    shown = hc.resources.get("web", "b", with_attr=["output"])
    assert len(shown.attributes["output"]) == 8  # a's random string, through get_attr
    assert shown.resource_status == "CREATE_COMPLETE"
    assert hc.resources.metadata("web", "b") == {"role": "web"}
    with pytest.raises(heat_exc.HTTPBadRequest, match="signal is not supported"):
        hc.resources.signal("web", "b", data={"x": 1})
    hc.resources.mark_unhealthy("web", "b", True, "broken")
    again = hc.resources.get(f"web/{stack_id}", "b")
    assert (again.resource_status, again.resource_status_reason) == ("CHECK_FAILED", "broken")
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.resources.get("web", "nope")


@pytest.mark.timeout(60)
def test_heatclient_events_and_wait(served) -> None:
    _, hc, stack_id = served
    listed = hc.events.list("web", sort_dir="asc")
    assert listed[-1].resource_name == "web"
    assert listed[-1].resource_status == "CREATE_COMPLETE"
    assert listed[-1].physical_resource_id == stack_id
    one = hc.events.get("web", "b", next(e.id for e in listed if e.resource_name == "b"))
    assert one.resource_type == "OS::Heat::TestResource"
    for_b = hc.events.list("web", resource_name="b")
    assert {e.resource_name for e in for_b} == {"b"}
    nested = event_utils.get_events(
        hc, stack_id="web", event_args={"sort_dir": "asc"}, nested_depth=1
    )
    assert "0" in {e.resource_name for e in nested}
    out = io.StringIO()
    status, _ = event_utils.poll_for_events(hc, "web", action="CREATE", poll_period=0, out=out)
    assert status == "CREATE_COMPLETE"
    assert "[web]: CREATE_COMPLETE" in out.getvalue()
