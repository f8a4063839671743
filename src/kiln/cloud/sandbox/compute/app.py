"""The simulated Nova REST API (``/compute``): version documents and the v2.1 routes.

Mounted under ``/compute`` (the app sees ``/v2.1/servers``); the legacy
``/v2.1/{project_id}/...`` form is accepted by dropping the project segment before
routing. Every v2.1 request negotiates its microversion (2.1-2.90, legacy
``X-OpenStack-Nova-API-Version`` too) into ``req.context.version``.
"""

from __future__ import annotations

import re

import falcon

from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.compute import routes_catalog as catalog
from kiln.cloud.sandbox.compute import routes_server_parts as parts
from kiln.cloud.sandbox.compute import routes_servers as servers
from kiln.cloud.sandbox.compute.model import ComputeModel
from kiln.cloud.sandbox.rest import App, TokenValidator, create_service_app, negotiate_microversion

MIN, MAX = "2.1", "2.90"
LEGACY_HEADER = "X-OpenStack-Nova-API-Version"
_VERSION_PATHS = ("/", "/v2.1", "/v2")
_COLLECTIONS = frozenset(
    {
        "servers", "flavors", "os-keypairs", "os-server-groups", "limits",
        "os-availability-zone", "images", "extensions",
    }
)  # fmt: skip
_PROJECT_PATH = re.compile(r"^/v2\.1/([^/]+)(/.*)?$")


def _v21(root: str) -> dict[str, object]:
    return {
        "id": "v2.1",
        "status": "CURRENT",
        "version": MAX,
        "min_version": MIN,
        "updated": "2013-07-23T11:33:21Z",
        "links": [{"rel": "self", "href": f"{root}/v2.1/"}],
    }


class Versions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        root = req.prefix
        resp.media = {
            "versions": [
                {
                    "id": "v2.0",
                    "status": "SUPPORTED",
                    "version": "",
                    "min_version": "",
                    "updated": "2011-01-21T11:33:21Z",
                    "links": [{"rel": "self", "href": f"{root}/v2/"}],
                },
                _v21(root),
            ]
        }


class Version:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        version = _v21(req.prefix)
        version["links"] = [
            {"rel": "self", "href": f"{req.prefix}/v2.1/"},
            {"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"},
        ]
        version["media-types"] = [
            {
                "base": "application/json",
                "type": "application/vnd.openstack.compute+json;version=2.1",
            }
        ]
        resp.media = {"version": version}


class _Microversions:
    """Drop a legacy project segment, then negotiate the microversion of v2.1 calls."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        match = _PROJECT_PATH.match(req.path)
        if match and match.group(1) not in _COLLECTIONS and match.group(2):
            req.path = "/v2.1" + match.group(2)
        req.context.version = (2, 1)
        if req.path.rstrip("/") not in ("", "/v2.1", "/v2"):
            req.context.version = negotiate_microversion(
                req, resp, "compute", MIN, MAX, legacy_header=LEGACY_HEADER
            )


def _public(path: str) -> bool:
    return (path.rstrip("/") or "/") in _VERSION_PATHS


def create_compute_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The compute REST app over the cloud's ``compute`` model."""
    model: ComputeModel = cloud.compute
    v = "/v2.1"
    routes: list[tuple[str, object]] = [
        ("/", Versions()),
        (v, Version()),
        (f"{v}/servers", servers.Servers(model)),
        (f"{v}/servers/detail", servers.ServersDetail(model)),
        (f"{v}/servers/{{server_id}}", servers.Server(model)),
        (f"{v}/servers/{{server_id}}/action", servers.ServerAction(model)),
        (f"{v}/servers/{{server_id}}/metadata", parts.Metadata(model)),
        (f"{v}/servers/{{server_id}}/metadata/{{key}}", parts.MetadataItem(model)),
        (f"{v}/servers/{{server_id}}/tags", parts.Tags(model)),
        (f"{v}/servers/{{server_id}}/tags/{{tag}}", parts.Tag(model)),
        (f"{v}/servers/{{server_id}}/os-interface", parts.Interfaces(model)),
        (f"{v}/servers/{{server_id}}/os-interface/{{port_id}}", parts.Interface(model)),
        (f"{v}/servers/{{server_id}}/os-volume_attachments", parts.VolumeAttachments(model)),
        (
            f"{v}/servers/{{server_id}}/os-volume_attachments/{{volume_id}}",
            parts.VolumeAttachment(model),
        ),
        (f"{v}/servers/{{server_id}}/remote-consoles", parts.RemoteConsoles(model)),
        (f"{v}/flavors", catalog.Flavors(model)),
        (f"{v}/flavors/detail", catalog.FlavorsDetail(model)),
        (f"{v}/flavors/{{flavor_id}}", catalog.Flavor(model)),
        (f"{v}/flavors/{{flavor_id}}/action", catalog.FlavorAction(model)),
        (f"{v}/flavors/{{flavor_id}}/os-extra_specs", catalog.ExtraSpecs(model)),
        (f"{v}/flavors/{{flavor_id}}/os-extra_specs/{{key}}", catalog.ExtraSpec(model)),
        (f"{v}/flavors/{{flavor_id}}/os-flavor-access", catalog.FlavorAccess(model)),
        (f"{v}/os-keypairs", catalog.Keypairs(model)),
        (f"{v}/os-keypairs/{{name}}", catalog.Keypair(model)),
        (f"{v}/os-server-groups", catalog.ServerGroups(model)),
        (f"{v}/os-server-groups/{{group_id}}", catalog.ServerGroup(model)),
        (f"{v}/limits", catalog.Limits(model)),
        (f"{v}/os-availability-zone", catalog.AvailabilityZones(model)),
    ]
    app = create_service_app(style="nova", tokens=tokens, routes=routes, public=_public)
    app.add_middleware(_Microversions())
    return app
