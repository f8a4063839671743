"""A recording in-memory cloud and the test-only resource type that drives it.

:class:`FakeCloud` holds "things": objects created with a client token (the
engine passes the resource row id) and a deterministic name. It records every
create call with its token, so a scenario can assert that no token was created
twice, and every object that is still there, so it can assert that none is
unknown to the database. An object becomes ACTIVE (or ERROR when asked to fail)
after a configurable number of status polls; updates and deletes take polls too.

:class:`Thing` (``Test::Cloud::Thing``) is the plugin: ``size``, ``input``,
``polls`` and ``fail`` update in place, a change of ``flavor`` replaces it,
``find_existing`` looks the object up by token. It lives here, not in
kiln.resources: only a scenario's own PluginRegistry knows it.
Imports: anything (test support).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kiln.plugin import Resource, ResourceFailure, resource_type
from kiln.plugin.resource import Cookie
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

THING_TYPE = "Test::Cloud::Thing"
CLIENT = "thing"  # the service name the plugin asks its context for

#: the properties the cloud object carries (the others steer the fake)
CLOUD_PROPERTIES = ("size", "flavor", "input")


class CloudNotFound(Exception):
    """No such object in the fake cloud."""


@dataclass
class CloudObject:
    """One object in the fake cloud."""

    id: str
    token: str
    name: str
    properties: dict[str, Any]
    status: str  # BUILD, ACTIVE, ERROR, UPDATING, DELETING
    polls_left: int
    fail: bool = False
    history: list[str] = field(default_factory=list)


@dataclass
class FakeCloud:
    """In-memory objects, and the log of what was asked of them."""

    objects: dict[str, CloudObject] = field(default_factory=dict)
    deleted: dict[str, CloudObject] = field(default_factory=dict)
    creates: list[tuple[str, str]] = field(default_factory=list)  # (token, object id)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (operation, token or id)
    polls_seen: Counter[str] = field(default_factory=Counter)  # object id -> pending polls
    _next: int = 0

    # -- the API the plugin uses --------------------------------------------------------
    def create(
        self, *, token: str, name: str, properties: Mapping[str, Any], polls: int, fail: bool
    ) -> str:
        self._next += 1
        obj = CloudObject(
            id=f"thing-{self._next:04d}",
            token=token,
            name=name,
            properties=dict(properties),
            status="BUILD",
            polls_left=max(0, polls),
            fail=fail,
            history=["create"],
        )
        self.objects[obj.id] = obj
        self.creates.append((token, obj.id))
        self.calls.append(("create", token))
        return obj.id

    def find_by_token(self, token: str) -> str | None:
        self.calls.append(("find", token))
        for obj in self.objects.values():
            if obj.token == token:
                return obj.id
        return None

    def get(self, obj_id: str) -> CloudObject:
        try:
            return self.objects[obj_id]
        except KeyError:
            raise CloudNotFound(obj_id) from None

    def poll(self, obj_id: str) -> str:
        """The object's status after one more status query."""
        obj = self.get(obj_id)
        self.calls.append(("poll", obj_id))
        if obj.status in ("BUILD", "UPDATING"):
            if obj.polls_left > 0:
                obj.polls_left -= 1
                self.polls_seen[obj_id] += 1
            else:
                obj.status = "ERROR" if obj.fail else "ACTIVE"
        return obj.status

    def update(self, obj_id: str, properties: Mapping[str, Any], *, polls: int, fail: bool) -> None:
        obj = self.get(obj_id)
        self.calls.append(("update", obj_id))
        obj.properties.update(properties)
        obj.status, obj.polls_left, obj.fail = "UPDATING", max(0, polls), fail
        obj.history.append("update")

    def delete(self, obj_id: str, *, polls: int) -> None:
        obj = self.get(obj_id)
        self.calls.append(("delete", obj_id))
        if obj.status != "DELETING":
            obj.status, obj.polls_left = "DELETING", max(0, polls)
            obj.history.append("delete")

    def delete_done(self, obj_id: str) -> bool:
        """True once the object is gone (one status query)."""
        obj = self.objects.get(obj_id)
        self.calls.append(("poll_delete", obj_id))
        if obj is None:
            return True
        if obj.polls_left > 0:
            obj.polls_left -= 1
            self.polls_seen[obj_id] += 1
            return False
        self.deleted[obj_id] = self.objects.pop(obj_id)
        return True

    # -- what tests look at ---------------------------------------------------------------
    def create_counts(self) -> Counter[str]:
        return Counter(token for token, _ in self.creates)

    def live(self) -> list[CloudObject]:
        return sorted(self.objects.values(), key=lambda o: o.id)


