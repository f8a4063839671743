"""OS::Octavia::PoolMember: one backend address and port of a pool.

Every call is made under the pool (``/lbaas/pools/{pool}/members``); the pool's id,
resolved from a name or id at create, is kept in the resource data so that update and
delete do not depend on looking the pool up again. Created, updated and deleted from the
poll (see kiln.resources.octavia._base). ``weight``, ``admin_state_up`` and ``tags``
update in place; anything else replaces the member. The ``kiln-resource`` tag is kept
next to the template's tags. Imports: kiln.plugin, kiln.schema, kiln.cloud.api.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.cloud.api.load_balancer import OctaviaRecord
from kiln.plugin import resource_type
from kiln.resources.octavia._base import OctaviaResource, admin_state_up, without_none
from kiln.schema.constraints import CustomConstraint, Range
from kiln.schema.properties import PropertySchema, PropertyType

_STRING, _INTEGER = PropertyType.STRING, PropertyType.INTEGER
_PORT = Range(1, 65535)
_IP = CustomConstraint(name="ip_addr")


@resource_type("OS::Octavia::PoolMember")
class PoolMember(OctaviaResource):
    """An Octavia pool member; ``get_resource`` gives its id."""

    properties_schema = {
        "pool": PropertySchema(
            _STRING,
            "Name or id of the pool of the member.",
            required=True,
            constraints=(CustomConstraint(name="octavia.pool"),),
        ),
        "address": PropertySchema(
            _STRING, "IP address of the member.", required=True, constraints=(_IP,)
        ),
        "protocol_port": PropertySchema(
            _INTEGER, "Port the member listens on.", required=True, constraints=(_PORT,)
        ),
        "monitor_address": PropertySchema(
            _STRING, "IP address health checks go to (default: address).", constraints=(_IP,)
        ),
        "monitor_port": PropertySchema(
            _INTEGER, "Port health checks go to (default: protocol_port).", constraints=(_PORT,)
        ),
        "weight": PropertySchema(
            _INTEGER,
            "Share of the traffic the member gets relative to the others (0: none).",
            default=1,
            update_allowed=True,
            constraints=(Range(0, 256),),
        ),
        "admin_state_up": admin_state_up(),
        "subnet": PropertySchema(
            _STRING,
            "Name or id of the subnet the member is reached on.",
            constraints=(CustomConstraint(name="neutron.subnet"),),
        ),
        "tags": PropertySchema(PropertyType.LIST, "Tags of the member.", update_allowed=True),
    }

    def pool_id(self) -> str:
        """The member's pool id: resolved once at create, then kept."""
        pool_id = self.ctx.data_get("pool_id")
        if not pool_id:
            pool_id = self.octavia.find_pool(self.properties["pool"]).id
            self.ctx.data_set("pool_id", pool_id)
        return str(pool_id)

    def _tags(self, tags: list[Any] | None) -> list[Any]:
        return [*(tags or []), self.kiln_tag()]

    def fetch(self, object_id: str) -> OctaviaRecord:
        return self.octavia.get_member(self.pool_id(), object_id)

    def send_create(self, body: Mapping[str, Any]) -> OctaviaRecord:
        return self.octavia.create_member(self.pool_id(), body)

    def send_update(self, object_id: str, body: Mapping[str, Any]) -> None:
        self.octavia.update_member(self.pool_id(), object_id, body)

    def send_delete(self, object_id: str) -> None:
        self.octavia.delete_member(self.pool_id(), object_id)

    def candidates(self) -> Sequence[OctaviaRecord]:
        props = self.properties
        return [
            member
            for member in self.octavia.list_members(self.pool_id())
            if member.get("address") == props["address"]
            and member.get("protocol_port") == props["protocol_port"]
        ]

    def create_body(self) -> dict[str, Any]:
        props = self.properties
        self.pool_id()  # resolve and keep the pool before anything is created
        return without_none(
            {
                "address": props["address"],
                "protocol_port": props["protocol_port"],
                "monitor_address": props["monitor_address"],
                "monitor_port": props["monitor_port"],
                "weight": props["weight"],
                "admin_state_up": props["admin_state_up"],
                "subnet_id": self.resolve_subnet(props["subnet"]),
                "tags": self._tags(props["tags"]),
            }
        )

    def update_body(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> dict[str, Any]:
        body = dict(changed)
        if "tags" in body:
            body["tags"] = self._tags(body["tags"])
        return body
