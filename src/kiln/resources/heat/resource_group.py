"""OS::Heat::ResourceGroup: ``count`` identical members in a child stack.

Members are named ``"0"``, ``"1"``, ... skipping the names in the skip list (resource
data ``name_blacklist``, comma-separated, as Heat): each is ``resource_def`` with
``index_var`` replaced by its name in every property string. ``removal_policies``
add names (or member references, looked up in the child's ``refs_map``) to the
skip list, accumulated across updates unless ``removal_policies_mode`` is
``update``; skipped names are never reused. Scaling is an update of the child in
place: down removes the highest names, up adds the next free ones. The child is
built and driven by kiln.resources.heat._child_stack (attributes included).

``update_policy.batch_create`` creates the members in batches of
``max_batch_size``, waiting ``pause_time`` seconds between batches: the first
batch creates the child, each further one grows it by an update (progress is kept
in the resource's data, so a resumed poll goes on where it was).

``update_policy.rolling_update``: when an update changes some member's
definition, the members move to it in batches (kiln.resources.heat.group_batches
plans them), one child update each, ``pause_time`` seconds apart. The group
records in its data what it last gave each member (``member_defs``), so a batch
keeps the members it does not touch as they are, and the next batch is computed
afresh from that record: a step resumed after a crash sends again the batch it
may have sent (the same child template, so no member changes twice), never the
next one. Without that record (a group created before it existed) an update is
one child update, as without the policy.
Imports: kiln.plugin, kiln.schema, kiln.core.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from kiln.core.errors import raise_all
from kiln.plugin import resource_type
from kiln.plugin.nested import wait_for_child
from kiln.plugin.resource import Cookie
from kiln.resources.heat._child_stack import MemberStackResource, member_template
from kiln.resources.heat.group_batches import (
    Batch,
    member_names,
    next_batch,
    pack_sources,
    unpack_sources,
)
from kiln.schema.constraints import AllowedValues, Length, Range
from kiln.schema.properties import AttributeSchema, PropertySchema, PropertyType

#: resource data holding batch_create progress
BATCH_KEY = "batch_create"
#: resource data holding rolling_update progress
ROLLING_KEY = "rolling_update"
#: resource data: the source of each member's definition as last sent to the child
GIVEN_KEY = "member_defs"

#: resource data key of the skip list (Heat's name)
SKIPLIST_KEY = "name_blacklist"
APPEND, UPDATE = "append", "update"


def replace_index(value: Any, index_var: str, name: str) -> Any:
    """``value`` with ``index_var`` replaced by ``name`` in every string (not in map keys)."""
    if isinstance(value, str):
        return value.replace(index_var, name)
    if isinstance(value, Mapping):
        return {k: replace_index(v, index_var, name) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_index(v, index_var, name) for v in value]
    return value


def member_definition(resource_def: Mapping[str, Any], index_var: str, name: str) -> dict[str, Any]:
    """The definition of member ``name``: properties substituted, null ones dropped."""
    out: dict[str, Any] = {"type": resource_def["type"]}
    properties = resource_def.get("properties") or {}
    if properties:
        out["properties"] = {
            k: replace_index(v, index_var, name) for k, v in properties.items() if v is not None
        }
    if resource_def.get("metadata"):
        out["metadata"] = copy.deepcopy(resource_def["metadata"])  # not substituted, as Heat
    return out


def definition_source(properties: Mapping[str, Any]) -> dict[str, Any]:
    """What the members' definitions are made from (stored, so it outlives the update)."""
    return {"resource_def": properties["resource_def"], "index_var": properties["index_var"]}


