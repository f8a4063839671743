"""OS::Nova::KeyPair: an SSH (or x509) key pair registered with Nova.

The key pair's id is its name, and ``get_resource`` gives the name. Without
``public_key`` Nova generates the pair (below microversion 2.92) and returns the
private key once; with ``save_private_key`` it is kept (redacted) in the
resource data for attribute ``private_key``. Nothing updates in place: any
change replaces, and as a user's pair names are unique, ``prepare_for_replace``
deletes the old pair before the new one is made (reference) and forgets it (the
old resource's delete must not delete the new pair of that name); it keeps the
name and public key, so a rollback that goes back to the old pair imports it
again (``restore_prev_rsrc``, after deleting the replacement's pair of that name).
``user`` is passed on as the user id (Nova checks it).
Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.nova._compute import (
    KEYPAIR_NEEDS_PUBLIC_KEY,
    KEYPAIR_TYPE,
    KEYPAIR_USER,
    compute,
    delete_ignoring_gone,
    require,
    supports,
)
from kiln.schema.constraints import AllowedValues, CustomConstraint, Length
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

T = PropertyType
#: data key: ``{"name", "public_key"}`` of a pair deleted for its replacement (a rollback
#: imports it again)
REPLACED_KEY_PAIR = "replaced_key_pair"


@resource_type("OS::Nova::KeyPair")
class KeyPair(Resource):
    """A Nova key pair; ``get_resource`` gives its name."""

    properties_schema = {
        "name": PropertySchema(
            T.STRING, "Name of the key pair.", required=True, constraints=(Length(1, 255),)
        ),
        "save_private_key": PropertySchema(
            T.BOOLEAN,
            "Keep the generated private key, for attribute private_key.",
            default=False,
        ),
        "public_key": PropertySchema(
            T.STRING, "The public key to import; without it Nova generates the pair."
        ),
        "type": PropertySchema(
            T.STRING, "Type of the key pair.", constraints=(AllowedValues(("ssh", "x509")),)
        ),
        "user": PropertySchema(
            T.STRING,
            "Id of the user owning the key pair (admin).",
            constraints=(CustomConstraint(name="keystone.user"),),
        ),
    }
    attributes_schema = {
        "public_key": AttributeSchema("The public key.", type=T.STRING),
        "private_key": AttributeSchema(
            "The generated private key, when save_private_key is set; else empty.",
            type=T.STRING,
        ),
    }

    def _user_id(self) -> str | None:
        user = self.properties.get("user")
        return str(user) if user else None

    def _check_microversion(self) -> None:
        api = compute(self.ctx)
        if self.properties.get("type"):
            require(api, KEYPAIR_TYPE, "Key pair type")
        if self.properties.get("user"):
            require(api, KEYPAIR_USER, "Key pair user")
        if supports(api, KEYPAIR_NEEDS_PUBLIC_KEY) and not self.properties.get("public_key"):
            raise ResourceFailure(
                "The public_key property is required by the compute API version "
                f"{api.microversion()} (Nova does not generate key pairs any more)"
            )

    def find_existing(self) -> str | None:
        if self.ctx.data_get(REPLACED_KEY_PAIR) is not None:
            return None  # deleted for its replacement: a pair of the name is the new one
        try:
            found = compute(self.ctx).get_keypair(self.properties["name"], self._user_id())
        except NotFound:
            return None
        return found.id

    def handle_create(self) -> Cookie:
        self._check_microversion()
        body: dict[str, Any] = {"name": self.properties["name"]}
        for prop, field in (("public_key", "public_key"), ("type", "type")):
            if self.properties.get(prop):
                body[field] = self.properties[prop]
        if self._user_id():
            body["user_id"] = self._user_id()
        created = compute(self.ctx).create_keypair(body)
        self.ctx.set_physical_id(created.id)
        if created.private_key and self.properties["save_private_key"]:
            self.ctx.data_set("private_key", created.private_key, redact=True)
        return None

    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id:
            api = compute(self.ctx)
            name = self.ctx.physical_id
            delete_ignoring_gone(lambda: api.delete_keypair(name, self._user_id()))
        return None

    # -- replacement (the name is taken until the old pair is gone) ---------------------
    def prepare_for_replace(self) -> Cookie:
        """Keep the name and public key (for a rollback); the check deletes the pair."""
        if not self.ctx.physical_id:
            return None
        if self.ctx.data_get(REPLACED_KEY_PAIR) is None:
            try:
                live = compute(self.ctx).get_keypair(self.ctx.physical_id, self._user_id())
            except NotFound:
                return None
            kept = {"name": self.ctx.physical_id, "public_key": live.public_key}
            self.ctx.data_set(REPLACED_KEY_PAIR, kept)
        return {"name": self.ctx.physical_id}

    def check_prepare_for_replace_complete(self, cookie: Cookie) -> bool:
        """Delete the pair; the resource forgets it, so that deleting the resource
        later does not delete its replacement's pair of the same name."""
        if cookie is not None:
            api = compute(self.ctx)
            delete_ignoring_gone(lambda: api.delete_keypair(cookie["name"], self._user_id()))
            self.ctx.set_physical_id(None)
        return True

    def restore_prev_rsrc(self, replacement_id: str | None) -> Cookie:
        if self.ctx.data_get(REPLACED_KEY_PAIR) is None:
            return None
        return {"replacement": replacement_id}

    def check_restore_prev_rsrc_complete(self, cookie: Cookie) -> bool:
        """Import the kept public key under the old name again; a pair of that name
        the replacement made goes first."""
        if cookie is None:
            return True
        kept = self.ctx.data_get(REPLACED_KEY_PAIR)
        api, name, user = compute(self.ctx), str(kept["name"]), self._user_id()
        try:
            live = api.get_keypair(name, user)
        except NotFound:
            live = None
        if live is not None and live.public_key != kept["public_key"]:
            if cookie["replacement"] != name:
                raise ResourceFailure(f"Key pair {name} was taken by another key meanwhile")
            delete_ignoring_gone(lambda: api.delete_keypair(name, user))
            live = None
        if live is None:
            body: dict[str, Any] = {"name": name, "public_key": kept["public_key"]}
            if self.properties.get("type"):
                body["type"] = self.properties["type"]
            if user:
                body["user_id"] = user
            api.create_keypair(body)
        self.ctx.set_physical_id(name)
        self.ctx.data_delete(REPLACED_KEY_PAIR)
        return True

    def handle_check(self) -> Cookie:
        if not self.ctx.physical_id:
            raise ResourceFailure(f"Key pair {self.ctx.name} was never created")
        compute(self.ctx).get_keypair(self.ctx.physical_id, self._user_id())
        return None

    def get_attribute(self, name: str) -> Any:
        if name == "public_key":
            if self.properties.get("public_key"):
                return self.properties["public_key"]
            if not self.ctx.physical_id:
                return None
            return compute(self.ctx).get_keypair(self.ctx.physical_id, self._user_id()).public_key
        if name == "private_key":
            return self.ctx.data_get("private_key", "")
        return super().get_attribute(name)

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        return compute(self.ctx).get_keypair(self.ctx.physical_id, self._user_id()).show()
