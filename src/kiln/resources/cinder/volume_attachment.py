"""OS::Cinder::VolumeAttachment: a volume attached to a server, through Nova.

Create asks Nova to attach and polls Cinder until the volume is ``in-use``. Any change
detaches the volume and attaches it again with the new server, volume and device.
Delete detaches and waits until neither Cinder nor Nova shows the attachment; an
attachment already gone is deleted. The physical id is Nova's attachment id, which is
the volume id in Nova's API. Reference: resource-types.md section 3.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.block_storage import BlockStorageApi
from kiln.cloud.api.compute import ComputeApi
from kiln.cloud.api.errors import NotFound
from kiln.plugin import Resource, resource_type
from kiln.plugin.resource import Cookie
from kiln.resources.cinder._attachments import (
    Step,
    advance_attach,
    advance_detach,
    attach_step,
    detach_step,
    request_attach,
    request_detach,
)
from kiln.schema.constraints import CustomConstraint
from kiln.schema.properties import PropertySchema, PropertyType


@resource_type("OS::Cinder::VolumeAttachment")
class CinderVolumeAttachment(Resource):
    """A volume attached to a server; ``get_resource`` gives Nova's attachment id."""

    properties_schema = {
        "instance_uuid": PropertySchema(
            PropertyType.STRING,
            "The id of the server to attach the volume to.",
            required=True,
            update_allowed=True,
        ),
        "volume_id": PropertySchema(
            PropertyType.STRING,
            "The volume (id or name) to attach.",
            required=True,
            update_allowed=True,
            constraints=(CustomConstraint(name="cinder.volume"),),
        ),
        "mountpoint": PropertySchema(
            PropertyType.STRING,
            "Where the volume appears in the server (e.g. /dev/vdb); Nova picks one if unset.",
            update_allowed=True,
        ),
    }

    # -- helpers ------------------------------------------------------------------------
    @property
    def _compute(self) -> ComputeApi:
        return self.ctx.client("compute")  # type: ignore[no-any-return]

    @property
    def _volumes(self) -> BlockStorageApi:
        return self.ctx.client("block_storage")  # type: ignore[no-any-return]

    def _attach(self, properties: Mapping[str, Any]) -> Step:
        volume_id = self._volumes.find_volume(properties["volume_id"]).id
        self.ctx.data_set("volume_id", volume_id)
        return attach_step(properties["instance_uuid"], volume_id, properties.get("mountpoint"))

    def _detach(self) -> Step | None:
        if not self.ctx.physical_id:
            return None
        volume_id = self.ctx.data_get("volume_id") or self.ctx.physical_id
        return detach_step(self.properties["instance_uuid"], volume_id)

    def _finish_attach(self, step: Step) -> bool:
        if not advance_attach(self._compute, self._volumes, step):
            return False
        self.ctx.set_physical_id(step["attachment"])
        return True

    # -- create -------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        try:
            volume_id = self._volumes.find_volume(self.properties["volume_id"]).id
            server_id = self.properties["instance_uuid"]
            return self._compute.get_volume_attachment(server_id, volume_id).id
        except NotFound:
            return None

    def handle_create(self) -> Cookie:
        step = self._attach(self.properties)
        request_attach(self._compute, step)
        if "attachment" in step:
            self.ctx.set_physical_id(step["attachment"])
        return step

    def check_create_complete(self, cookie: Cookie) -> bool:
        return self._finish_attach(cookie)

    # -- update: detach, then attach as the new properties say ----------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if not changed:
            return None
        detach = self._detach()
        if detach is not None:
            request_detach(self._compute, detach)
        return {"detach": detach, "attach": self._attach(new_properties)}

    def check_update_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        detach = cookie["detach"]
        if detach is not None:
            if not advance_detach(self._compute, self._volumes, detach):
                return False
            cookie["detach"] = None
        return self._finish_attach(cookie["attach"])

    # -- delete -------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        step = self._detach()
        if step is not None:
            request_detach(self._compute, step)
        return step

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        return advance_detach(self._compute, self._volumes, cookie)

    # -- attributes -----------------------------------------------------------------------
    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            attachment = self._compute.get_volume_attachment(
                self.properties["instance_uuid"], self.ctx.physical_id
            )
        except NotFound:
            return None
        return attachment.show()
