"""The schemas of OS::Cinder::Volume: its properties, attributes and source rules.

Kept apart from the plugin's lifecycle code (volume.py) so each stays short. Names,
types, defaults, update flags and constraints follow reference resource-types.md
section 3; ``imageRef`` is the hidden old spelling of ``image``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed
from kiln.schema.constraints import CustomConstraint, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType, SupportStatus

_S, _I, _B, _M = PropertyType.STRING, PropertyType.INTEGER, PropertyType.BOOLEAN, PropertyType.MAP

PROPERTIES: Mapping[str, PropertySchema] = {
    "availability_zone": PropertySchema(
        _S, "The availability zone in which the volume will be created."
    ),
    "size": PropertySchema(
        _I,
        "The size of the volume in GB; on update only growing is supported.",
        update_allowed=True,
        constraints=(Range(1, None),),
    ),
    "snapshot_id": PropertySchema(
        _S,
        "The snapshot to create the volume from.",
        constraints=(CustomConstraint(name="cinder.snapshot"),),
    ),
    "backup_id": PropertySchema(
        _S,
        "The backup to create the volume from (an update restores it into the volume).",
        update_allowed=True,
        constraints=(CustomConstraint(name="cinder.backup"),),
    ),
    "name": PropertySchema(_S, "A name for the volume.", update_allowed=True),
    "description": PropertySchema(_S, "A description of the volume.", update_allowed=True),
    "volume_type": PropertySchema(
        _S,
        "The volume type (name or id); a change retypes the volume.",
        update_allowed=True,
        constraints=(CustomConstraint(name="cinder.vtype"),),
    ),
    "metadata": PropertySchema(
        _M, "Key/value metadata of the volume.", default={}, update_allowed=True
    ),
    "imageRef": PropertySchema(
        _S,
        "The image to create the volume from (use image).",
        support_status=SupportStatus("HIDDEN", message="Use property image."),
    ),
    "image": PropertySchema(
        _S,
        "The image (name or id) to create the volume from.",
        constraints=(CustomConstraint(name="glance.image"),),
    ),
    "source_volid": PropertySchema(
        _S,
        "The volume to clone.",
        constraints=(CustomConstraint(name="cinder.volume"),),
    ),
    "scheduler_hints": PropertySchema(
        _M, "Hints for the Cinder scheduler when it places the volume."
    ),
    "read_only": PropertySchema(
        _B,
        "Whether the volume is read-only (set after create; updated while detached).",
        update_allowed=True,
    ),
    "multiattach": PropertySchema(
        _B,
        "Whether the volume may be attached to several servers (use a volume type).",
        default=False,
        support_status=SupportStatus("HIDDEN", message="Use a multiattach volume type."),
    ),
}


def _attr(description: str, kind: PropertyType = _S) -> AttributeSchema:
    return AttributeSchema(description, type=kind)


ATTRIBUTES: Mapping[str, AttributeSchema] = {
    "availability_zone": _attr("The availability zone of the volume."),
    "size": _attr("The size of the volume in GB."),
    "snapshot_id": _attr("The snapshot the volume was created from."),
    "display_name": _attr("The name of the volume."),
    "display_description": _attr("The description of the volume."),
    "volume_type": _attr("The type of the volume."),
    "metadata": _attr("The metadata of the volume, as JSON text."),
    "metadata_values": _attr("The metadata of the volume, as a map.", _M),
    "source_volid": _attr("The volume the volume was cloned from."),
    "status": _attr("The current status of the volume."),
    "created_at": _attr("When the volume was created."),
    "bootable": _attr("Whether the volume can be booted from."),
    "encrypted": _attr("Whether the volume is encrypted."),
    "attachments": _attr(
        "The attachments of the volume, as text (use attachments_list).",
    ),
    "attachments_list": _attr("The attachments of the volume.", PropertyType.LIST),
    "multiattach": _attr("Whether the volume may be attached to several servers.", _B),
}

#: properties naming where the data of a new volume comes from
SOURCES = ("image", "imageRef", "source_volid", "snapshot_id")


def source_errors(properties: Mapping[str, Any]) -> list[KilnError]:
    """The volume's source rules: one image spelling; a size or exactly one sized source."""
    given = [name for name in SOURCES if properties.get(name)]
    if properties.get("image") and properties.get("imageRef"):
        return [
            StackValidationFailed(
                "Cannot define the following properties at the same time: image, imageRef",
                path=("image",),
            )
        ]
    if properties.get("backup_id"):
        return []
    if properties.get("size") is None:
        sized = [name for name in ("source_volid", "snapshot_id") if properties.get(name)]
        if len(sized) != 1:
            return [
                StackValidationFailed(
                    "If neither backup_id nor size is given, exactly one of source_volid and "
                    f"snapshot_id must be; given: {sized}",
                    path=("size",),
                )
            ]
        return []
    if len(given) > 1:
        return [
            StackValidationFailed(
                f"Only one volume source may be given; given: {given}", path=(given[1],)
            )
        ]
    return []
