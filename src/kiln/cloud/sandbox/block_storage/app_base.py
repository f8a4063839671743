"""What the Cinder REST resources share: version documents, project check, volume views.

Every resource under ``/v3/{project_id}`` checks that the URL's project is the token's
(admins may name any), negotiates the microversion and renders volumes for it.
"""

from __future__ import annotations

from typing import Any

import falcon

from kiln.cloud.api.errors import BadRequest, Forbidden
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.rest import negotiate_microversion, scope_of

MIN_VERSION, MAX_VERSION = "3.0", "3.70"
#: volume fields and the microversion that introduced them
_VOLUME_FIELD_VERSIONS = {
    "group_id": (3, 13),
    "provider_id": (3, 21),
    "service_uuid": (3, 48),
    "shared_targets": (3, 48),
    "volume_type_id": (3, 63),
    "consumes_quota": (3, 65),
    "backup_id": (3, 47),
}
_ADMIN_FIELDS = ("os-vol-host-attr:host",)


def versions_document(prefix: str) -> dict[str, Any]:
    return {
        "versions": [
            {
                "id": "v3.0",
                "status": "CURRENT",
                "version": MAX_VERSION,
                "min_version": MIN_VERSION,
                "updated": "2023-08-31T00:00:00Z",
                "links": [
                    {
                        "rel": "describedby",
                        "type": "text/html",
                        "href": "https://docs.openstack.org/",
                    },
                    {"rel": "self", "href": f"{prefix}/v3/"},
                ],
                "media-types": [
                    {
                        "base": "application/json",
                        "type": "application/vnd.openstack.volume+json;version=3",
                    }
                ],
            }
        ]
    }


class Root:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = falcon.HTTP_300
        resp.media = versions_document(req.prefix)


class V3Root:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = versions_document(req.prefix)


class ProjectResource:
    """Shared by every project resource: scope, project check, microversion, views."""

    def __init__(self, model: BlockStorageModel) -> None:
        self.model = model

    @staticmethod
    def begin(
        req: falcon.Request, resp: falcon.Response, project_id: str
    ) -> tuple[CloudScope, tuple[int, int]]:
        scope = scope_of(req)
        if project_id != scope.project_id and not scope.is_admin:
            raise Forbidden(f"Project {project_id} in the URL does not match the token's project.")
        version = negotiate_microversion(req, resp, "volume", MIN_VERSION, MAX_VERSION)
        return scope, version

    @staticmethod
    def volume_view(
        volume: dict[str, Any], scope: CloudScope, version: tuple[int, int]
    ) -> dict[str, Any]:
        view = {
            k: v
            for k, v in volume.items()
            if version >= _VOLUME_FIELD_VERSIONS.get(k, (3, 0))
            and (scope.is_admin or k not in _ADMIN_FIELDS)
        }
        return view


def json_body_key(data: Any, key: str) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get(key), dict):
        raise BadRequest(f"Missing required element '{key}' in request body.")
    value: dict[str, Any] = data[key]
    return value
