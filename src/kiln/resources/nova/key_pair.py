"""OS::Nova::KeyPair: an SSH (or x509) key pair registered with Nova.

The key pair's id is its name, and ``get_resource`` gives the name. Without
``public_key`` Nova generates the pair (below microversion 2.92) and returns the
private key once; with ``save_private_key`` it is kept (redacted) in the
resource data for attribute ``private_key``. Nothing updates in place: any
change replaces, and because the name is required and must stay unique, the old
pair is deleted before the new one is made (``create_before_delete`` off, which
is what Heat's ``prepare_for_replace`` achieves). ``user`` is passed on as the
user id (Nova checks it). Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
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


@resource_type("OS::Nova::KeyPair")
class KeyPair(Resource):
    """A Nova key pair; ``get_resource`` gives its name."""

    create_before_delete = False  # the name is taken until the old pair is gone

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
