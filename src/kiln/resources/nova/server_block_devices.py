"""Block device mappings of an OS::Nova::Server: checks and the Nova request form.

``block_device_mapping`` (legacy) entries go to Nova nearly as they are; each
``block_device_mapping_v2`` entry becomes one ``source_type``/``destination_type``
pair: a volume, a snapshot or an image (a new volume made from it), a swap disk
or an ephemeral disk. The hidden ``image_id`` is the old spelling of ``image``.
Imports: kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kiln.core.errors import KilnError, StackValidationFailed

BDM, BDM_V2 = "block_device_mapping", "block_device_mapping_v2"
V1_SOURCES = ("volume_id", "snapshot_id")
V2_SOURCES = ("volume_id", "snapshot_id", "image", "swap_size", "ephemeral_size")
BOOT_SOURCES = ("volume_id", "snapshot_id", "image")


def v2_entries(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The v2 entries, unset keys dropped and ``image_id`` spelled ``image``."""
    out = []
    for entry in properties.get(BDM_V2) or []:
        item = {k: v for k, v in entry.items() if v is not None}
        if "image_id" in item:
            item.setdefault("image", item.pop("image_id"))
            item.pop("image_id", None)
        out.append(item)
    return out


def _boot_candidates(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries that boot: a source with boot index 0, else a source with none."""
    sources = [e for e in items if any(e.get(k) for k in BOOT_SOURCES)]
    first = [e for e in sources if e.get("boot_index") == 0]
    return first or [e for e in sources if e.get("boot_index") is None]


def validate_block_devices(properties: Mapping[str, Any]) -> list[KilnError]:
    errors: list[KilnError] = []
    legacy, v2 = properties.get(BDM) or [], v2_entries(properties)
    if legacy and v2:
        errors.append(
            StackValidationFailed(
                f"Cannot define the following properties at the same time: {BDM}, {BDM_V2}.",
                path=(BDM_V2,),
            )
        )
    for index, entry in enumerate(legacy):
        if sum(1 for k in V1_SOURCES if entry.get(k)) != 1:
            errors.append(
                StackValidationFailed(
                    "Exactly one of volume_id or snapshot_id is required for a block device",
                    path=(BDM, index),
                )
            )
    for index, entry in enumerate(v2):
        given = [k for k in V2_SOURCES if entry.get(k)]
        if len(given) != 1:
            errors.append(
                StackValidationFailed(
                    "Exactly one of volume_id, snapshot_id, image, swap_size or "
                    "ephemeral_size is required for a block device",
                    path=(BDM_V2, index),
                )
            )
    if not properties.get("image"):
        if v2:
            boots = [e for e in v2 if e.get("boot_index") == 0]
            if len(boots) > 1:
                errors.append(
                    StackValidationFailed(
                        "Only one block device may have boot_index 0", path=(BDM_V2,)
                    )
                )
            if not _boot_candidates(v2):
                errors.append(_NO_BOOT)
        elif not any(e.get("device_name") == "vda" for e in legacy):
            errors.append(_NO_BOOT)
    return errors


_NO_BOOT = StackValidationFailed(
    "Neither image nor bootable volume is specified for instance", path=("image",)
)


def legacy_mapping(properties: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``block_device_mapping`` request value (legacy form)."""
    return [{k: v for k, v in e.items() if v is not None} for e in properties.get(BDM) or []]


def v2_mapping(
    properties: Mapping[str, Any], image_id: Callable[[str], str], volume_types: bool
) -> list[dict[str, Any]]:
    """The ``block_device_mapping_v2`` request value; ``image_id`` resolves image names."""
    items = v2_entries(properties)
    booting = _boot_candidates(items)[:1] if not properties.get("image") else []
    out = []
    for entry in items:
        device: dict[str, Any] = {}
        if entry.get("volume_id"):
            device.update(source_type="volume", destination_type="volume", uuid=entry["volume_id"])
        elif entry.get("snapshot_id"):
            device.update(
                source_type="snapshot", destination_type="volume", uuid=entry["snapshot_id"]
            )
        elif entry.get("image"):
            device.update(
                source_type="image", destination_type="volume", uuid=image_id(entry["image"])
            )
        elif entry.get("swap_size"):
            device.update(
                source_type="blank",
                destination_type="local",
                guest_format="swap",
                volume_size=entry["swap_size"],
            )
        elif entry.get("ephemeral_size"):
            device.update(
                source_type="blank", destination_type="local", volume_size=entry["ephemeral_size"]
            )
            if entry.get("ephemeral_format"):
                device["guest_format"] = entry["ephemeral_format"]
        for key in ("device_name", "device_type", "disk_bus", "delete_on_termination"):
            if key in entry:
                device[key] = entry[key]
        if "volume_size" in entry and "volume_size" not in device:
            device["volume_size"] = entry["volume_size"]
        if "boot_index" in entry:
            device["boot_index"] = entry["boot_index"]
        elif any(entry is b for b in booting):
            device["boot_index"] = 0  # the one device the server boots from
        if entry.get("volume_type") and volume_types:
            device["volume_type"] = entry["volume_type"]
        out.append(device)
    return out