def render(source: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Member ``name``'s definition made from ``source``."""
    return member_definition(source["resource_def"], source["index_var"], name)


def resolve_skiplist(
    properties: Mapping[str, Any], current: set[str], refs_map: Mapping[str, Any], created: bool
) -> set[str]:
    """The skip list after applying ``removal_policies`` (reference: ResourceGroup).

    An entry is a name when it is already skipped, is a member, or when there is no
    child yet; otherwise a string entry is a member reference. Others are ignored.
    """
    found = set() if properties.get("removal_policies_mode") == UPDATE else set(current)
    for policy in properties.get("removal_policies") or []:
        for entry in policy.get("resource_list") or []:
            text = str(entry)
            if text in current or not created or text in refs_map:
                found.add(text)
            elif isinstance(entry, str):
                found.update(n for n, ref in refs_map.items() if ref == entry)
    return found


def _batch_schema(rolling: bool) -> dict[str, PropertySchema]:
    schema = {
        "max_batch_size": PropertySchema(
            PropertyType.INTEGER,
            "The most members handled in one batch.",
            default=1,
            constraints=(Range(1),),
        ),
        "pause_time": PropertySchema(
            PropertyType.NUMBER,
            "Seconds to wait between batches.",
            default=0,
            constraints=(Range(0),),
        ),
    }
    if rolling:
        schema = {
            "min_in_service": PropertySchema(
                PropertyType.INTEGER,
                "The fewest members kept in service while batches are replaced.",
                default=0,
                constraints=(Range(0),),
            ),
            **schema,
        }
    return schema


@resource_type("OS::Heat::ResourceGroup")
class ResourceGroup(MemberStackResource):
    """``count`` members made from ``resource_def``, in a child stack."""

    properties_schema = {
        "count": PropertySchema(
            PropertyType.INTEGER,
            "The number of members to create.",
            default=1,
            update_allowed=True,
            constraints=(Range(0),),
        ),
        "index_var": PropertySchema(
            PropertyType.STRING,
            "The variable replaced by the member's index in resource_def property strings.",
            default="%index%",
            constraints=(Length(3),),
        ),
        "resource_def": PropertySchema(
            PropertyType.MAP,
            "The definition of each member.",
            required=True,
            update_allowed=True,
            schema={
                "type": PropertySchema(
                    PropertyType.STRING, "The type of the members.", required=True
                ),
                "properties": PropertySchema(PropertyType.MAP, "The properties of each member."),
                "metadata": PropertySchema(
                    PropertyType.MAP, "The metadata of each member (not substituted)."
                ),
            },
        ),
        "removal_policies": PropertySchema(
            PropertyType.LIST,
            "Members to remove on update; their names are never reused.",
            default=[],
            update_allowed=True,
            schema={
                "resource_list": PropertySchema(
                    PropertyType.LIST,
                    "Member names (or indexes) or member references to remove.",
                    default=[],
                ),
            },
        ),
        "removal_policies_mode": PropertySchema(
            PropertyType.STRING,
            "append adds to the members removed before; update replaces that list.",
            default=APPEND,
            update_allowed=True,
            constraints=(AllowedValues((APPEND, UPDATE)),),
        ),
    }
    attributes_schema = {
        "refs": AttributeSchema(
            "The reference ids of the members, in index order.", type=PropertyType.LIST
        ),
        "refs_map": AttributeSchema("Member name -> reference id.", type=PropertyType.MAP),
        "attributes": AttributeSchema(
            "Member name -> value of an attribute (get_attr: [group, attributes, NAME]).",
            type=PropertyType.MAP,
        ),
        "removed_rsrc_list": AttributeSchema(
            "The names removed by removal_policies (never reused).", type=PropertyType.LIST
        ),
    }
    update_policy_schema = {
        "rolling_update": PropertySchema(
            PropertyType.MAP,
            "Replace members in batches when resource_def changes.",
            schema=_batch_schema(rolling=True),
        ),
        "batch_create": PropertySchema(
            PropertyType.MAP,
            "Create the members in batches.",
            schema=_batch_schema(rolling=False),
        ),
    }

    def skiplist(self) -> list[str]:
        stored = self.ctx.data_get(SKIPLIST_KEY) or ""
        return [name for name in str(stored).split(",") if name]

    def _update_skiplist(self, properties: Mapping[str, Any]) -> None:
        current = set(self.skiplist())
        created = self.ctx.physical_id is not None
        refs = self.refs_map() if created else {}
        found = resolve_skiplist(properties, current, refs, created)
        if found != current:
            self.ctx.data_set(SKIPLIST_KEY, ",".join(sorted(found)))

    def members(self, properties: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        definition, index_var = properties["resource_def"], properties["index_var"]
        return {
            name: member_definition(definition, index_var, name)
            for name in member_names(properties["count"], self.skiplist())
        }

    # -- what the child was given ------------------------------------------------------
    def given(self) -> dict[str, dict[str, Any]] | None:
        """Member -> the source of its definition as last sent to the child (None: unknown)."""
        return unpack_sources(self.ctx.data_get(GIVEN_KEY))

    def _record_given(self, sources: Mapping[str, Mapping[str, Any]]) -> None:
        self.ctx.data_set(GIVEN_KEY, pack_sources(sources))

    def _give_all(self, names: list[str], properties: Mapping[str, Any]) -> None:
        source = definition_source(properties)
        self._record_given({name: source for name in names})

    def _pausing(self, key: str, progress: dict[str, Any], pause: float) -> bool:
        """True while the pause before the next batch lasts; its end is kept in ``progress``."""
        now = self.ctx.now()
        if pause and progress.get("pause_until") is None:
            progress["pause_until"] = (now + timedelta(seconds=pause)).isoformat()
            self.ctx.data_set(key, progress)
            return True
        until = progress.get("pause_until")
        return isinstance(until, str) and now < datetime.fromisoformat(until)

    # -- create (batch_create) ----------------------------------------------------------
    def handle_create(self) -> Cookie:
        self._update_skiplist(self.properties)
        policy = self.ctx.update_policy.get("batch_create")
        members = self.members(self.properties)
        if not isinstance(policy, Mapping) or not members:
            cookie = super().handle_create()
            self._give_all(list(members), self.properties)
            return cookie
        size = max(1, int(policy.get("max_batch_size") or 1))
        first = dict(list(members.items())[:size])
        stacks = self.stacks()
        stack_id = stacks.create(
            template=member_template(first),
            environment=stacks.parent_environment(),
            files=stacks.parent_files(),
            parameters=self.child_parameters(self.properties),
            timeout_mins=self.child_timeout(self.properties),
        )
        self.ctx.set_physical_id(stack_id)
        self._give_all(list(first), self.properties)
        self.ctx.data_set(BATCH_KEY, {"done": len(first), "action": "CREATE", "pause_until": None})
        return {"stack": stack_id, "action": "CREATE", "batched": True}

    def check_create_complete(self, cookie: Cookie) -> bool:
        if not (isinstance(cookie, Mapping) and cookie.get("batched")):
            return super().check_create_complete(cookie)
        progress = dict(self.ctx.data_get(BATCH_KEY) or {})
        if not wait_for_child(self.stacks(), cookie, progress.get("action", "CREATE")):
            return False
        members = self.members(self.properties)
        done = int(progress.get("done", 0))
        if done >= len(members):
            return True
        policy = self.ctx.update_policy.get("batch_create") or {}
        if self._pausing(BATCH_KEY, progress, float(policy.get("pause_time") or 0)):
            return False
        size = max(1, int(policy.get("max_batch_size") or 1))
        upto = min(done + size, len(members))
        grown = dict(list(members.items())[:upto])
        stacks = self.stacks()
        stacks.update(
            cookie["stack"],
            template=member_template(grown),
            environment=stacks.parent_environment(),
            files=stacks.parent_files(),
            parameters=self.child_parameters(self.properties),
        )
        self._give_all(list(grown), self.properties)
        self.ctx.data_set(BATCH_KEY, {"done": upto, "action": "UPDATE", "pause_until": None})
        return False

    def poll_after(self, cookie: Cookie) -> float | None:
        if not isinstance(cookie, Mapping):
            return None
        key = ROLLING_KEY if cookie.get("rolling") else BATCH_KEY if cookie.get("batched") else ""
        progress = self.ctx.data_get(key) if key else None
        if isinstance(progress, Mapping) and progress.get("pause_until"):
            left = datetime.fromisoformat(progress["pause_until"]) - self.ctx.now()
            return max(0.0, left.total_seconds())
        return super().poll_after(cookie)

    # -- update (rolling_update) --------------------------------------------------------
    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        self._update_skiplist(new_properties)
        rolling = self._start_rolling_update(new_properties, "resource_def" in changed)
        if rolling is not None:
            return rolling
        cookie = super().handle_update(new_properties, changed)
        self._give_all(list(self.members(new_properties)), new_properties)
        self.ctx.data_delete(ROLLING_KEY)  # what an interrupted rollout left
        return cookie

    def _start_rolling_update(
        self, properties: Mapping[str, Any], definition_changed: bool
    ) -> Cookie | None:
        """Send the first batch when the policy asks for batches and the definition changed.

        As Heat, a changed ``resource_def`` rolls (new members come in the batches
        too); so do members left on an older definition by an interrupted rollout.
        A resize alone is one child update.
        """
        policy = self.ctx.update_policy.get("rolling_update")
        stack_id, given = self.ctx.physical_id, self.given()
        if not isinstance(policy, Mapping) or stack_id is None or given is None:
            return None
        raise_all(self.validate(properties))
        source = definition_source(properties)
        stale = any(render(old, name) != render(source, name) for name, old in given.items())
        if not (definition_changed or stale):
            return None
        progress: dict[str, Any] = {
            "source": source,
            "count": properties["count"],
            "max_batch_size": max(1, int(policy.get("max_batch_size") or 1)),
            "min_in_service": max(0, int(policy.get("min_in_service") or 0)),
            "pause_time": max(0.0, float(policy.get("pause_time") or 0)),
            "pause_until": None,
        }
        batch = self._next_batch(progress, given)
        if batch is None:
            return None
        self._send_batch(stack_id, batch, progress, given)
        return {"stack": stack_id, "action": "UPDATE", "rolling": True}

    def _next_batch(self, progress: Mapping[str, Any], given: Mapping[str, Any]) -> Batch | None:
        source = progress["source"]
        fresh = [name for name, old in given.items() if render(old, name) == render(source, name)]
        return next_batch(
            list(given),
            fresh,
            int(progress["count"]),
            self.skiplist(),
            int(progress["max_batch_size"]),
            int(progress["min_in_service"]),
        )

    def _send_batch(
        self,
        stack_id: str,
        batch: Batch,
        progress: dict[str, Any],
        given: Mapping[str, Mapping[str, Any]],
    ) -> None:
        """One child update: ``batch.updated`` get the new definition, the others keep theirs."""
        new = progress["source"]
        sources = {
            name: new if name in batch.updated else given.get(name, new) for name in batch.members
        }
        stacks = self.stacks()
        stacks.update(
            stack_id,
            template=member_template({name: render(s, name) for name, s in sources.items()}),
            environment=stacks.parent_environment(),
            files=stacks.parent_files(),
            parameters=self.child_parameters(self.properties),
        )
        self._record_given(sources)
        progress["pause_until"] = None
        self.ctx.data_set(ROLLING_KEY, progress)

    def check_update_complete(self, cookie: Cookie) -> bool:
        if not (isinstance(cookie, Mapping) and cookie.get("rolling")):
            return super().check_update_complete(cookie)
        if not wait_for_child(self.stacks(), cookie, "UPDATE"):
            return False
        stored = self.ctx.data_get(ROLLING_KEY)
        given = self.given()
        if not isinstance(stored, Mapping) or given is None:
            return True
        progress = dict(stored)
        batch = self._next_batch(progress, given)
        if batch is None:
            self.ctx.data_delete(ROLLING_KEY)
            return True
        if self._pausing(ROLLING_KEY, progress, float(progress.get("pause_time") or 0)):
            return False
        self._send_batch(cookie["stack"], batch, progress, given)
        return False

    def get_attribute(self, name: str) -> Any:
        if name == "removed_rsrc_list":
            return self.skiplist()
        return super().get_attribute(name)
