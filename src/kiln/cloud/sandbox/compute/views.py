"""Nova's JSON shapes of the model's documents, by microversion.

The model keeps one document per object at its newest shape plus private ``_`` fields;
these functions show it as Nova would at a given microversion (the flavor of a server is
a link below 2.47 and an embedded dict from 2.47, keypair ``type`` from 2.2, server
groups ``policy`` from 2.64, ...). The REST app and the in-process adapter both use them,
so the two give plugins the same records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.cloud.sandbox.compute.base import Version, at_least

_ADMIN_ONLY = (
    "OS-EXT-SRV-ATTR:instance_name",
    "OS-EXT-SRV-ATTR:host",
    "OS-EXT-SRV-ATTR:hypervisor_hostname",
)
# admin-only fields added by 2.3
_ADMIN_2_3 = (
    "OS-EXT-SRV-ATTR:hostname",
    "OS-EXT-SRV-ATTR:user_data",
    "OS-EXT-SRV-ATTR:reservation_id",
)
_FROM_VERSION = {
    "locked": "2.9",
    "description": "2.19",
    "tags": "2.26",
    "locked_reason": "2.73",
}


def links(base: str, collection: str, object_id: str) -> list[dict[str, str]]:
    root = base.rsplit("/v2.1", 1)[0] if "/v2.1" in base else base
    return [
        {"rel": "self", "href": f"{base}/{collection}/{object_id}"},
        {"rel": "bookmark", "href": f"{root}/{collection}/{object_id}"},
    ]


def public(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document without the model's private ``_`` fields."""
    return {k: v for k, v in document.items() if not k.startswith("_")}


def server_view(
    server: Mapping[str, Any],
    version: Version,
    *,
    base: str = "",
    admin: bool = False,
    addresses: Mapping[str, Any] | None = None,
    groups: list[str] | None = None,
) -> dict[str, Any]:
    """``GET /servers/{id}``'s ``server`` at ``version``."""
    view = public(server)
    for field, since in _FROM_VERSION.items():
        if not at_least(version, since):
            view.pop(field, None)
    if not admin:
        hidden: tuple[str, ...] = _ADMIN_ONLY + _ADMIN_2_3
    else:
        hidden = () if at_least(version, "2.3") else _ADMIN_2_3
    for field in hidden:
        view.pop(field, None)
    if view.get("status") != "ERROR" or not view.get("fault"):
        view.pop("fault", None)
    if not view.get("security_groups"):
        view.pop("security_groups", None)
    flavor = server["_flavor"]
    if at_least(version, "2.47"):
        view["flavor"] = {k: v for k, v in flavor.items() if k != "id"}
    else:
        view["flavor"] = {"id": flavor["id"], "links": links(base, "flavors", flavor["id"])[1:]}
    image = server["image"]
    if isinstance(image, Mapping):
        view["image"] = {"id": image["id"], "links": links(base, "images", image["id"])[1:]}
    attached = [r for r in server["_volumes"] if not r["pending"]]
    view["os-extended-volumes:volumes_attached"] = [
        {"id": r["volume_id"], "delete_on_termination": r["delete_on_termination"]}
        if at_least(version, "2.3")
        else {"id": r["volume_id"]}
        for r in attached
    ]
    view["addresses"] = dict(addresses or {})
    if at_least(version, "2.71"):
        view["server_groups"] = list(groups or [])
    if at_least(version, "2.63"):
        view["trusted_image_certificates"] = None
    view["links"] = links(base, "servers", server["id"])
    return view


def created_server_view(server: Mapping[str, Any], *, base: str = "") -> dict[str, Any]:
    """The ``202`` answer of ``POST /servers``."""
    view: dict[str, Any] = {
        "id": server["id"],
        "links": links(base, "servers", server["id"]),
        "OS-DCF:diskConfig": server["OS-DCF:diskConfig"],
        "adminPass": server["_admin_pass"],
    }
    if server.get("security_groups"):
        view["security_groups"] = list(server["security_groups"])
    return view


def flavor_view(flavor: Mapping[str, Any], version: Version, *, base: str = "") -> dict[str, Any]:
    view = public(flavor)
    if not at_least(version, "2.75") and not view["swap"]:
        view["swap"] = ""
    if not at_least(version, "2.55"):
        view.pop("description", None)
    if not at_least(version, "2.61"):
        view.pop("extra_specs", None)
    view["links"] = links(base, "flavors", flavor["id"])
    return view


def flavor_summary(
    flavor: Mapping[str, Any], version: Version, *, base: str = ""
) -> dict[str, Any]:
    """An item of ``GET /flavors`` (not ``/detail``)."""
    view = {
        "id": flavor["id"],
        "name": flavor["name"],
        "links": links(base, "flavors", flavor["id"]),
    }
    if at_least(version, "2.55"):
        view["description"] = flavor.get("description")
    return view


def keypair_view(
    keypair: Mapping[str, Any], version: Version, *, created: bool = False
) -> dict[str, Any]:
    """The keypair of a create answer (``created``) or of ``GET /os-keypairs/{name}``."""
    view: dict[str, Any] = {
        "name": keypair["name"],
        "public_key": keypair["public_key"],
        "fingerprint": keypair["fingerprint"],
        "user_id": keypair["user_id"],
    }
    if at_least(version, "2.2"):
        view["type"] = keypair["type"]
    if created:
        if keypair.get("private_key"):
            view["private_key"] = keypair["private_key"]
        return view
    return {
        **view,
        "id": keypair["_number"],
        "created_at": keypair["created_at"],
        "deleted": False,
        "deleted_at": None,
        "updated_at": None,
    }


def keypair_list_item(keypair: Mapping[str, Any], version: Version) -> dict[str, Any]:
    item = {k: keypair[k] for k in ("name", "public_key", "fingerprint")}
    if at_least(version, "2.2"):
        item["type"] = keypair["type"]
    return {"keypair": item}


def server_group_view(group: Mapping[str, Any], version: Version) -> dict[str, Any]:
    view = {
        "id": group["id"],
        "name": group["name"],
        "members": list(group["members"]),
        "project_id": group["project_id"],
        "user_id": group["user_id"],
    }
    if at_least(version, "2.64"):
        view.update(policy=group["policy"], rules=dict(group["rules"]))
    else:
        view.update(policies=[group["policy"]], metadata={})
    return view


def volume_attachment_view(
    record: Mapping[str, Any], server_id: str, version: Version
) -> dict[str, Any]:
    view: dict[str, Any] = {
        "serverId": server_id,
        "volumeId": record["volume_id"],
        "device": record["device"],
    }
    if not at_least(version, "2.89"):
        view["id"] = record["volume_id"]
    if at_least(version, "2.70"):
        view["tag"] = record.get("tag")
    if at_least(version, "2.79"):
        view["delete_on_termination"] = record["delete_on_termination"]
    if at_least(version, "2.89"):
        view["attachment_id"] = record.get("attachment_id")
        view["bdm_uuid"] = record.get("bdm_uuid")
    return view


def interface_view(interface: Mapping[str, Any], version: Version) -> dict[str, Any]:
    view = dict(interface)
    if not at_least(version, "2.70"):
        view.pop("tag", None)
    return view


def limits_view(absolute: Mapping[str, int], version: Version) -> dict[str, Any]:
    shown = dict(absolute)
    if at_least(version, "2.57"):
        shown.pop("maxPersonality", None)
        shown.pop("maxPersonalitySize", None)
    return {"rate": [], "absolute": shown}
