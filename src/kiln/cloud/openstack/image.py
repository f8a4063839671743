"""The :class:`~kiln.cloud.api.image.ImageApi` of a real Glance (or the sandbox) over REST.

Paths are relative to openstacksdk's image proxy, whose base is the discovered
``…/image/v2``. Updates are JSON patches computed against the current image (``replace``
for a property it has, ``add`` for a new one, ``remove`` for None), as openstacksdk does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.image import Image, patch_operations
from kiln.cloud.openstack.rest import RestClient

PATCH_TYPE = "application/openstack-images-v2.1-json-patch"


class OpenStackImage:
    """Glance v2 through a :class:`RestClient` over ``conn.image``."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest

    def get_image(self, image_id: str) -> Image:
        return Image(self.rest.get(f"/images/{quote(image_id, safe='')}"))

    def find_image(self, name_or_id: str) -> Image:
        try:
            return self.get_image(name_or_id)
        except NotFound:
            pass
        matches = self.list_images(name=name_or_id)
        if not matches:
            matches = self.list_images(name=name_or_id, os_hidden=True)
        if len(matches) > 1:
            raise MultipleMatches(f"More than one image exists with the name '{name_or_id}'.")
        if not matches:
            raise NotFound(f"No image found for {name_or_id}", service="image")
        return matches[0]

    def list_images(self, **filters: Any) -> list[Image]:
        params = {k: _param(v) for k, v in filters.items() if v is not None}
        images: list[Image] = []
        path = "/images"
        while True:
            body = self.rest.get(path, params=params)
            images.extend(Image(i) for i in body.get("images", []))
            following = body.get("next")
            if not following or "limit" in filters:
                return images
            # ``next`` is the whole path and query of the next page, from the v2 root
            path, params = following.removeprefix("/v2"), {}

    def create_image(self, body: Mapping[str, Any]) -> Image:
        return Image(self.rest.post("/images", dict(body)))

    def import_image(self, image_id: str, uri: str, method: str = "web-download") -> None:
        body = {"method": {"name": method, "uri": uri}}
        self.rest.post(f"/images/{image_id}/import", body)

    def update_image(self, image_id: str, changes: Mapping[str, Any]) -> Image:
        current = self.get_image(image_id)
        operations = patch_operations(current.raw, changes)
        if not operations:
            return current
        headers = {"Content-Type": PATCH_TYPE}
        return Image(self.rest.patch(f"/images/{image_id}", operations, headers=headers))

    def delete_image(self, image_id: str) -> None:
        self.rest.delete(f"/images/{quote(image_id, safe='')}")

    def add_image_tag(self, image_id: str, tag: str) -> None:
        self.rest.put(f"/images/{image_id}/tags/{quote(tag, safe='')}")

    def remove_image_tag(self, image_id: str, tag: str) -> None:
        self.rest.delete(f"/images/{image_id}/tags/{quote(tag, safe='')}")

    def set_image_tags(self, image_id: str, tags: Sequence[str]) -> Image:
        current = set(self.get_image(image_id).tags)
        for tag in tags:
            if tag not in current:
                self.add_image_tag(image_id, tag)
        for tag in current - set(tags):
            self.remove_image_tag(image_id, tag)
        return self.get_image(image_id)


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
