"""Glance image documents: the seed images, the field rules, and JSON-patch edits.

An image is kept as Glance shows it (``GET /v2/images/{id}``): core fields plus extra
properties flattened in. This module knows which fields are core, which are read-only,
what values are valid, and how a JSON patch (RFC 6902 as Glance restricts it) changes a
document; :mod:`kiln.cloud.sandbox.image.model` decides who may do what and when.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden

DISK_FORMATS = frozenset(
    {"ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop"}
)
CONTAINER_FORMATS = frozenset({"ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed"})
VISIBILITIES = frozenset({"public", "private", "shared", "community"})

#: fields the server computes: a client may not set or change them
READ_ONLY = frozenset(
    {
        "id",
        "status",
        "checksum",
        "os_hash_algo",
        "os_hash_value",
        "size",
        "virtual_size",
        "created_at",
        "updated_at",
        "self",
        "file",
        "schema",
        "direct_url",
        "locations",
    }
)
#: fields a client may set that are not extra properties
WRITABLE_CORE = frozenset(
    {
        "name",
        "visibility",
        "protected",
        "os_hidden",
        "disk_format",
        "container_format",
        "min_disk",
        "min_ram",
        "owner",
        "tags",
    }
)
CORE = READ_ONLY | WRITABLE_CORE

_SEED_NAMESPACE = uuid.UUID("0b5f1a52-77c3-4b8e-9d0e-1c6a3f9e2d41")


@dataclass(frozen=True)
class SeedImage:
    """A public image every sandbox starts with."""

    name: str
    size: int
    virtual_size: int
    min_disk: int
    min_ram: int
    properties: Mapping[str, str]

    @property
    def id(self) -> str:
        return str(uuid.uuid5(_SEED_NAMESPACE, self.name))


_CIRROS = {"os_distro": "cirros", "os_version": "0.6.2", "architecture": "x86_64"}
SEED_IMAGES: tuple[SeedImage, ...] = (
    SeedImage("cirros-0.6.2-x86_64-disk", 21430272, 117440512, 0, 0, _CIRROS),
    SeedImage("cirros", 21430272, 117440512, 0, 0, _CIRROS),
    SeedImage(
        "ubuntu-24.04",
        587202560,
        3758096384,
        4,
        512,
        {"os_distro": "ubuntu", "os_version": "24.04", "architecture": "x86_64"},
    ),
)


def is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def digest_fields(seed: str, size: int) -> dict[str, Any]:
    """Checksums that are stable for the same data (here: the same source)."""
    data = seed.encode()
    return {
        "checksum": hashlib.md5(data, usedforsecurity=False).hexdigest(),
        "os_hash_algo": "sha512",
        "os_hash_value": hashlib.sha512(data).hexdigest(),
        "size": size,
    }


def new_document(image_id: str, owner: str | None, now: str) -> dict[str, Any]:
    """A ``queued`` image with Glance's defaults."""
    return {
        "id": image_id,
        "name": None,
        "status": "queued",
        "visibility": "shared",
        "protected": False,
        "os_hidden": False,
        "checksum": None,
        "os_hash_algo": None,
        "os_hash_value": None,
        "size": None,
        "virtual_size": None,
        "min_ram": 0,
        "min_disk": 0,
        "disk_format": None,
        "container_format": None,
        "owner": owner,
        "tags": [],
        "created_at": now,
        "updated_at": now,
        "self": f"/v2/images/{image_id}",
        "file": f"/v2/images/{image_id}/file",
        "schema": "/v2/schemas/image",
    }


def seed_document(seed: SeedImage, now: str) -> dict[str, Any]:
    document = new_document(seed.id, None, now)
    document.update(
        name=seed.name,
        status="active",
        visibility="public",
        disk_format="qcow2",
        container_format="bare",
        min_disk=seed.min_disk,
        min_ram=seed.min_ram,
        virtual_size=seed.virtual_size,
        **digest_fields(seed.name, seed.size),
    )
    document.update(seed.properties)
    return document