def _int(description: str, default: int) -> PropertySchema:
    return PropertySchema(PropertyType.INTEGER, description, default=default, update_allowed=True)


@resource_type(THING_TYPE)
class Thing(Resource):
    """A cloud object in a FakeCloud; looked up by its client token after a crash."""

    properties_schema = {
        "size": _int("Updates in place.", 1),
        "flavor": PropertySchema(PropertyType.STRING, "Replaces on change.", default="small"),
        "input": PropertySchema(
            PropertyType.STRING,
            "Updates in place (carries get_attr values).",
            default="",
            update_allowed=True,
        ),
        "polls": _int("Status polls each action takes before it is done.", 0),
        "fail": PropertySchema(
            PropertyType.BOOLEAN,
            "Create and update end in ERROR.",
            default=False,
            update_allowed=True,
        ),
    }
    attributes_schema = {
        "name": AttributeSchema("The object's name.", type=PropertyType.STRING),
        "size": AttributeSchema("The object's size.", type=PropertyType.INTEGER),
        "flavor": AttributeSchema("The object's flavor.", type=PropertyType.STRING),
        "input": AttributeSchema("The object's input.", type=PropertyType.STRING),
    }

    @property
    def cloud(self) -> FakeCloud:
        client: FakeCloud = self.ctx.client(CLIENT)
        return client

    @property
    def token(self) -> str:
        """The client token: the engine's resource row id.

        ResourceContext does not declare it yet (the engine's context has it),
        so it is read by name.
        """
        token: str = getattr(self.ctx, "resource_uuid")  # noqa: B009
        return token

    def _object_id(self) -> str:
        if self.ctx.physical_id is None:
            raise ResourceFailure(f"Thing {self.ctx.name} has no physical id")
        return self.ctx.physical_id

    def get_attribute(self, name: str) -> Any:
        if name in self.attributes_schema:
            obj = self.cloud.get(self._object_id())
            return obj.name if name == "name" else obj.properties.get(name)
        return super().get_attribute(name)

    def poll_after(self, cookie: Cookie) -> float | None:
        return 1.0

    def _settled(self) -> bool:
        status = self.cloud.poll(self._object_id())
        if status == "ERROR":
            raise ResourceFailure(f"Thing {self.ctx.name} went to ERROR")
        return status == "ACTIVE"

    # -- create ---------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        return self.cloud.find_by_token(self.token)

    def handle_create(self) -> Cookie:
        props = self.properties
        obj_id = self.cloud.create(
            token=self.token,
            name=self.ctx.physical_resource_name(),
            properties={k: props[k] for k in CLOUD_PROPERTIES},
            polls=props["polls"],
            fail=props["fail"],
        )
        self.ctx.set_physical_id(obj_id)
        return None

    def check_create_complete(self, cookie: Cookie) -> bool:
        return self._settled()

    # -- update ---------------------------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        self.cloud.update(
            self._object_id(),
            {k: new_properties[k] for k in CLOUD_PROPERTIES if k != "flavor"},
            polls=new_properties["polls"],
            fail=new_properties["fail"],
        )
        return None

    def check_update_complete(self, cookie: Cookie) -> bool:
        return self._settled()

    # -- delete ---------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        if self.ctx.physical_id is None:
            return None
        try:
            self.cloud.delete(self.ctx.physical_id, polls=int(self.properties.get("polls", 0)))
        except CloudNotFound:
            pass  # already gone: deleting is idempotent
        return None

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if self.ctx.physical_id is None:
            return True
        return self.cloud.delete_done(self.ctx.physical_id)


def make_thing_template(
    resources: Mapping[str, Mapping[str, Any]], outputs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A HOT template of ``Test::Cloud::Thing`` resources given as name -> properties.

    A ``depends_on`` key in the properties mapping becomes the resource's depends_on.
    """
    body: dict[str, Any] = {}
    for name, props in resources.items():
        props = dict(props)
        spec: dict[str, Any] = {"type": props.pop("type", "Test::Cloud::Thing")}
        depends = props.pop("depends_on", None)
        if props:
            spec["properties"] = props
        if depends:
            spec["depends_on"] = list(depends)
        body[name] = spec
    template: dict[str, Any] = {"heat_template_version": "2021-04-16", "resources": body}
    if outputs:
        template["outputs"] = {k: {"value": v} for k, v in outputs.items()}
    return template
