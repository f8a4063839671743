"""Keypairs: per user, by name; imported or generated server-side (below 2.92).

Documents are keyed ``<user_id>/<name>`` (names are unique per user, not globally);
``_number`` is the integer ``id`` Nova shows on GET.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import BadRequest, Conflict, Forbidden, NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import keygen
from kiln.cloud.sandbox.compute.base import (
    KEYPAIR,
    MAX_VERSION,
    SERVICE,
    ComputeBase,
    Version,
    at_least,
)

_NAME = re.compile(r"^[A-Za-z0-9 _-]{1,255}$")


class KeypairOps(ComputeBase):
    """Keypair operations of the compute model."""

    def _owner(self, scope: CloudScope, user_id: str | None) -> str:
        """Whose keypairs a call is about: the caller's, another user's only for admin."""
        if user_id and user_id != scope.user_id:
            if not scope.is_admin:
                raise Forbidden(
                    "Policy doesn't allow os_compute_api:os-keypairs to be performed.",
                    kind="forbidden",
                )
            return user_id
        return scope.user_id

    def keypair_doc(self, user_id: str, name: str) -> dict[str, Any]:
        keypair = self.store.get(KEYPAIR, f"{user_id}/{name}")
        if keypair is None:
            raise NotFound(f"Keypair {name} not found for user {user_id}", kind="itemNotFound")
        return keypair

    def create_keypair(
        self, scope: CloudScope, body: Mapping[str, Any], version: Version = MAX_VERSION
    ) -> dict[str, Any]:
        """Import ``public_key`` or generate a pair (the result then has ``private_key``)."""
        self.sim.enter(scope, SERVICE, "create_keypair", body.get("name"))
        name = body.get("name")
        if not isinstance(name, str) or not _NAME.match(name) or not name.strip():
            raise BadRequest(
                "Keypair data is invalid: Keypair name contains unsafe characters"
                if isinstance(name, str) and name
                else "Invalid input for field/attribute name."
            )
        key_type = body.get("type", "ssh") if at_least(version, "2.2") else "ssh"
        if key_type not in ("ssh", "x509"):
            raise BadRequest("Invalid input for field/attribute type.")
        user_id = self._owner(scope, body.get("user_id") if at_least(version, "2.10") else None)
        public_key = body.get("public_key")
        private_key: str | None = None
        if public_key is None:
            if at_least(version, "2.92"):
                raise BadRequest("Invalid input: 'public_key' is a required property.")
            private_key, public_key = keygen.generate(key_type, name)
        if not isinstance(public_key, str):
            raise BadRequest("Invalid input for field/attribute public_key.")
        fingerprint = keygen.validate_public_key(public_key, key_type)
        with self.store.lock:
            owned = self.store.find(KEYPAIR, user_id=user_id)
            if any(k["name"] == name for k in owned):
                raise Conflict(f"Key pair '{name}' already exists.")
            self.check_quota(scope.project_id, "key_pairs", len(owned), 1)
            keypair = {
                "id": f"{user_id}/{name}",
                "name": name,
                "public_key": public_key,
                "fingerprint": fingerprint,
                "type": key_type,
                "user_id": user_id,
                "created_at": self.cloud.timestamp(),
                "_number": 1 + max((k["_number"] for k in self.store.list(KEYPAIR)), default=0),
            }
            self.store.put(KEYPAIR, keypair)
        if private_key is not None:
            return {**keypair, "private_key": private_key}
        return keypair

    def get_keypair(
        self, scope: CloudScope, name: str, user_id: str | None = None
    ) -> dict[str, Any]:
        self.sim.enter(scope, SERVICE, "get_keypair", name)
        with self.store.lock:
            return self.keypair_doc(self._owner(scope, user_id), name)

    def list_keypairs(self, scope: CloudScope, user_id: str | None = None) -> list[dict[str, Any]]:
        self.sim.enter(scope, SERVICE, "list_keypairs")
        with self.store.lock:
            return self.store.find(KEYPAIR, user_id=self._owner(scope, user_id))

    def delete_keypair(self, scope: CloudScope, name: str, user_id: str | None = None) -> None:
        self.sim.enter(scope, SERVICE, "delete_keypair", name)
        with self.store.lock:
            keypair = self.keypair_doc(self._owner(scope, user_id), name)
            self.store.delete(KEYPAIR, keypair["id"])
