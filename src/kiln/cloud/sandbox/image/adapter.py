"""The in-process :class:`~kiln.cloud.api.image.ImageApi`: calls the image model directly.

Same rules and state as the REST app, without HTTP; every answer is a deep copy wrapped
in an :class:`~kiln.cloud.api.image.Image`, so a plugin never holds a live document.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.errors import MultipleMatches, NotFound
from kiln.cloud.api.image import Image, patch_operations
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.image.model import ImageModel


class ImageAdapter:
    """ImageApi for one scope, in process."""

    def __init__(self, model: ImageModel, scope: CloudScope) -> None:
        self.model = model
        self.scope = scope

    def get_image(self, image_id: str) -> Image:
        return Image(copy.deepcopy(self.model.get_image(self.scope, image_id)))

    def find_image(self, name_or_id: str) -> Image:
        try:
            return self.get_image(name_or_id)
        except NotFound:
            pass
        matches = self.list_images(name=name_or_id)
        if not matches:
            matches = self.list_images(name=name_or_id, os_hidden="true")
        if len(matches) > 1:
            raise MultipleMatches(f"More than one image exists with the name '{name_or_id}'.")
        if not matches:
            raise NotFound(f"No image found for {name_or_id}", service="image")
        return matches[0]

    def list_images(self, **filters: Any) -> list[Image]:
        params = {k: _param(v) for k, v in filters.items() if v is not None}
        images = self.model.list_images(self.scope, params)
        return [Image(copy.deepcopy(d)) for d in images]

    def create_image(self, body: Mapping[str, Any]) -> Image:
        return Image(copy.deepcopy(self.model.create_image(self.scope, dict(body))))

    def import_image(self, image_id: str, uri: str, method: str = "web-download") -> None:
        self.model.import_image(self.scope, image_id, {"method": {"name": method, "uri": uri}})

    def update_image(self, image_id: str, changes: Mapping[str, Any]) -> Image:
        current = self.model.get_image(self.scope, image_id)
        operations = patch_operations(current, changes)
        return Image(copy.deepcopy(self.model.update_image(self.scope, image_id, operations)))

    def delete_image(self, image_id: str) -> None:
        self.model.delete_image(self.scope, image_id)

    def add_image_tag(self, image_id: str, tag: str) -> None:
        self.model.add_tag(self.scope, image_id, tag)

    def remove_image_tag(self, image_id: str, tag: str) -> None:
        self.model.remove_tag(self.scope, image_id, tag)

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
