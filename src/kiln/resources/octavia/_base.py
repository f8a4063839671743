"""The lifecycle every OS::Octavia::* plugin shares (reference resource-types 5, common part).

Octavia objects move PENDING_* -> ACTIVE (or ERROR) in ``provisioning_status``. While
anything in a load balancer's tree is pending, Octavia refuses to change that tree with a
409 "Load Balancer ... is immutable". So, as Heat does, the plugins send their create
(children only), update and delete calls from inside the poll, and such a conflict means
"not yet: try again on the next poll". A delete is sent once, then polled until the object
is gone (404) or DELETED. Attributes are read from a fresh GET of the object.

Every object a plugin creates carries the tag ``kiln-resource=<physical name>``, by which
:meth:`OctaviaResource.find_existing` recognises it after a crash between the request and
the record of its id. No resource type lives here.
Imports: kiln.plugin, kiln.schema, kiln.core, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from kiln.cloud.api.errors import Conflict, MultipleMatches, NotFound
from kiln.cloud.api.load_balancer import LoadBalancerApi, OctaviaRecord
from kiln.cloud.api.network import NetworkApi
from kiln.core.errors import raise_all
from kiln.plugin import Resource, ResourceFailure
from kiln.plugin.resource import Cookie
from kiln.schema.constraints import AllowedValues
from kiln.schema.properties import PropertySchema, PropertyType

TAG_PREFIX = "kiln-resource="
ACTIVE, DELETED, ERROR = "ACTIVE", "DELETED", "ERROR"
#: protocols the listener and pool properties allow (reference tables)
PROTOCOLS = AllowedValues(("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "PROXY", "UDP"))


def is_pending_conflict(error: Exception) -> bool:
    """Octavia's 409 for a load balancer tree that is still PENDING_* (worth retrying)."""
    return (
        isinstance(error, Conflict)
        and not isinstance(error, MultipleMatches)
        and "immutable" in error.message.lower()
    )


def without_none(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body without unset values (Octavia applies its own defaults to those)."""
    return {key: value for key, value in body.items() if value is not None}


def admin_state_up() -> PropertySchema:
    return PropertySchema(
        PropertyType.BOOLEAN,
        "The administrative state: true to enable, false to disable.",
        default=True,
        update_allowed=True,
    )


def description() -> PropertySchema:
    return PropertySchema(
        PropertyType.STRING, "A description of the object.", default="", update_allowed=True
    )


def object_name() -> PropertySchema:
    return PropertySchema(
        PropertyType.STRING,
        "The name of the object (default: the physical resource name).",
        update_allowed=True,
    )


class OctaviaResource(Resource):
    """Base of the Octavia plugins: per-type calls, and the shared start/poll logic."""

    #: the create call is made in handle_create (the load balancer: no parent to wait for)
    create_at_once: ClassVar[bool] = False

    @property
    def octavia(self) -> LoadBalancerApi:
        client: LoadBalancerApi = self.ctx.client("load_balancer")
        return client

    # -- per-type calls ----------------------------------------------------------------
    def fetch(self, object_id: str) -> OctaviaRecord:
        """GET the object."""
        raise NotImplementedError

    def send_create(self, body: Mapping[str, Any]) -> OctaviaRecord:
        raise NotImplementedError

    def send_update(self, object_id: str, body: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def send_delete(self, object_id: str) -> None:
        raise NotImplementedError

    def create_body(self) -> dict[str, Any]:
        """The create body, names already resolved to ids."""
        raise NotImplementedError

    def update_body(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The PUT body for the changed properties (default: as they are)."""
        return dict(changed)

    def candidates(self) -> Sequence[OctaviaRecord]:
        """Objects that may be this resource's after a crash (they are checked by tag)."""
        raise NotImplementedError

    # -- shared helpers ------------------------------------------------------------------
    def name_value(self, properties: Mapping[str, Any]) -> str:
        """The ``name`` property, else the physical resource name."""
        name = properties.get("name")
        return name if name else self.ctx.physical_resource_name()

    def kiln_tag(self) -> str:
        return TAG_PREFIX + self.ctx.physical_resource_name()

    def resolve_subnet(self, name_or_id: str | None) -> str | None:
        """A Neutron subnet name or id, as an id."""
        if name_or_id is None:
            return None
        network: NetworkApi = self.ctx.client("network")
        return network.find_subnet(name_or_id).id

    def _reached(self, record: OctaviaRecord, expected: str = ACTIVE) -> bool:
        status = record.provisioning_status
        if status == ERROR:
            raise ResourceFailure(f'Went to status {status} due to "Unknown"')
        return status == expected

    def _attempt(self, call: Callable[[], Any]) -> bool:
        """Make a mutating call; False when the load balancer tree is still pending."""
        try:
            call()
        except Conflict as error:
            if is_pending_conflict(error):
                return False
            raise
        return True

    # -- create --------------------------------------------------------------------------
    def find_existing(self) -> str | None:
        tag = self.kiln_tag()
        try:
            found = self.candidates()
        except NotFound:  # the parent is gone, so is anything created under it
            return None
        for record in found:
            if tag in (record.get("tags") or []):
                return record.id
        return None

    def _create_now(self, body: Mapping[str, Any]) -> None:
        self.ctx.set_physical_id(self.send_create(body).id)

    def handle_create(self) -> Cookie:
        raise_all(self.validate(self.properties))
        body = self.create_body()
        if self.create_at_once:
            self._create_now(body)
        return {"body": body}

    def check_create_complete(self, cookie: Cookie) -> bool:
        if not self.ctx.physical_id and not self._attempt(lambda: self._create_now(cookie["body"])):
            return False
        return self._reached(self.fetch(self._id()))

    # -- update --------------------------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        if not changed:
            return None
        return {"body": self.update_body(new_properties, changed), "sent": False}

    def check_update_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        if not cookie["sent"]:
            if not self._attempt(lambda: self.send_update(self._id(), cookie["body"])):
                return False
            cookie["sent"] = True  # the engine keeps the cookie between polls
        return self._reached(self.fetch(self._id()))

    # -- delete --------------------------------------------------------------------------
    def handle_delete(self) -> Cookie:
        return {"sent": False} if self.ctx.physical_id else None

    def check_delete_complete(self, cookie: Cookie) -> bool:
        if cookie is None:
            return True
        object_id = self._id()
        if not cookie["sent"]:
            try:
                self.send_delete(object_id)
            except NotFound:
                return True
            except Conflict as error:
                if self._gone(object_id):
                    return True
                if is_pending_conflict(error):
                    return False
                raise
            cookie["sent"] = True
        return self._gone(object_id)

    def _gone(self, object_id: str) -> bool:
        try:
            record = self.fetch(object_id)
        except NotFound:
            return True
        return self._reached(record, DELETED)

    # -- attributes ----------------------------------------------------------------------
    def _id(self) -> str:
        object_id = self.ctx.physical_id
        if not object_id:
            raise ResourceFailure(f"{self.ctx.name} has no physical id")
        return object_id

    def get_attribute(self, name: str) -> Any:
        if name != "show" and name in self.attributes_schema:
            if not self.ctx.physical_id:
                return None
            return self.fetch(self.ctx.physical_id).get(name)
        return super().get_attribute(name)

    def _show(self) -> Any:
        if not self.ctx.physical_id:
            return None
        try:
            return self.fetch(self.ctx.physical_id).show()
        except NotFound:
            return None
