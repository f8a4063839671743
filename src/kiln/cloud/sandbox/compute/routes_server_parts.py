"""REST resources under ``/servers/{id}``: metadata, tags, interfaces, volumes, consoles."""

from __future__ import annotations

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.sandbox.compute import views
from kiln.cloud.sandbox.compute.web import Resource, accepted, call, not_before
from kiln.cloud.sandbox.rest import json_body


def _metadata(req: falcon.Request) -> dict[str, str]:
    body = json_body(req)
    if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
        raise BadRequest("Missing or invalid 'metadata' in request body.")
    return dict(body["metadata"])


class Metadata(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        resp.media = {"metadata": self.model.get_metadata(call(req).scope, server_id)}

    def on_post(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        merged = self.model.set_metadata(call(req).scope, server_id, _metadata(req))
        resp.media = {"metadata": merged}

    def on_put(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        new = self.model.set_metadata(call(req).scope, server_id, _metadata(req), replace=True)
        resp.media = {"metadata": new}


class MetadataItem(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str, key: str) -> None:
        value = self.model.get_metadata_item(call(req).scope, server_id, key)
        resp.media = {"meta": {key: value}}

    def on_put(self, req: falcon.Request, resp: falcon.Response, server_id: str, key: str) -> None:
        body = json_body(req)
        meta = body.get("meta") if isinstance(body, dict) else None
        if not isinstance(meta, dict):
            raise BadRequest("Missing or invalid 'meta' in request body.")
        resp.media = {"meta": self.model.set_metadata_item(call(req).scope, server_id, key, meta)}

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, server_id: str, key: str
    ) -> None:
        self.model.delete_metadata_item(call(req).scope, server_id, key)
        accepted(resp, 204)


class Tags(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        not_before(c, "2.26")
        resp.media = {"tags": self.model.get_tags(c.scope, server_id)}

    def on_put(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        not_before(c, "2.26")
        body = json_body(req)
        tags = body.get("tags") if isinstance(body, dict) else None
        resp.media = {"tags": self.model.set_tags(c.scope, server_id, tags)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        not_before(c, "2.26")
        self.model.set_tags(c.scope, server_id, [])
        accepted(resp, 204)


class Tag(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str, tag: str) -> None:
        c = call(req)
        not_before(c, "2.26")
        if not self.model.has_tag(c.scope, server_id, tag):
            raise falcon.HTTPNotFound()
        accepted(resp, 204)

    def on_put(self, req: falcon.Request, resp: falcon.Response, server_id: str, tag: str) -> None:
        c = call(req)
        not_before(c, "2.26")
        if self.model.add_tag(c.scope, server_id, tag):
            resp.location = f"{c.base}/servers/{server_id}/tags/{tag}"
            accepted(resp, 201)
        else:
            accepted(resp, 204)

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, server_id: str, tag: str
    ) -> None:
        c = call(req)
        not_before(c, "2.26")
        self.model.delete_tag(c.scope, server_id, tag)
        accepted(resp, 204)


class Interfaces(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        found = self.model.list_interfaces(c.scope, server_id)
        resp.media = {"interfaceAttachments": [views.interface_view(i, c.version) for i in found]}

    def on_post(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        made = self.model.attach_interface(
            c.scope, server_id, json_body(req, "interfaceAttachment")
        )
        resp.media = {"interfaceAttachment": views.interface_view(made, c.version)}


class Interface(Resource):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, server_id: str, port_id: str
    ) -> None:
        c = call(req)
        found = self.model.get_interface(c.scope, server_id, port_id)
        resp.media = {"interfaceAttachment": views.interface_view(found, c.version)}

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, server_id: str, port_id: str
    ) -> None:
        self.model.detach_interface(call(req).scope, server_id, port_id)
        accepted(resp)


class VolumeAttachments(Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        records = self.model.list_volume_attachments(c.scope, server_id)
        resp.media = {
            "volumeAttachments": [
                views.volume_attachment_view(r, server_id, c.version) for r in records
            ]
        }

    def on_post(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        record = self.model.attach_volume(c.scope, server_id, json_body(req, "volumeAttachment"))
        resp.media = {
            "volumeAttachment": views.volume_attachment_view(record, server_id, c.version)
        }


class VolumeAttachment(Resource):
    def on_get(
        self, req: falcon.Request, resp: falcon.Response, server_id: str, volume_id: str
    ) -> None:
        c = call(req)
        record = self.model.get_volume_attachment(c.scope, server_id, volume_id)
        resp.media = {
            "volumeAttachment": views.volume_attachment_view(record, server_id, c.version)
        }

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, server_id: str, volume_id: str
    ) -> None:
        self.model.detach_volume(call(req).scope, server_id, volume_id)
        accepted(resp)


class RemoteConsoles(Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response, server_id: str) -> None:
        c = call(req)
        not_before(c, "2.6")
        body = json_body(req, "remote_console")
        console = self.model.remote_console(
            c.scope, server_id, str(body.get("protocol")), str(body.get("type"))
        )
        resp.media = {"remote_console": console}
