"""The ``POST /servers`` request of an OS::Nova::Server, and the checks it needs the cloud for.

Names become ids first (flavor through Nova, images through Glance, networks,
subnets and ports through Neutron); the image must be active and fit the
flavor; features are gated on the compute microversion; metadata must fit
Nova's ``maxServerMeta``. Then the request is built: NICs (with the ports the
plugin makes, see server_networks), user data (server_user_data, base64),
block devices, and Kiln's own tag so the server can be found after a crash.
Imports: kiln.core, kiln.plugin, kiln.cloud.api and the sibling modules.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, cast

from kiln.cloud.api.compute import ComputeApi
from kiln.cloud.api.image import ImageApi
from kiln.core.errors import raise_all
from kiln.plugin import ResourceFailure
from kiln.plugin.context import ResourceContext
from kiln.plugin.software_configs import software_configs
from kiln.resources.nova import _compute as gates
from kiln.resources.nova._compute import compute, require, supports
from kiln.resources.nova.server_block_devices import legacy_mapping, v2_entries, v2_mapping
from kiln.resources.nova.server_networks import ServerNetworks, entries
from kiln.resources.nova.server_tags import server_tags
from kiln.resources.nova.server_transport import write_agent_metadata
from kiln.resources.nova.server_updates import server_metadata
from kiln.resources.nova.server_user_data import build_user_data, encoded
from kiln.resources.nova.server_validation import validate_server

# Nova reads the server's tags from the create request from this microversion on.
CREATE_WITH_TAGS = (2, 52)


def image_client(ctx: ResourceContext) -> ImageApi:
    return cast("ImageApi", ctx.client("image"))


def server_name(ctx: ResourceContext, properties: Mapping[str, Any]) -> str:
    return properties.get("name") or ctx.physical_resource_name()


def user_data_text(ctx: ResourceContext, properties: Mapping[str, Any]) -> str:
    """The user data as Nova takes it (base64), for create and rebuild."""
    text = build_user_data(properties, ctx.metadata, software_configs(ctx), ctx.random)
    return encoded(text) if text else ""


def _check_features(ctx: ResourceContext, api: ComputeApi, props: Mapping[str, Any]) -> None:
    if props.get("tags"):
        require(api, gates.SERVER_TAGS, "Server tags")
    if any(e.get("tag") for e in entries(props.get("networks"))):
        require(api, gates.NIC_TAG, "Network interface tags")
    if any(e.get("volume_type") for e in v2_entries(props)):
        require(api, gates.BDM_VOLUME_TYPE, "Block device volume_type")
    if props.get("personality") and supports(api, gates.NO_PERSONALITY):
        raise ResourceFailure(
            f"Cannot use the personality property: the compute API version "
            f"{api.microversion()} does not support it (use user_data or a config drive)"
        )
    metadata = ctx.metadata
    if (
        props["user_data_format"] == "SOFTWARE_CONFIG"
        and isinstance(metadata, Mapping)
        and "deployments" in metadata
    ):
        raise ResourceFailure(
            "deployments key not allowed in resource metadata with user_data_format SOFTWARE_CONFIG"
        )
    if not props.get("metadata"):
        return  # nothing to count: save the limits call
    limit = int(api.get_limits().get("maxServerMeta", -1))
    if limit >= 0 and len(props["metadata"]) > limit:
        raise ResourceFailure(
            f"Instance metadata must not contain more than {limit} entries. This is the "
            "maximum number allowed by your service provider"
        )


def _image_id(ctx: ResourceContext, api: ComputeApi, props: Mapping[str, Any], flavor: Any) -> str:
    """The boot image's id, checked to be active and to fit the flavor."""
    image = image_client(ctx).find_image(props["image"])
    if image.status != "active":
        raise ResourceFailure(f"Image status is required to be active not {image.status}.")
    if flavor.ram < image.min_ram:
        raise ResourceFailure(
            f"Image {props['image']} requires {image.min_ram} minimum ram. Flavor "
            f"{props['flavor']} has only {flavor.ram}."
        )
    if flavor.disk and flavor.disk < image.min_disk:
        raise ResourceFailure(
            f"Image {props['image']} requires {image.min_disk} GB minimum disk space. Flavor "
            f"{props['flavor']} has only {flavor.disk} GB."
        )
    return image.id


def create_request(ctx: ResourceContext) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Check the properties, make the ports, and return (server body, scheduler hints)."""
    props = ctx.properties
    raise_all(validate_server(props))
    api = compute(ctx)
    _check_features(ctx, api, props)
    write_agent_metadata(ctx, props)  # before the user data, which carries the metadata
    flavor = api.find_flavor(props["flavor"])
    body: dict[str, Any] = {"name": server_name(ctx, props), "flavorRef": flavor.id}
    body["imageRef"] = _image_id(ctx, api, props, flavor) if props.get("image") else ""
    groups = list(props.get("security_groups") or [])
    body["networks"] = ServerNetworks(ctx).nics(
        props.get("networks"), groups, tags=supports(api, gates.NIC_TAG)
    )
    if groups:
        body["security_groups"] = [{"name": g} for g in groups]
    user_data = user_data_text(ctx, props)
    if user_data:
        body["user_data"] = user_data
    if props.get("metadata"):
        body["metadata"] = server_metadata(props["metadata"])
    if props.get("block_device_mapping"):
        body["block_device_mapping"] = legacy_mapping(props)
    if props.get("block_device_mapping_v2"):
        body["block_device_mapping_v2"] = v2_mapping(
            props,
            lambda name: image_client(ctx).find_image(name).id,
            supports(api, gates.BDM_VOLUME_TYPE),
        )
    optional = {
        "key_name": "key_name",
        "availability_zone": "availability_zone",
        "config_drive": "config_drive",
        "diskConfig": "OS-DCF:diskConfig",
        "admin_pass": "adminPass",
        "reservation_id": "reservation_id",
    }
    for prop, field in optional.items():
        if props.get(prop) is not None and props.get(prop) != "":
            body[field] = props[prop]
    if props.get("personality"):
        body["personality"] = [
            {"path": path, "contents": base64.b64encode(str(text).encode()).decode()}
            for path, text in props["personality"].items()
        ]
    if supports(api, CREATE_WITH_TAGS):
        body["tags"] = server_tags(ctx, props.get("tags"))
    hints = dict(props["scheduler_hints"]) if props.get("scheduler_hints") else None
    return body, hints
