"""Server metadata (``/servers/{id}/metadata``) and tags (``/servers/{id}/tags``, 2.26)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.scope import CloudScope
from kiln.cloud.sandbox.compute import validation
from kiln.cloud.sandbox.compute.base import SERVER, SERVICE
from kiln.cloud.sandbox.compute.servers import ServerOps


class ServerPartOps(ServerOps):
    """Metadata and tag operations of the compute model."""

    def _save(self, server: dict[str, Any]) -> None:
        server["updated"] = self.cloud.timestamp()
        self.store.put(SERVER, server)

    # -- metadata ------------------------------------------------------------------------
    def get_metadata(self, scope: CloudScope, server_id: str) -> dict[str, str]:
        self.sim.enter(scope, SERVICE, "get_server_metadata", server_id)
        with self.store.lock:
            metadata: dict[str, str] = self.server_doc(scope, server_id)["metadata"]
            return metadata

    def set_metadata(
        self, scope: CloudScope, server_id: str, metadata: Any, *, replace: bool = False
    ) -> dict[str, str]:
        """Merge (POST) or replace (PUT) the server's metadata; the result."""
        self.sim.enter(scope, SERVICE, "set_server_metadata", server_id)
        cleaned = validation.metadata(metadata)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            merged = cleaned if replace else {**server["metadata"], **cleaned}
            server["metadata"] = validation.metadata(merged)
            self._save(server)
            result: dict[str, str] = server["metadata"]
            return result

    def get_metadata_item(self, scope: CloudScope, server_id: str, key: str) -> str:
        metadata = self.get_metadata(scope, server_id)
        if key not in metadata:
            raise NotFound("Metadata item was not found", kind="itemNotFound")
        return metadata[key]

    def set_metadata_item(
        self, scope: CloudScope, server_id: str, key: str, meta: Mapping[str, Any]
    ) -> dict[str, str]:
        """``PUT /metadata/{key}`` with ``{"meta": {key: value}}`` (exactly that key)."""
        if not isinstance(meta, Mapping) or list(meta) != [key]:
            raise validation.invalid("meta", "must hold exactly the key of the URL")
        self.set_metadata(scope, server_id, dict(meta))
        return {key: meta[key]}

    def delete_metadata_item(self, scope: CloudScope, server_id: str, key: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_server_metadata", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            if key not in server["metadata"]:
                raise NotFound("Metadata item was not found", kind="itemNotFound")
            del server["metadata"][key]
            self._save(server)

    # -- tags ----------------------------------------------------------------------------
    def get_tags(self, scope: CloudScope, server_id: str) -> list[str]:
        self.sim.enter(scope, SERVICE, "get_server_tags", server_id)
        with self.store.lock:
            return list(self.server_doc(scope, server_id)["tags"])

    def set_tags(self, scope: CloudScope, server_id: str, tags: Any) -> list[str]:
        self.sim.enter(scope, SERVICE, "set_server_tags", server_id)
        cleaned = validation.tags(tags)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            server["tags"] = cleaned
            self._save(server)
            return list(cleaned)

    def add_tag(self, scope: CloudScope, server_id: str, tag: str) -> bool:
        """Add one tag; False when it was already there."""
        self.sim.enter(scope, SERVICE, "add_server_tag", server_id)
        validation.tag(tag)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            if tag in server["tags"]:
                return False
            if len(server["tags"]) >= validation.MAX_TAGS:
                raise validation.invalid("tags", f"at most {validation.MAX_TAGS} tags")
            server["tags"].append(tag)
            self._save(server)
            return True

    def has_tag(self, scope: CloudScope, server_id: str, tag: str) -> bool:
        return tag in self.get_tags(scope, server_id)

    def delete_tag(self, scope: CloudScope, server_id: str, tag: str) -> None:
        self.sim.enter(scope, SERVICE, "delete_server_tag", server_id)
        with self.store.lock:
            server = self.server_doc(scope, server_id)
            if tag not in server["tags"]:
                raise NotFound(f"Tag {tag} could not be found.", kind="itemNotFound")
            server["tags"].remove(tag)
            self._save(server)
