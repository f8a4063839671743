"""A SOFTWARE_CONFIG server's agent against ``kiln all``: it signs in to Keystone as the
server's stack user with the settings Kiln wrote, and reads the server's metadata through
heatclient exactly as os-collect-config's ``heat`` collector does; it can do nothing more."""

from __future__ import annotations

import openstack
import pytest
from heatclient import client as heat_client
from heatclient import exc as heat_exc
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore::openstack.warnings.OpenStackWarning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK50Warning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.RemovedInSDK60Warning"),
    pytest.mark.filterwarnings("ignore::openstack.warnings.OpenStackDeprecationWarning"),
]

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "server": {
            "type": "OS::Nova::Server",
            "metadata": {"app": "web"},
            "properties": {
                "flavor": "m1.tiny",
                "image": "cirros",
                "networks": [{"network": "public"}],
                "user_data_format": "SOFTWARE_CONFIG",
                "software_config_transport": "POLL_SERVER_HEAT",
            },
        }
    },
}


def _connect(server, cloud):
    entry = server.cloud(cloud)
    return openstack.connect(
        auth_type="password",
        region_name=entry.get("region_name"),
        identity_api_version="3",
        **dict(entry["auth"]),
    )


def _agent_client(settings):
    """heatclient as os-collect-config's heat collector builds it."""
    auth = v3.Password(
        auth_url=settings["auth_url"],
        user_id=settings["user_id"],
        password=settings["password"],
        project_id=settings["project_id"],
    )
    session = ks_session.Session(auth=auth)
    return heat_client.Client("1", session=session, region_name=settings.get("region_name"))


def test_the_agent_of_a_software_config_server_reads_its_metadata(kiln_server):
    conn = _connect(kiln_server, "kiln-demo")
    stack = conn.orchestration.create_stack(name="agent-stack", template=TEMPLATE)
    stack = conn.orchestration.wait_for_status(stack, "CREATE_COMPLETE", failures=["CREATE_FAILED"])
    try:
        owner_view = conn.orchestration.get(
            f"/stacks/agent-stack/{stack.id}/resources/server/metadata"
        ).json()["metadata"]
        settings = owner_view["os-collect-config"]["heat"]
        assert owner_view["app"] == "web" and owner_view["deployments"] == []
        assert settings["stack_id"] == stack.id and settings["resource_name"] == "server"
        shown = conn.orchestration.get(f"/stacks/agent-stack/{stack.id}").json()["stack"]
        assert shown["stack_user_project_id"] == settings["project_id"]
        assert settings["project_id"] != conn.current_project_id

        agent = _agent_client(settings)
        # the collector's call: the stack by id (a 302 to its canonical URL), then metadata
        assert agent.resources.metadata(stack.id, "server") == owner_view
        # the stack user may do nothing else
        with pytest.raises(heat_exc.HTTPForbidden):
            list(agent.stacks.list())
        with pytest.raises(heat_exc.HTTPForbidden):
            agent.stacks.get(stack.id)
    finally:
        conn.orchestration.delete_stack(stack)
        conn.orchestration.wait_for_delete(stack)
    # the user went with the stack: its password no longer signs in
    with pytest.raises(ks_exc.Unauthorized):
        _agent_client(settings).resources.metadata(stack.id, "server")
