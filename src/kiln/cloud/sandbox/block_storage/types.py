"""Simulated Cinder volume types and their encryption specs (admin-managed).

Every project sees the public types (``__DEFAULT__`` and ``lvmdriver-1`` are seeded);
creating and deleting types and their encryption needs the admin role. A type's
encryption cannot change while volumes of the type exist. Reference
simulated-cloud-api.md 5.3, resource-types.md ``OS::Cinder::EncryptedVolumeType``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.block_storage.base import (
    DEFAULT_TYPE,
    EXTENSIONS,
    SEED_TYPES,
    BlockStorageBase,
    as_bool,
    seed_type_id,
)

CONTROL_LOCATIONS = ("front-end", "back-end")
_ENCRYPTION_FIELDS = ("provider", "cipher", "key_size", "control_location")


def type_document(
    type_id: str, name: str, description: str | None, extra_specs: dict[str, str], public: bool
) -> dict[str, Any]:
    return {
        "id": type_id,
        "name": name,
        "description": description,
        "is_public": public,
        "os-volume-type-access:is_public": public,
        "extra_specs": extra_specs,
        "qos_specs_id": None,
    }


class TypeOperations(BlockStorageBase):
    """Volume types, type encryption and the extension list."""

    def _seed_types(self) -> None:
        for name, (description, specs) in SEED_TYPES.items():
            type_id = seed_type_id(name)
            if not self.store.exists("volume_type", type_id):
                document = type_document(type_id, name, description, dict(specs), True)
                self.store.put("volume_type", document)

    # -- types ----------------------------------------------------------------------------------
    def list_types(self, scope: CloudScope) -> list[dict[str, Any]]:
        self._enter(scope, "list_volume_types")
        with self.store.lock:
            return [
                t
                for t in self.store.list("volume_type")
                if scope.is_admin or t.get("is_public", True)
            ]

    def get_type(self, scope: CloudScope, type_id: str) -> dict[str, Any]:
        """A type by id (``default``: the default type); NotFound otherwise."""
        self._enter(scope, "get_volume_type", type_id)
        with self.store.lock:
            if type_id == "default":
                return self._type(DEFAULT_TYPE)
            document = self.store.get("volume_type", type_id)
            if document is None or not (scope.is_admin or document.get("is_public", True)):
                raise NotFound(
                    f"Volume type {type_id} could not be found.", kind="VolumeTypeNotFound"
                )
            return document

    def create_type(self, scope: CloudScope, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /types`` (admin)."""
        self._enter(scope, "create_volume_type", body.get("name"))
        self._require_admin(scope)
        name = body.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 255:
            raise BadRequest("Invalid input received: name must be a 1-255 character string.")
        specs = body.get("extra_specs") or {}
        if not isinstance(specs, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in specs.items()
        ):
            raise BadRequest("Invalid input received: extra_specs must map strings to strings.")
        public = as_bool(
            body.get("os-volume-type-access:is_public", body.get("is_public", True)), "is_public"
        )
        with self.store.lock:
            if self.store.find("volume_type", name=name):
                raise Conflict(f"Volume Type {name} already exists.", kind="VolumeTypeExists")
            document = type_document(
                self.cloud.new_id(), name, body.get("description"), dict(specs), public
            )
            return self.store.put("volume_type", document)

    def delete_type(self, scope: CloudScope, type_id: str) -> None:
        """``DELETE /types/{id}`` (admin); 400 while volumes use it or for the default."""
        self._enter(scope, "delete_volume_type", type_id)
        self._require_admin(scope)
        with self.store.lock:
            document = self._type(type_id, scope)
            if document["name"] == DEFAULT_TYPE:
                raise BadRequest("Default volume type can not be deleted.")
            self._check_unused(document["id"], "delete the volume type")
            self.store.delete("encryption", document["id"])
            self.store.delete("volume_type", document["id"])

    def _check_unused(self, type_id: str, what: str) -> None:
        if self.store.find("volume", volume_type_id=type_id):
            raise BadRequest(
                f"Target volume type is still in use: cannot {what} while volumes of "
                "the type exist.",
                kind="VolumeTypeInUse",
            )

    # -- encryption ------------------------------------------------------------------------------
    def get_encryption(self, scope: CloudScope, type_id: str) -> dict[str, Any]:
        """The type's encryption spec, or ``{}`` when it has none."""
        self._enter(scope, "get_type_encryption", type_id)
        with self.store.lock:
            document = self._type(type_id, scope)
            encryption = self._encryption_of(document["id"])
            return {} if encryption is None else _shown(encryption)

    def create_encryption(
        self, scope: CloudScope, type_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``POST /types/{id}/encryption`` (admin)."""
        self._enter(scope, "create_type_encryption", type_id)
        self._require_admin(scope)
        with self.store.lock:
            volume_type = self._type(type_id, scope)
            if self._encryption_of(volume_type["id"]) is not None:
                raise BadRequest(
                    f"Volume type encryption for type {type_id} already exists.",
                    kind="VolumeTypeEncryptionExists",
                )
            self._check_unused(volume_type["id"], "create encryption")
            values = _encryption_values(body, creating=True)
            now = self.now()
            document = {
                "id": volume_type["id"],
                "volume_type_id": volume_type["id"],
                "encryption_id": self.cloud.new_id(),
                "provider": None,
                "cipher": None,
                "key_size": None,
                "control_location": "front-end",
                "created_at": now,
                "updated_at": None,
                "deleted": False,
                "deleted_at": None,
            }
            document.update(values)
            self.store.put("encryption", document)
            return {
                k: document[k] for k in ("volume_type_id", "encryption_id", *_ENCRYPTION_FIELDS)
            }

    def update_encryption(
        self, scope: CloudScope, type_id: str, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        """``PUT /types/{id}/encryption/{x}`` (admin): returns the changed keys."""
        self._enter(scope, "update_type_encryption", type_id)
        self._require_admin(scope)
        with self.store.lock:
            volume_type = self._type(type_id, scope)
            document = self._encryption_of(volume_type["id"])
            if document is None:
                raise NotFound(
                    f"Volume type encryption for type {type_id} does not exist.",
                    kind="VolumeTypeEncryptionNotFound",
                )
            self._check_unused(volume_type["id"], "update encryption")
            values = _encryption_values(body, creating=False)
            document.update(values, updated_at=self.now())
            self.store.put("encryption", document)
            return values

    def delete_encryption(self, scope: CloudScope, type_id: str) -> None:
        """``DELETE /types/{id}/encryption/{x}`` (admin)."""
        self._enter(scope, "delete_type_encryption", type_id)
        self._require_admin(scope)
        with self.store.lock:
            volume_type = self._type(type_id, scope)
            if self._encryption_of(volume_type["id"]) is None:
                raise NotFound(
                    f"Volume type encryption for type {type_id} does not exist.",
                    kind="VolumeTypeEncryptionNotFound",
                )
            self._check_unused(volume_type["id"], "delete encryption")
            self.store.delete("encryption", volume_type["id"])

    # -- service ---------------------------------------------------------------------------------
    def list_extensions(self, scope: CloudScope) -> list[dict[str, Any]]:
        self._enter(scope, "list_extensions")
        return [
            {
                "alias": alias,
                "name": name,
                "description": description,
                "updated": "2013-04-18T00:00:00+00:00",
                "links": [],
            }
            for alias, name, description in EXTENSIONS
        ]


def _shown(encryption: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in encryption.items() if k != "id"}


def _encryption_values(body: Mapping[str, Any], *, creating: bool) -> dict[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest("Invalid input received: encryption must be an object.")
    unknown = set(body) - set(_ENCRYPTION_FIELDS)
    if unknown:
        raise BadRequest(f"Invalid input received: unknown keys {sorted(unknown)}.")
    values = dict(body)
    if creating and not values.get("provider"):
        raise BadRequest("Invalid input received: provider must be specified.")
    if "provider" in values and not isinstance(values["provider"], str):
        raise BadRequest("Invalid input received: provider must be a string.")
    location = values.get("control_location")
    if "control_location" in values and location not in CONTROL_LOCATIONS:
        raise BadRequest(
            f"Invalid input received: control_location must be one of {CONTROL_LOCATIONS}."
        )
    if values.get("key_size") is not None:
        size = values["key_size"]
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise BadRequest("Invalid input received: key_size must be a positive integer.")
    return values
