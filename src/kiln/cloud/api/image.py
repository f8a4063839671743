"""The image (Glance v2) client interface and its value type.

What the plugins ask of Glance: the ``glance.image`` constraint and server/volume image
lookups (find by id, then name), stack snapshot images (poll, delete) and
``OS::Glance::WebImage`` (create, import by ``web-download``, update by JSON patch,
tags, delete). Images are Glance's unwrapped JSON with extra properties flattened in.
Reference: simulated-cloud-api.md section 6. Imports: stdlib and kiln.cloud.api only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kiln.cloud.api.records import Record


class Image(Record):
    """A Glance image (``GET /v2/images/{id}``)."""

    @property
    def visibility(self) -> str | None:
        return self.raw.get("visibility")

    @property
    def protected(self) -> bool:
        return bool(self.raw.get("protected"))

    @property
    def disk_format(self) -> str | None:
        return self.raw.get("disk_format")

    @property
    def container_format(self) -> str | None:
        return self.raw.get("container_format")

    @property
    def min_disk(self) -> int:
        return int(self.raw.get("min_disk") or 0)

    @property
    def min_ram(self) -> int:
        return int(self.raw.get("min_ram") or 0)

    @property
    def size(self) -> int | None:
        value = self.raw.get("size")
        return None if value is None else int(value)

    @property
    def owner(self) -> str | None:
        return self.raw.get("owner")

    @property
    def tags(self) -> list[str]:
        return list(self.raw.get("tags") or [])


def patch_operations(
    current: Mapping[str, Any], changes: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The Glance JSON patch that sets ``changes`` on an image shown as ``current``.

    A None value removes the property; a key the image has is replaced, a new one added
    (Glance refuses ``add`` for an existing extra property and ``replace`` for a missing one).
    """
    operations: list[dict[str, Any]] = []
    for key, value in changes.items():
        path = "/" + key.replace("~", "~0").replace("/", "~1")
        if value is None:
            if current.get(key) is not None:
                operations.append({"op": "remove", "path": path})
        elif key in current:
            operations.append({"op": "replace", "path": path, "value": value})
        else:
            operations.append({"op": "add", "path": path, "value": value})
    return operations


class ImageApi(Protocol):
    """Glance v2 as the plugins use it."""

    def get_image(self, image_id: str) -> Image:
        """``GET /v2/images/{id}``; NotFound for unknown or non-UUID ids."""
        ...

    def find_image(self, name_or_id: str) -> Image:
        """By id, then by name (hidden images too); NotFound or MultipleMatches."""
        ...

    def list_images(self, **filters: Any) -> list[Image]:
        """``GET /v2/images`` with filters (name, status, visibility, owner, os_hidden)."""
        ...

    def create_image(self, body: Mapping[str, Any]) -> Image:
        """``POST /v2/images``: a ``queued`` image; unknown keys become extra properties."""
        ...

    def import_image(self, image_id: str, uri: str, method: str = "web-download") -> None:
        """``POST /v2/images/{id}/import``: fetch the data from ``uri`` (queued -> active)."""
        ...

    def update_image(self, image_id: str, changes: Mapping[str, Any]) -> Image:
        """``PATCH /v2/images/{id}``: set each property; a None value removes it."""
        ...

    def delete_image(self, image_id: str) -> None:
        """``DELETE /v2/images/{id}``; Forbidden when protected."""
        ...

    def add_image_tag(self, image_id: str, tag: str) -> None:
        """``PUT /v2/images/{id}/tags/{tag}``."""
        ...

    def remove_image_tag(self, image_id: str, tag: str) -> None:
        """``DELETE /v2/images/{id}/tags/{tag}``; NotFound when absent."""
        ...

    def set_image_tags(self, image_id: str, tags: Sequence[str]) -> Image:
        """Make the image's tags exactly ``tags`` (adds and removes as needed)."""
        ...


__all__ = ["Image", "ImageApi", "patch_operations"]

# CONTRACT READY
