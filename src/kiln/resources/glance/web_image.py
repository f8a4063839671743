"""OS::Glance::WebImage: a Glance image whose data Glance downloads from a URL.

Create registers the image (``POST /v2/images``) and asks Glance to import the data
from ``location`` by ``web-download``, then polls the image to ``active``. The data and
its formats never change in place (a new ``location``, ``disk_format`` or
``container_format`` replaces the image); the rest is metadata, updated by JSON patch
and tag calls. Extra properties are flattened into the image as Glance does.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.image import ImageApi
from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import AllowedValues, CustomConstraint, Range
from kiln.schema.properties import PropertySchema, PropertyType

_S, _I, _B = PropertyType.STRING, PropertyType.INTEGER, PropertyType.BOOLEAN

DISK_FORMATS = ("ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop")
CONTAINER_FORMATS = ("ami", "ari", "aki", "bare", "ova", "ovf", "docker")
VISIBILITIES = ("public", "private", "community", "shared")
#: image statuses on the way to ``active``
IMPORTING = frozenset({"queued", "saving", "importing", "uploading"})
#: properties that are plain image fields, set by JSON patch on update
PATCHED = (
    "name",
    "min_disk",
    "min_ram",
    "protected",
    "visibility",
    "os_distro",
    "os_version",
    "owner",
    "architecture",
    "kernel_id",
    "ramdisk_id",
)
#: properties naming another image, which Glance wants by id
IMAGE_REFERENCES = ("kernel_id", "ramdisk_id")


def _meta(description: str, kind: PropertyType = _S, **kw: Any) -> PropertySchema:
    return PropertySchema(kind, description, update_allowed=True, **kw)


@resource_type("OS::Glance::WebImage")
class GlanceWebImage(Resource):
    """An image downloaded by Glance from a URL; ``get_resource`` gives its id."""

    properties_schema = {
        "name": _meta("Name of the image (default: the physical resource name)."),
        "id": PropertySchema(_S, "The id to give the image (a UUID); Glance picks one if unset."),
        "location": PropertySchema(
            _S, "The URL Glance downloads the image data from.", required=True
        ),
        "disk_format": PropertySchema(
            _S,
            "The format of the disk image.",
            required=True,
            constraints=(AllowedValues(DISK_FORMATS),),
        ),
        "container_format": PropertySchema(
            _S,
            "The format of the container around the disk image.",
            required=True,
            constraints=(AllowedValues(CONTAINER_FORMATS),),
        ),
        "min_disk": _meta(
            "Least disk size in GB a server booted from the image needs.",
            _I,
            default=0,
            constraints=(Range(0, None),),
        ),
        "min_ram": _meta(
            "Least RAM in MB a server booted from the image needs.",
            _I,
            default=0,
            constraints=(Range(0, None),),
        ),
        "protected": _meta("Whether the image is protected from deletion.", _B, default=False),
        "os_distro": _meta("The operating system distribution of the image (e.g. ubuntu)."),
        "os_version": _meta("The operating system version, as the distributor gives it."),
        "owner": _meta("The project owning the image."),
        "visibility": _meta(
            "Who may see and use the image.",
            default="private",
            constraints=(AllowedValues(VISIBILITIES),),
        ),
        "tags": _meta("Tags of the image.", PropertyType.LIST, schema=PropertySchema(_S, "A tag.")),
        "architecture": _meta("The CPU architecture the image needs (e.g. x86_64)."),
        "kernel_id": _meta(
            "The image (name or id) used as kernel when booting an AMI-style image.",
            constraints=(CustomConstraint(name="glance.image"),),
        ),
        "ramdisk_id": _meta(
            "The image (name or id) used as ramdisk when booting an AMI-style image.",
            constraints=(CustomConstraint(name="glance.image"),),
        ),
        "extra_properties": _meta(
            "Arbitrary properties of the image.", PropertyType.MAP, default={}
        ),
    }

    @property
    def _images(self) -> ImageApi:
        return self.ctx.client("image")  # type: ignore[no-any-return]

    def _name(self, properties: Mapping[str, Any]) -> str:
        return properties.get("name") or self.ctx.physical_resource_name()

    def _field(self, key: str, value: Any) -> Any:
        """A property's value as the image field (image names resolved to ids)."""
        if key in IMAGE_REFERENCES and value:
            return self._images.find_image(value).id
        return value

    # -- create -------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        wanted = self.properties.get("id")
        if wanted:
            try:
                return self._images.get_image(wanted).id
            except NotFound:
                return None
        found = self._images.list_images(name=self._name(self.properties))
        return found[0].id if len(found) == 1 else None

    def handle_create(self) -> Cookie:
        props = self.properties
        body: dict[str, Any] = dict(props.get("extra_properties") or {})
        body.update({k: self._field(k, props.get(k)) for k in PATCHED})
        body.update(
            name=self._name(props),
            id=props.get("id"),
            disk_format=props["disk_format"],
            container_format=props["container_format"],
            tags=props.get("tags"),
        )
        image = self._images.create_image({k: v for k, v in body.items() if v is not None})
        self.ctx.set_physical_id(image.id)
        self._images.import_image(image.id, props["location"], "web-download")
        return None

    def check_create_complete(self, cookie: Cookie) -> bool:
        image = self._images.get_image(str(self.ctx.physical_id))
        if image.status == "active":
            return True
        if image.status in IMPORTING:
            return False
        raise ResourceFailure(f"Image {image.id} went to status {image.status}")

    # -- update -------------------------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        image_id = str(self.ctx.physical_id)
        changes = {k: self._field(k, v) for k, v in changed.items() if k in PATCHED}
        if "name" in changes and changes["name"] is None:
            changes["name"] = self.ctx.physical_resource_name()
        if "extra_properties" in changed:
            old = self.properties.get("extra_properties") or {}
            new = changed["extra_properties"] or {}
            changes.update({k: None for k in old if k not in new})
            changes.update({k: v for k, v in new.items() if old.get(k) != v})
        if changes:
            self._images.update_image(image_id, changes)
        if "tags" in changed:
            self._images.set_image_tags(image_id, changed["tags"] or [])
        return None

    # -- delete -------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        if not self.ctx.physical_id:
            return None
        try:
            self._images.delete_image(self.ctx.physical_id)
        except NotFound:
            return None
        return {"image": self.ctx.physical_id}

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        try:
            image = self._images.get_image(cookie["image"])
        except NotFound:
            return True
        return image.status in ("deleted", "pending_delete")

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return self._images.get_image(self.ctx.physical_id).show()
        except NotFound:
            return None
