"""The Neutron v2.0 REST API over the simulated network model (reference section 4).

Mounted under ``/network`` (the prefix is stripped): ``/`` is the public versions
document, everything else lives under ``/v2.0``. Each collection answers the same way:
``POST`` (one object or a bulk list) -> 201, ``GET`` list with equality filters,
repeated values (``?id=a&id=b``), tag filters, ``fields``, ``limit``/``marker``;
``GET``/``PUT``/``DELETE`` by id; ``/tags`` for tagged collections. Routers add the
interface actions. Errors are Neutron bodies ``{"NeutronError": {"type", "message"}}``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import falcon

from kiln.cloud.api.errors import BadRequest
from kiln.cloud.sandbox.cloud import SandboxCloud
from kiln.cloud.sandbox.network.model import COLLECTION_KINDS, NetworkModel
from kiln.cloud.sandbox.rest import App, TokenValidator, create_service_app, json_body, scope_of

_PAGING = ("fields", "limit", "marker", "page_reverse", "sort_key", "sort_dir")


@dataclass(frozen=True)
class Collection:
    """One REST collection: its path, envelope keys and model method suffix."""

    path: str  # ``security-groups``
    singular: str  # ``security_group`` (the body key of one object)
    method: str  # ``security_group`` (``create_security_group``, ...)
    writable: bool = True

    @property
    def plural(self) -> str:
        """The body key of a list (``security_groups``)."""
        return self.path.replace("-", "_")


COLLECTIONS = (
    Collection("networks", "network", "network"),
    Collection("subnets", "subnet", "subnet"),
    Collection("subnetpools", "subnetpool", "subnetpool"),
    Collection("ports", "port", "port"),
    Collection("routers", "router", "router"),
    Collection("floatingips", "floatingip", "floating_ip"),
    Collection("security-groups", "security_group", "security_group"),
    Collection("security-group-rules", "security_group_rule", "security_group_rule"),
    Collection("segments", "segment", "segment", writable=False),
)


def _params(req: falcon.Request) -> dict[str, Any]:
    return dict(req.params)


def _fields(req: falcon.Request) -> list[str]:
    raw = req.params.get("fields")
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    return [f for item in items for f in str(item).split(",") if f]


def _project(doc: dict[str, Any], fields: list[str]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k in fields} if fields else doc


def _last(value: Any) -> Any:
    return value[-1] if isinstance(value, list) else value


class _Resource:
    def __init__(self, model: NetworkModel, collection: Collection) -> None:
        self.model = model
        self.collection = collection

    def call(self, action: str) -> Callable[..., Any]:
        suffix = self.collection.method + ("s" if action == "list" else "")
        return getattr(self.model, f"{action}_{suffix}")  # type: ignore[no-any-return]


class CollectionResource(_Resource):
    """``/v2.0/{collection}``: list and create."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters = {k: v for k, v in _params(req).items() if k not in _PAGING}
        docs = copy.deepcopy(self.call("list")(scope_of(req), **filters))
        body: dict[str, Any] = {}
        marker = _last(req.params.get("marker"))
        if marker:
            ids = [d["id"] for d in docs]
            docs = docs[ids.index(marker) + 1 :] if marker in ids else []
        limit = _last(req.params.get("limit"))
        if limit:
            try:
                count = int(limit)
            except ValueError as exc:
                raise BadRequest(f"Invalid limit {limit!r}.", kind="BadRequest") from exc
            if 0 < count < len(docs):
                docs = docs[:count]
                query = {k: v for k, v in _params(req).items() if k != "marker"}
                query["marker"] = docs[-1]["id"]
                href = f"{req.prefix}{req.path}?{urlencode(query, doseq=True)}"
                body[f"{self.collection.plural}_links"] = [{"rel": "next", "href": href}]
        fields = _fields(req)
        body[self.collection.plural] = [_project(d, fields) for d in docs]
        resp.media = body

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not self.collection.writable:
            raise falcon.HTTPMethodNotAllowed(["GET"])
        scope = scope_of(req)
        data = json_body(req)
        if not isinstance(data, dict):
            raise BadRequest("Malformed request body.", kind="HTTPBadRequest")
        plural, singular = self.collection.plural, self.collection.singular
        if isinstance(data.get(plural), list):
            items = data[plural]
            if plural == "security_group_rules":
                created = self.model.create_security_group_rules(scope, items)
            else:
                created = [self.call("create")(scope, item) for item in items]
            resp.media = {plural: copy.deepcopy(created)}
        elif isinstance(data.get(singular), dict):
            resp.media = {singular: copy.deepcopy(self.call("create")(scope, data[singular]))}
        else:
            raise BadRequest(
                f"Resource body required: '{singular}' or '{plural}'.", kind="HTTPBadRequest"
            )
        resp.status = falcon.HTTP_201


