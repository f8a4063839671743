"""The Glance v2 REST API over :class:`~kiln.cloud.sandbox.image.model.ImageModel`.

Mounted under ``/image``: the version document at ``/`` and ``/versions`` (300, public),
``/v2/images`` CRUD, the image import call, JSON-patch updates and tags. Errors are
Glance's plain-text bodies (reference simulated-cloud-api.md section 6).
"""

from __future__ import annotations

import falcon

from kiln.cloud.api.errors import BadRequest, CloudError
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.image.model import IMPORT_METHODS, ImageModel
from kiln.cloud.sandbox.rest import App, TokenValidator, create_service_app, json_body, query
from kiln.cloud.sandbox.rest import scope_of as _scope

PATCH_TYPES = (
    "application/openstack-images-v2.1-json-patch",
    "application/openstack-images-v2.0-json-patch",
)
#: (id, status) of the API versions the version document lists, newest first
VERSIONS = [("v2.16", "CURRENT")] + [(f"v2.{n}", "SUPPORTED") for n in range(15, -1, -1)]


class Versions:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        href = f"{req.prefix}/v2/"
        resp.status = falcon.HTTP_300
        resp.media = {
            "versions": [
                {"id": vid, "status": status, "links": [{"rel": "self", "href": href}]}
                for vid, status in VERSIONS
            ]
        }


class Images:
    def __init__(self, model: ImageModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        params = query(req)
        images = self.model.list_images(_scope(req), params)
        body: dict[str, object] = {
            "images": images,
            "first": "/v2/images",
            "schema": "/v2/schemas/images",
        }
        limit = params.get("limit")
        if limit is not None and images and len(images) == int(limit):
            body["next"] = f"/v2/images?marker={images[-1]['id']}&limit={limit}"
        resp.media = body

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = json_body(req)
        if not isinstance(body, dict):
            raise BadRequest("Request body must be a JSON object.")
        image = self.model.create_image(_scope(req), body)
        resp.status = falcon.HTTP_201
        resp.set_header("Location", f"{req.prefix}/v2/images/{image['id']}")
        resp.media = image


class Image:
    def __init__(self, model: ImageModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response, image_id: str) -> None:
        resp.media = self.model.get_image(_scope(req), image_id)

    def on_patch(self, req: falcon.Request, resp: falcon.Response, image_id: str) -> None:
        content_type = (req.content_type or "").split(";")[0].strip()
        if content_type not in PATCH_TYPES:
            raise CloudError(
                f"Unsupported Content-Type {content_type or 'none'}; use {PATCH_TYPES[0]}",
                status=415,
            )
        resp.media = self.model.update_image(_scope(req), image_id, json_body(req))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, image_id: str) -> None:
        self.model.delete_image(_scope(req), image_id)
        resp.status = falcon.HTTP_204


class Import:
    def __init__(self, model: ImageModel) -> None:
        self.model = model

    def on_post(self, req: falcon.Request, resp: falcon.Response, image_id: str) -> None:
        self.model.import_image(_scope(req), image_id, json_body(req))
        resp.status = falcon.HTTP_202


class ImportInfo:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {
            "import-methods": {
                "description": "Import methods available.",
                "type": "array",
                "value": list(IMPORT_METHODS),
            }
        }


class Tag:
    def __init__(self, model: ImageModel) -> None:
        self.model = model

    def on_put(self, req: falcon.Request, resp: falcon.Response, image_id: str, tag: str) -> None:
        self.model.add_tag(_scope(req), image_id, tag)
        resp.status = falcon.HTTP_204

    def on_delete(
        self, req: falcon.Request, resp: falcon.Response, image_id: str, tag: str
    ) -> None:
        self.model.remove_tag(_scope(req), image_id, tag)
        resp.status = falcon.HTTP_204


def _public(path: str) -> bool:
    return path in ("", "/", "/versions")


def create_image_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The Glance app of ``cloud`` (the model registered as service ``image``)."""
    model: ImageModel = cloud.services["image"]
    versions = Versions()
    return create_service_app(
        style="glance",
        tokens=tokens,
        public=_public,
        routes=[
            ("/", versions),
            ("/versions", versions),
            ("/v2/images", Images(model)),
            ("/v2/images/{image_id}", Image(model)),
            ("/v2/images/{image_id}/import", Import(model)),
            ("/v2/images/{image_id}/tags/{tag}", Tag(model)),
            ("/v2/info/import", ImportInfo()),
        ],
    )
