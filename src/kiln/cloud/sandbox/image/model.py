"""The simulated Glance: images, their visibility, web-download imports and snapshots.

Images are ``image`` documents in the shared store, shaped as ``GET /v2/images/{id}``.
Who sees what: public and community images everyone, private and shared ones their
owner, admins all; another project's private image is NotFound. Imports run
``queued -> importing -> active`` (``image.image.import`` delay; an outcome fault on
``image.import_image`` ends it ``killed``); Nova snapshots run
``queued -> saving -> active`` (``image.image.snapshot`` delay).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, MultipleMatches, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.image import documents as docs

SERVICE = "image"
KIND = "image"
IMPORT_METHODS = ("web-download",)


class ImageModel:
    """Glance v2 over the shared document store."""

    def __init__(self, cloud: SandboxCloud) -> None:
        self.cloud = cloud
        self.store = cloud.store

    def seed(self) -> None:
        """The public images of a fresh sandbox (kept if already there)."""
        with self.store.lock:
            for seed in docs.SEED_IMAGES:
                if not self.store.exists(KIND, seed.id):
                    self.store.put(KIND, docs.seed_document(seed, self.cloud.timestamp()))

    # -- visibility ----------------------------------------------------------------------------
    @staticmethod
    def _visible(document: Mapping[str, Any], project_id: str, admin: bool) -> bool:
        if admin or document.get("visibility") in ("public", "community"):
            return True
        return document.get("owner") == project_id

    @staticmethod
    def _may_modify(document: Mapping[str, Any], scope: CloudScope) -> None:
        if not scope.is_admin and document.get("owner") != scope.project_id:
            raise Forbidden(f"You are not permitted to modify image {document['id']}.")

    def _lookup(self, project_id: str, image_id: str, admin: bool = False) -> dict[str, Any]:
        document = self.store.get(KIND, image_id) if docs.is_uuid(image_id) else None
        if document is None or not self._visible(document, project_id, admin):
            raise NotFound(f"No image found with ID {image_id}")
        return document

    def _get(self, scope: CloudScope, image_id: str) -> dict[str, Any]:
        return self._lookup(scope.project_id, image_id, scope.is_admin)

    # -- reads -----------------------------------------------------------------------------------
    def get_image(self, scope: CloudScope, image_id: str) -> dict[str, Any]:
        self.cloud.sim.enter(scope, SERVICE, "get_image", image_id)
        with self.store.lock:
            return self._get(scope, image_id)

    def list_images(
        self, scope: CloudScope, filters: Mapping[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Images matching Glance's list filters; ``limit``/``marker`` page them."""
        self.cloud.sim.enter(scope, SERVICE, "list_images")
        wanted = dict(filters or {})
        limit = _int_param(wanted.pop("limit", None), "limit")
        marker = wanted.pop("marker", None)
        wanted.pop("sort", None)
        wanted.pop("sort_key", None)
        wanted.pop("sort_dir", None)
        hidden = _bool_param(wanted.pop("os_hidden", None))
        visibility = wanted.pop("visibility", None)
        if visibility is not None and visibility not in (*docs.VISIBILITIES, "all"):
            raise BadRequest(f"Invalid visibility value: {visibility}")
        tag = wanted.pop("tag", None)
        with self.store.lock:
            images = [
                d
                for d in self.store.list(KIND)
                if self._visible(d, scope.project_id, scope.is_admin)
                and bool(d.get("os_hidden")) == bool(hidden)
                and _visibility_matches(d, visibility)
                and (tag is None or tag in (d.get("tags") or []))
                and all(_text(d.get(k)) == v for k, v in wanted.items())
            ]
            if marker is not None:
                ids = [d["id"] for d in images]
                if marker not in ids:
                    raise BadRequest(f"Invalid marker. Image {marker} could not be found.")
                images = images[ids.index(marker) + 1 :]
            return images if limit is None else images[:limit]

    # -- create / import ---------------------------------------------------------------------------
    def create_image(self, scope: CloudScope, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v2/images``: a ``queued`` image owned by the caller's project."""
        self.cloud.sim.enter(scope, SERVICE, "create_image", body.get("name"))
        if not isinstance(body, Mapping):
            raise BadRequest("Request body must be a JSON object.")
        image_id = body.get("id") or self.cloud.new_id()
        if not isinstance(image_id, str) or not docs.is_uuid(image_id):
            raise BadRequest(f"Invalid image id: {image_id!r}")
        fields = {k: v for k, v in body.items() if k != "id"}
        for key in fields:
            docs.check_writable(key)
        owner = fields.pop("owner", scope.project_id)
        if owner != scope.project_id and not scope.is_admin:
            raise Forbidden("You are not permitted to create images owned by another project.")
        if fields.get("visibility") == "public" and not scope.is_admin:
            raise Forbidden("You are not authorized to publicize images.")
        values = {k: docs.check_value(k, v) for k, v in fields.items()}
        with self.store.lock:
            if self.store.exists(KIND, image_id):
                raise Conflict(f"Image with identifier {image_id} already exists!")
            document = docs.new_document(image_id, owner, self.cloud.timestamp())
            document.update(values)
            return self.store.put(KIND, document)

    def import_image(self, scope: CloudScope, image_id: str, body: Mapping[str, Any]) -> None:
        """``POST /v2/images/{id}/import`` with ``{"method": {"name", "uri"}}``."""
        self.cloud.sim.enter(scope, SERVICE, "import_image", image_id)
        method = body.get("method") if isinstance(body, Mapping) else None
        if not isinstance(method, Mapping) or method.get("name") not in IMPORT_METHODS:
            raise BadRequest("Import method is not supported; use one of: web-download")
        uri = method.get("uri")
        if not isinstance(uri, str) or urlparse(uri).scheme not in ("http", "https"):
            raise BadRequest("URI for web-download must be an http or https URL.")
        with self.store.lock:
            document = self._get(scope, image_id)
            self._may_modify(document, scope)
            if document["status"] != "queued":
                raise Conflict(
                    f"Image status transition from {document['status']} to importing is not allowed"
                )
            if not document.get("disk_format") or not document.get("container_format"):
                raise Conflict("'disk_format' and 'container_format' must be set before import.")
            document.update(status="importing", updated_at=self.cloud.timestamp())
            document["os_glance_import_task"] = self.cloud.new_id()
            self.store.put(KIND, document)
            fault = self.cloud.sim.outcome(scope, SERVICE, "import_image")
            if fault is not None:
                final: dict[str, Any] = {
                    "status": _failed_status(fault.final_state),
                    "os_glance_failed_import": "web-download",
                }
            else:
                size = _size_for(uri)
                final = {"status": "active", **docs.digest_fields(uri, size)}
                final["virtual_size"] = size
            final["updated_at"] = self.cloud.timestamp()
            delay = self.cloud.sim.delay(SERVICE, KIND, "import")
            self.store.schedule(KIND, image_id, delay, final)

    # -- update / delete / tags ------------------------------------------------------------------
    def update_image(self, scope: CloudScope, image_id: str, operations: Any) -> dict[str, Any]:
        """``PATCH /v2/images/{id}`` with a JSON patch."""
        self.cloud.sim.enter(scope, SERVICE, "update_image", image_id)
        with self.store.lock:
            document = self._get(scope, image_id)
            self._may_modify(document, scope)
            trial = dict(document)
            changed = docs.apply_patch(trial, operations)
            if trial.get("owner") != document.get("owner") and not scope.is_admin:
                raise Forbidden("You are not permitted to change the owner of an image.")
            if (
                "visibility" in changed
                and trial["visibility"] == "public"
                and document["visibility"] != "public"
                and not scope.is_admin
            ):
                raise Forbidden("You are not authorized to publicize images.")
            document.clear()
            document.update(trial, updated_at=self.cloud.timestamp())
            return self.store.put(KIND, document)

    def delete_image(self, scope: CloudScope, image_id: str) -> None:
        """``DELETE /v2/images/{id}``; protected images cannot be deleted."""
        self.cloud.sim.enter(scope, SERVICE, "delete_image", image_id)
        with self.store.lock:
            document = self._get(scope, image_id)
            self._may_modify(document, scope)
            if document.get("protected"):
                raise Forbidden(f"Image {image_id} is protected and cannot be deleted.")
            self.store.delete(KIND, image_id)

    def add_tag(self, scope: CloudScope, image_id: str, tag: str) -> None:
        self.cloud.sim.enter(scope, SERVICE, "add_image_tag", image_id)
        if len(tag) > 255:
            raise BadRequest("Image tag too long (at most 255 characters).")
        with self.store.lock:
            document = self._get(scope, image_id)
            self._may_modify(document, scope)
            if tag not in document["tags"]:
                document["tags"].append(tag)
                document["updated_at"] = self.cloud.timestamp()
                self.store.put(KIND, document)

    def remove_tag(self, scope: CloudScope, image_id: str, tag: str) -> None:
        self.cloud.sim.enter(scope, SERVICE, "remove_image_tag", image_id)
        with self.store.lock:
            document = self._get(scope, image_id)
            self._may_modify(document, scope)
            if tag not in document["tags"]:
                raise NotFound(f"Tag {tag} not found")
            document["tags"].remove(tag)
            document["updated_at"] = self.cloud.timestamp()
            self.store.put(KIND, document)

    # -- for other services (no sim.enter; the caller may hold the store lock) ---------------------
    def get_image_internal(self, project_id: str, image_id_or_name: str) -> dict[str, Any]:
        """A visible image by id, else by unique name; NotFound / MultipleMatches."""
        with self.store.lock:
            if docs.is_uuid(image_id_or_name):
                document = self.store.get(KIND, image_id_or_name)
                if document is not None and self._visible(document, project_id, False):
                    return document
            named = [
                d
                for d in self.store.list(KIND)
                if d.get("name") == image_id_or_name and self._visible(d, project_id, False)
            ]
            if len(named) > 1:
                raise MultipleMatches(f"Multiple images match '{image_id_or_name}'.")
            if not named:
                raise NotFound(f"Image {image_id_or_name} could not be found.")
            return named[0]

    def create_snapshot_image(
        self, project_id: str, name: str, properties: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A private snapshot image (Nova createImage): ``queued -> saving -> active``."""
        with self.store.lock:
            image_id = self.cloud.new_id()
            document = docs.new_document(image_id, project_id, self.cloud.timestamp())
            document.update(name=name, visibility="private")
            document.update(
                disk_format=properties.get("disk_format") or "qcow2",
                container_format=properties.get("container_format") or "bare",
                min_disk=int(properties.get("min_disk") or 0),
                min_ram=int(properties.get("min_ram") or 0),
            )
            for key, value in properties.items():
                if key not in docs.CORE and value is not None:
                    document[key] = value if isinstance(value, str) else str(value)
            self.store.put(KIND, document)
            delay = self.cloud.sim.delay(SERVICE, KIND, "snapshot")
            size = _size_for(image_id)
            done = {"status": "active", **docs.digest_fields(image_id, size)}
            self.store.schedule(KIND, image_id, 0.0, {"status": "saving"})
            self.store.schedule(KIND, image_id, delay, done)
            return document


def _failed_status(final_state: str | None) -> str:
    state = (final_state or "killed").lower()
    return "killed" if state in ("error", "failed") else state


def _size_for(source: str) -> int:
    """A plausible, stable image size (13-77 MiB) for data from ``source``."""
    digest = hashlib.sha256(source.encode()).digest()
    return (13 + digest[0] % 64) * 1024 * 1024


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _visibility_matches(document: Mapping[str, Any], visibility: str | None) -> bool:
    if visibility == "all":
        return True
    if visibility is None:  # Glance leaves community images out unless asked for
        return document.get("visibility") != "community"
    return document.get("visibility") == visibility


def _int_param(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise BadRequest(f"{name} param must be an integer") from None
    if number < 0:
        raise BadRequest(f"{name} param must be positive")
    return number


def _bool_param(value: str | None) -> bool:
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise BadRequest(f"Invalid boolean value: {value}")
