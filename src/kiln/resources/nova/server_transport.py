"""How a SOFTWARE_CONFIG server's agent reaches Kiln: its stack user and ``os-collect-config``.

A server with ``user_data_format: SOFTWARE_CONFIG`` runs os-collect-config, which polls
Kiln for the server's resource metadata (where deployments put their configs). The
plugin makes the server a stack user (kiln.plugin.stack_user) and writes into the
resource metadata, before the server is created (the user data carries the metadata
too, so the agent finds its credentials on first boot):

- ``deployments``: ``[]`` (deployments add themselves later);
- ``os-collect-config``: the agent's settings, merged over any the template gives:
  ``collectors`` (``ec2``, the transport's collector, ``local``) and, per
  ``software_config_transport``:
  - POLL_SERVER_HEAT: ``heat`` {user_id, password, auth_url, project_id (the
    stack-domain project), stack_id, resource_name, region_name}; the agent signs in as
    the stack user and reads ``GET /v1/{project}/stacks/{stack}/resources/{res}/metadata``;
  - POLL_SERVER_CFN (Heat's default): ``cfn`` {metadata_url (``heat_metadata_server_url``
    + ``/v1/``), access_key_id, secret_access_key, stack_name, path ``<res>.Metadata``}
    with an EC2 keypair of the stack user;
  - POLL_TEMP_URL and ZAQAR_MESSAGE need Swift and Zaqar: the create fails and says so.

A changed transport (updatable in place) rewrites the settings; delete removes the
user and its keys. Imports: kiln.plugin and the sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.plugin import ResourceFailure
from kiln.plugin.context import ResourceContext
from kiln.plugin.heat_endpoints import heat_endpoints
from kiln.plugin.stack_user import USER_ID, StackUser

OCC = "os-collect-config"
DEPLOYMENTS = "deployments"

#: the os-collect-config collector each transport uses
COLLECTORS = {
    "POLL_SERVER_CFN": "cfn",
    "POLL_SERVER_HEAT": "heat",
    "POLL_TEMP_URL": "request",
    "ZAQAR_MESSAGE": "zaqar",
}
#: transports whose service no cloud Kiln drives offers (simulated-cloud-api.md §13)
UNOFFERED = {"POLL_TEMP_URL": "Swift (object-store)", "ZAQAR_MESSAGE": "Zaqar (messaging)"}


def uses_transport(properties: Mapping[str, Any]) -> bool:
    return properties.get("user_data_format") == "SOFTWARE_CONFIG"


def agent_settings(
    ctx: ResourceContext, transport: str, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``os-collect-config`` of the server: ``given`` (the template's) with the
    transport's collector and credentials; makes the stack user on first use."""
    if transport in UNOFFERED:
        raise ResourceFailure(
            f"software_config_transport {transport} needs {UNOFFERED[transport]}, which "
            "this cloud does not offer: use POLL_SERVER_HEAT or POLL_SERVER_CFN"
        )
    user = StackUser(ctx)
    user_id = user.create()
    settings = {k: v for k, v in given.items() if k not in COLLECTORS.values()}
    settings["collectors"] = ["ec2", COLLECTORS[transport], "local"]
    endpoints = heat_endpoints(ctx)
    if transport == "POLL_SERVER_HEAT":
        heat: dict[str, Any] = {
            "user_id": user_id,
            "password": user.password(),
            "auth_url": user.identity.auth_url,
            "project_id": user.project_id,
            "stack_id": ctx.stack_id,
            "resource_name": ctx.name,
        }
        if endpoints.region_name:
            heat["region_name"] = endpoints.region_name
        settings["heat"] = heat
        return settings
    if not endpoints.metadata_server_url:
        raise ResourceFailure(
            "software_config_transport POLL_SERVER_CFN needs heat_metadata_server_url (the "
            "CloudFormation API's URL) in Kiln's configuration: set it, or use POLL_SERVER_HEAT"
        )
    access, secret = user.keypair()
    settings["cfn"] = {
        "metadata_url": endpoints.metadata_server_url.rstrip("/") + "/v1/",
        "access_key_id": access,
        "secret_access_key": secret,
        "stack_name": ctx.stack_name,
        "path": f"{ctx.name}.Metadata",
    }
    return settings


def write_agent_metadata(ctx: ResourceContext, properties: Mapping[str, Any]) -> None:
    """Put ``deployments`` and ``os-collect-config`` into the resource metadata (for a
    SOFTWARE_CONFIG server; nothing otherwise)."""
    if not uses_transport(properties):
        return
    metadata = dict(ctx.metadata) if isinstance(ctx.metadata, Mapping) else {}
    given = metadata.get(OCC)
    metadata.setdefault(DEPLOYMENTS, [])
    metadata[OCC] = agent_settings(
        ctx,
        properties["software_config_transport"],
        given if isinstance(given, Mapping) else {},
    )
    ctx.metadata_set(metadata)


def delete_agent_credentials(ctx: ResourceContext) -> None:
    """Remove the server's stack user and keys, if it has (or may have had) one."""
    if uses_transport(ctx.properties) or ctx.data_get(USER_ID):
        StackUser(ctx).delete()