class ItemResource(_Resource):
    """``/v2.0/{collection}/{id}``: show, update, delete."""

    def on_get(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        doc = copy.deepcopy(self.call("get")(scope_of(req), object_id))
        resp.media = {self.collection.singular: _project(doc, _fields(req))}

    def on_put(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        if not self.collection.writable or self.collection.method == "security_group_rule":
            raise falcon.HTTPMethodNotAllowed(["GET", "DELETE"])
        scope = scope_of(req)
        body = json_body(req, self.collection.singular)
        doc = self.call("update")(scope, object_id, body)
        resp.media = {self.collection.singular: copy.deepcopy(doc)}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        if not self.collection.writable:
            raise falcon.HTTPMethodNotAllowed(["GET"])
        self.call("delete")(scope_of(req), object_id)
        resp.status = falcon.HTTP_204


class TagsResource:
    """``/v2.0/{collection}/{id}/tags``."""

    def __init__(self, model: NetworkModel, collection: str) -> None:
        self.model = model
        self.collection = collection

    def on_get(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        resp.media = {"tags": self.model.get_tags(scope_of(req), self.collection, object_id)}

    def on_put(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        data = json_body(req)
        if not isinstance(data, dict) or not isinstance(data.get("tags"), list):
            raise BadRequest("Invalid input: body must be {'tags': [...]}.", kind="BadRequest")
        tags = self.model.set_tags(scope_of(req), self.collection, object_id, data["tags"])
        resp.media = {"tags": tags}

    def on_delete(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        self.model.delete_tags(scope_of(req), self.collection, object_id)
        resp.status = falcon.HTTP_204


class TagResource(TagsResource):
    """``/v2.0/{collection}/{id}/tags/{tag}``."""

    def on_get(  # type: ignore[override]
        self, req: falcon.Request, resp: falcon.Response, object_id: str, tag: str
    ) -> None:
        self.model.has_tag(scope_of(req), self.collection, object_id, tag)
        resp.status = falcon.HTTP_204

    def on_put(  # type: ignore[override]
        self, req: falcon.Request, resp: falcon.Response, object_id: str, tag: str
    ) -> None:
        self.model.add_tag(scope_of(req), self.collection, object_id, tag)
        resp.status = falcon.HTTP_201

    def on_delete(  # type: ignore[override]
        self, req: falcon.Request, resp: falcon.Response, object_id: str, tag: str
    ) -> None:
        self.model.delete_tag(scope_of(req), self.collection, object_id, tag)
        resp.status = falcon.HTTP_204


class RouterInterfaceResource:
    """``PUT /v2.0/routers/{id}/add_router_interface`` and ``remove_router_interface``."""

    def __init__(self, model: NetworkModel, action: str) -> None:
        self.model = model
        self.action = action

    def on_put(self, req: falcon.Request, resp: falcon.Response, object_id: str) -> None:
        body = json_body(req)
        if not isinstance(body, dict):
            raise BadRequest("Malformed request body.", kind="HTTPBadRequest")
        call = getattr(self.model, self.action)
        resp.media = copy.deepcopy(call(scope_of(req), object_id, body))


class ExtensionsResource:
    def __init__(self, model: NetworkModel) -> None:
        self.model = model

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"extensions": self.model.list_extensions(scope_of(req))}


class ExtensionResource(ExtensionsResource):
    def on_get(  # type: ignore[override]
        self, req: falcon.Request, resp: falcon.Response, alias: str
    ) -> None:
        resp.media = {"extension": self.model.get_extension(scope_of(req), alias)}


class VersionsResource:
    """``GET /``: the one API version, linked from the mount prefix."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {
            "versions": [
                {
                    "id": "v2.0",
                    "status": "CURRENT",
                    "links": [{"rel": "self", "href": f"{req.prefix}/v2.0/"}],
                }
            ]
        }


class ResourcesResource:
    """``GET /v2.0``: the collections this API serves."""

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {
            "resources": [
                {
                    "name": c.singular,
                    "collection": c.path,
                    "links": [{"rel": "self", "href": f"{req.prefix}/v2.0/{c.path}"}],
                }
                for c in COLLECTIONS
            ]
        }


def _public(path: str) -> bool:
    return path.rstrip("/") in ("", "/v2.0")


def create_network_app(cloud: SandboxCloud, tokens: TokenValidator) -> App:
    """The Neutron REST app of ``cloud`` (mounted at ``/network``)."""
    model: NetworkModel = cloud.network
    routes: list[tuple[str, object]] = [
        ("/", VersionsResource()),
        ("/v2.0", ResourcesResource()),
        ("/v2.0/extensions", ExtensionsResource(model)),
        ("/v2.0/extensions/{alias}", ExtensionResource(model)),
    ]
    for collection in COLLECTIONS:
        base = f"/v2.0/{collection.path}"
        routes.append((base, CollectionResource(model, collection)))
        routes.append((base + "/{object_id}", ItemResource(model, collection)))
        if collection.path in COLLECTION_KINDS:
            routes.append((base + "/{object_id}/tags", TagsResource(model, collection.path)))
            routes.append((base + "/{object_id}/tags/{tag}", TagResource(model, collection.path)))
    for action in ("add_router_interface", "remove_router_interface"):
        routes.append(
            (f"/v2.0/routers/{{object_id}}/{action}", RouterInterfaceResource(model, action))
        )
    return create_service_app(style="neutron", tokens=tokens, routes=routes, public=_public)