# -- field values ----------------------------------------------------------------------------
def check_value(key: str, value: Any) -> Any:
    """``value`` for ``key`` if valid (ints coerced); BadRequest otherwise."""
    if key in ("min_disk", "min_ram"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BadRequest(f"Invalid value for '{key}': {value!r} is not a non-negative integer")
        return value
    if key in ("protected", "os_hidden"):
        if not isinstance(value, bool):
            raise BadRequest(f"Invalid value for '{key}': {value!r} is not of type 'boolean'")
        return value
    if key == "disk_format" and value is not None and value not in DISK_FORMATS:
        raise BadRequest(f"Invalid value for 'disk_format': {value!r} is not one of the formats")
    if key == "container_format" and value is not None and value not in CONTAINER_FORMATS:
        raise BadRequest(f"Invalid value for 'container_format': {value!r} is not allowed")
    if key == "visibility" and value not in VISIBILITIES:
        raise BadRequest(f"Invalid value for 'visibility': {value!r}")
    if key == "tags":
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise BadRequest("Invalid value for 'tags': a list of strings is required")
        return list(dict.fromkeys(value))
    if key in ("name", "owner"):
        if value is not None and not isinstance(value, str):
            raise BadRequest(f"Invalid value for '{key}': {value!r} is not of type 'string'")
        if value is not None and len(value) > 255:
            raise BadRequest(f"Invalid value for '{key}': longer than 255 characters")
        return value
    if key not in CORE and not isinstance(value, str):
        # Glance's schema types every additional property as a string.
        raise BadRequest(f"Invalid value for '{key}': {value!r} is not of type 'string'")
    return value


def check_writable(key: str) -> None:
    if key in READ_ONLY:
        raise Forbidden(f"Attribute '{key}' is read-only.")
    if key.startswith("os_glance"):
        raise Forbidden(f"Attribute '{key}' is reserved.")


# -- JSON patch --------------------------------------------------------------------------------
def _pointer(path: Any) -> list[str]:
    if not isinstance(path, str) or not path.startswith("/"):
        raise BadRequest(f"Invalid JSON pointer for this resource: '{path}'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def apply_patch(document: dict[str, Any], operations: Any) -> list[str]:
    """Apply Glance JSON-patch ``operations`` to ``document``; returns the changed keys.

    Validates everything first, so a bad operation leaves the document unchanged.
    """
    if not isinstance(operations, list):
        raise BadRequest("Request body must be a JSON array of operation objects.")
    work = dict(document)
    work["tags"] = list(document.get("tags") or [])
    changed: list[str] = []
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation:
            raise BadRequest("Operations must be JSON objects with an 'op' member.")
        op = operation["op"]
        parts = _pointer(operation.get("path"))
        key = parts[0]
        check_writable(key)
        if key == "tags" and len(parts) == 2:
            _patch_tag(work, op, parts[1], operation)
        elif len(parts) != 1:
            raise BadRequest(f"Invalid JSON pointer for this resource: '{operation['path']}'")
        elif op in ("add", "replace"):
            if "value" not in operation:
                raise BadRequest(f"Operation '{op}' requires a 'value' member.")
            if key not in CORE and op == "add" and key in work:
                raise Conflict(f"Property {key} already present.")
            if key not in CORE and op == "replace" and key not in work:
                raise Conflict(f"Property {key} does not exist.")
            work[key] = check_value(key, operation["value"])
        elif op == "remove":
            if key in CORE:
                raise Forbidden(f"Attribute '{key}' can not be removed.")
            if key not in work:
                raise Conflict(f"Property {key} does not exist.")
            del work[key]
        else:
            raise BadRequest(f"Invalid operation: '{op}'")
        changed.append(key)
    document.clear()
    document.update(work)
    return changed


def _patch_tag(work: dict[str, Any], op: str, tag: str, operation: Mapping[str, Any]) -> None:
    tags: list[str] = work["tags"]
    if op == "add":
        value = operation.get("value", tag)
        if not isinstance(value, str):
            raise BadRequest("Invalid value for a tag: a string is required")
        if value not in tags:
            tags.append(value)
    elif op == "remove":
        if tag not in tags:
            raise Conflict(f"Tag {tag} does not exist.")
        tags.remove(tag)
    else:
        raise BadRequest(f"Invalid operation on a tag: '{op}'")
