"""OS::Cinder::EncryptedVolumeType: the encryption spec of a volume type (admin only).

Volumes of an encrypted type are encrypted by the given provider and cipher. The spec
belongs to its volume type, so the physical id is the type's id; every setting but the
type updates in place. Cinder must offer the ``encryption`` extension. Reference:
resource-types.md section 3. Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.block_storage import BlockStorageApi
from kiln.cloud.api.errors import NotFound
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import AllowedValues, CustomConstraint
from kiln.schema.properties import PropertySchema, PropertyType

#: the Cinder API extension this type needs
REQUIRED_EXTENSION = "encryption"
#: the spec's settings, as Cinder names them (all but the volume type)
SETTINGS = ("provider", "cipher", "key_size", "control_location")


@resource_type("OS::Cinder::EncryptedVolumeType")
class CinderEncryptedVolumeType(Resource):
    """Encryption of a volume type; ``get_resource`` gives the volume type id."""

    properties_schema = {
        "provider": PropertySchema(
            PropertyType.STRING,
            "The class that provides encryption support "
            "(e.g. nova.volume.encryptors.luks.LuksEncryptor).",
            required=True,
            update_allowed=True,
        ),
        "control_location": PropertySchema(
            PropertyType.STRING,
            "Where encryption is done: front-end (Nova) or back-end (Cinder).",
            default="front-end",
            update_allowed=True,
            constraints=(AllowedValues(("front-end", "back-end")),),
        ),
        "cipher": PropertySchema(
            PropertyType.STRING,
            "The encryption algorithm or mode.",
            update_allowed=True,
            constraints=(AllowedValues(("aes-xts-plain64", "aes-cbc-essiv")),),
        ),
        "key_size": PropertySchema(
            PropertyType.INTEGER,
            "The size of the encryption key, in bits.",
            update_allowed=True,
        ),
        "volume_type": PropertySchema(
            PropertyType.STRING,
            "The volume type (name or id) to encrypt.",
            required=True,
            constraints=(CustomConstraint(name="cinder.vtype"),),
        ),
    }

    @property
    def _volumes(self) -> BlockStorageApi:
        return self.ctx.client("block_storage")  # type: ignore[no-any-return]

    def _type_id(self) -> str:
        return self._volumes.find_volume_type(self.properties["volume_type"]).id

    def find_existing(self) -> str | None:
        try:
            type_id = self._type_id()
        except NotFound:
            return None
        return type_id if self._volumes.get_type_encryption(type_id) is not None else None

    def handle_create(self) -> Cookie:
        aliases = {ext.alias for ext in self._volumes.list_extensions()}
        if REQUIRED_EXTENSION not in aliases:
            raise ResourceFailure(
                f"{self.ctx.type_name} needs the block storage extension {REQUIRED_EXTENSION}, "
                "which this cloud does not offer"
            )
        body = {k: self.properties.get(k) for k in SETTINGS}
        spec = self._volumes.create_type_encryption(
            self._type_id(), {k: v for k, v in body.items() if v is not None}
        )
        self.ctx.set_physical_id(spec.volume_type_id)
        return None

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        body = {k: v for k, v in changed.items() if k in SETTINGS}
        if body:
            self._volumes.update_type_encryption(str(self.ctx.physical_id), body)
        return None

    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id:
            try:
                self._volumes.delete_type_encryption(self.ctx.physical_id)
            except NotFound:
                pass
        return None

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            spec = self._volumes.get_type_encryption(self.ctx.physical_id)
        except NotFound:
            return None
        return {} if spec is None else spec.show()
