"""The Cinder v3 REST API over :class:`~kiln.cloud.sandbox.block_storage.model.BlockStorageModel`.

Mounted under ``/volume``: version documents at ``/`` (300) and ``/v3`` (200), both
public, and the project's API under ``/v3/{project_id}`` (the id must be the token's
project unless the caller is admin). Microversions 3.0-3.70 (``OpenStack-API-Version:
volume 3.X``); volume fields newer than the negotiated version are left out. Errors are
Cinder's ``{"<fault>": {"code", "message"}}`` bodies.
"""

from __future__ import annotations

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.sandbox.block_storage.app_base import (
    ProjectResource,
    Root,
    V3Root,
    json_body_key,
)
from kiln.cloud.sandbox.block_storage.app_types_backups import type_and_backup_routes
from kiln.cloud.sandbox.block_storage.base import as_bool
from kiln.cloud.sandbox.block_storage.model import BlockStorageModel
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.rest import App, TokenValidator, create_service_app, json_body, query


class Volumes(ProjectResource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        scope, _ = self.begin(req, resp, project_id)
        volumes = self.model.list_volumes(scope, query(req))
        resp.media = {"volumes": [{"id": v["id"], "name": v["name"], "links": []} for v in volumes]}

    def on_post(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        scope, version = self.begin(req, resp, project_id)
        data = json_body(req)
        body = json_body_key(data, "volume")
        if body.get("backup_id") and version < (3, 47):
            raise BadRequest("Invalid input received: backup_id needs microversion 3.47.")
        hints = data.get("OS-SCH-HNT:scheduler_hints")
        volume = self.model.create_volume(scope, body, hints)
        resp.status = falcon.HTTP_202
        resp.media = {"volume": self.volume_view(volume, scope, version)}


class VolumesDetail(ProjectResource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, project_id: str) -> None:
        scope, version = self.begin(req, resp, project_id)
        volumes = self.model.list_volumes(scope, query(req))
        resp.media = {"volumes": [self.volume_view(v, scope, version) for v in volumes]}


class Volume(ProjectResource):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        scope, version = self.begin(req, resp, project_id)
        volume = self.model.get_volume(scope, volume_id)
        resp.media = {"volume": self.volume_view(volume, scope, version)}

    def on_put(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        scope, version = self.begin(req, resp, project_id)
        volume = self.model.update_volume(scope, volume_id, json_body(req, "volume"))
        resp.media = {"volume": self.volume_view(volume, scope, version)}

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        scope, _ = self.begin(req, resp, project_id)
        cascade = as_bool(query(req).get("cascade", "false"), "cascade")
        self.model.delete_volume(scope, volume_id, cascade)
        resp.status = falcon.HTTP_202


class VolumeAction(ProjectResource):
    def on_post(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        scope, version = self.begin(req, resp, project_id)
        body = json_body(req)
        self.model.volume_action(scope, volume_id, body, version)
        bootable = isinstance(body, dict) and "os-set_bootable" in body
        resp.status = falcon.HTTP_200 if bootable else falcon.HTTP_202


class Metadata(ProjectResource):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        scope, _ = self.begin(req, resp, project_id)
        resp.media = {"metadata": self.model.get_metadata(scope, volume_id)}

    def _set(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        project_id: str,
        volume_id: str,
        replace: bool,
    ) -> None:
        scope, _ = self.begin(req, resp, project_id)
        metadata = json_body_key(json_body(req), "metadata")
        resp.media = {
            "metadata": self.model.set_metadata(scope, volume_id, metadata, replace=replace)
        }

    def on_post(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        self._set(req, resp, project_id, volume_id, False)

    def on_put(
        self, req: falcon.Request, resp: falcon.Response, project_id: str, volume_id: str
    ) -> None:
        self._set(req, resp, project_id, volume_id, True)


class MetadataItem(ProjectResource):
    def on_get(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        project_id: str,
        volume_id: str,
        key: str,
    ) -> None:
        scope, _ = self.begin(req, resp, project_id)
        metadata = self.model.get_metadata(scope, volume_id)
        if key not in metadata:
            raise falcon.HTTPNotFound()
        resp.media = {"meta": {key: metadata[key]}}

    def on_put(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        project_id: str,
        volume_id: str,
        key: str,
    ) -> None:
        scope, _ = self.begin(req, resp, project_id)
        meta = json_body_key(json_body(req), "meta")
        resp.media = {"meta": self.model.set_metadata_item(scope, volume_id, key, meta)}

    def on_delete(
        self,
        req: falcon.Request,
        resp: falcon.Response,
        project_id: str,
        volume_id: str,
        key: str,
    ) -> None:
        scope, _ = self.begin(req, resp, project_id)
        self.model.delete_metadata_item(scope, volume_id, key)


def create_block_storage_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The Cinder app of ``cloud`` (the model registered as service ``block_storage``)."""
    model: BlockStorageModel = cloud.services["block_storage"]
    p = "/v3/{project_id}"
    routes: list[tuple[str, object]] = [
        ("/", Root()),
        ("/v3", V3Root()),
        (f"{p}/volumes", Volumes(model)),
        (f"{p}/volumes/detail", VolumesDetail(model)),
        (f"{p}/volumes/{{volume_id}}", Volume(model)),
        (f"{p}/volumes/{{volume_id}}/action", VolumeAction(model)),
        (f"{p}/volumes/{{volume_id}}/metadata", Metadata(model)),
        (f"{p}/volumes/{{volume_id}}/metadata/{{key}}", MetadataItem(model)),
        *type_and_backup_routes(model, p),
    ]
    return create_service_app(
        style="cinder",
        tokens=tokens,
        public=lambda path: path in ("", "/", "/v3"),
        routes=routes,
    )
