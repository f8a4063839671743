"""python-heatclient against the catalogue and software-config routes over real HTTP.

What `openstack orchestration template version list|function list|validate`,
`orchestration resource type list|show|template`, `orchestration service list`,
`orchestration build info`, `software config *` and `software deployment *` call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from cheroot import wsgi
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from kiln.testing.api_harness import PROJECT, make_api

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def hc(tmp_path) -> Iterator[object]:
    api = make_api(tmp_path)
    api.as_user(roles=("admin", "member", "reader"))
    server = wsgi.Server(("127.0.0.1", 0), api.client.app, numthreads=2)
    server.timeout = 1
    server.prepare()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.bind_addr[1]}/v1/{PROJECT}"
    try:
        yield heat_client.Client("1", endpoint=endpoint, token="unused")
    finally:
        server.stop()
        thread.join(10)


def test_heatclient_templates_and_resource_types(hc) -> None:
    versions = [v.version for v in hc.template_versions.list()]
    assert "heat_template_version.2021-04-16" in versions
    functions = {f.functions for f in hc.template_versions.get("heat_template_version.rocky")}
    assert {"get_attr", "list_concat"} <= functions
    template = {"heat_template_version": "2018-08-31", "parameters": {"p": {"type": "string"}}}
    assert hc.stacks.validate(template=template)["Parameters"]["p"]["Type"] == "String"
    with pytest.raises(heat_exc.HTTPBadRequest, match=r"The Resource Type \(X::Y\)"):
        hc.stacks.validate(
            template={**template, "resources": {"a": {"type": "X::Y"}}},
        )
    names = [str(t) for t in hc.resource_types.list(filters={"name": "OS::Heat::Random"})]
    assert names == ["<ResourceType OS::Heat::RandomString>"]
    schema = hc.resource_types.get("OS::Heat::RandomString")
    assert schema["support_status"]["status"] == "SUPPORTED"
    generated = hc.resource_types.generate_template("OS::Heat::Value", template_type="hot")
    assert generated["resources"]["Value"]["type"] == "OS::Heat::Value"
    assert hc.services.list() == []
    assert hc.build_info.build_info()["engine"] == {"revision": "unknown"}


def test_heatclient_software_configs_and_deployments(hc) -> None:
    config = hc.software_configs.create(
        name="hello", group="script", config="echo hi", inputs=[{"name": "who"}]
    )
    assert hc.software_configs.get(config.id).inputs == [{"name": "who", "type": "String"}]
    assert [c.id for c in hc.software_configs.list()] == [config.id]
    deployment = hc.software_deployments.create(
        config_id=config.id, server_id="srv", action="CREATE", status="IN_PROGRESS"
    )
    assert [c["name"] for c in hc.software_deployments.metadata(server_id="srv")] == ["hello"]
    hc.software_deployments.update(
        deployment.id, status="COMPLETE", output_values={"deploy_status_code": 0}
    )
    shown = hc.software_deployments.get(deployment.id)
    assert (shown.status, shown.output_values) == ("COMPLETE", {"deploy_status_code": 0})
    assert [d.id for d in hc.software_deployments.list(server_id="srv")] == [deployment.id]
    hc.software_deployments.delete(deployment.id)
    hc.software_configs.delete(config.id)
    with pytest.raises(heat_exc.HTTPNotFound):
        hc.software_configs.get(config.id)
