"""What the OS::Heat types that own a child stack share (no resource type lives here).

:class:`ChildStackResource` drives one child stack through ``ctx.client("stacks")``
(kiln.plugin.nested.NestedStacks), as TemplateResource does in the engine:
create starts the child with the parent's environment and files handed down and
records its id as the physical id, update converges it to the regenerated
template, delete removes it, and each ``check_*_complete`` polls its state.
Subclasses say what the child is (template, parameters, timeout), as data.

:class:`MemberStackResource` adds what ResourceGroup and ResourceChain share:
members named by decimal index, two generated outputs (``refs_map``, and
``attributes``: every stored attribute of every member), and the attributes
``refs``, ``refs_map``, ``attributes``, ``resource.<name>[.<attr>]`` and any other
name ``X`` (the list of attribute ``X`` of the members, read live from the
child, so no attribute has to be known when the child template is built).
Imports: kiln.plugin, kiln.core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.core.errors import raise_all
from kiln.plugin import Resource
from kiln.plugin.nested import CHILD_POLL_SECONDS, NestedStacks, wait_for_child
from kiln.plugin.resource import Cookie

#: the oldest HOT version with the all-attributes form ``get_attr: [member]``
CHILD_VERSION = "2015-10-15"
#: generated outputs of a member stack
REFS_MAP = "refs_map"
ATTRIBUTES = "attributes"
RESOURCE_PREFIX = "resource."


class ChildStackResource(Resource):
    """A resource whose physical object is one child stack of this cloud."""

    owns_child_stack = True

    def child_template(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        """The child's template, as data, for ``properties``."""
        raise NotImplementedError

    def child_parameters(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return {}

    def child_timeout(self, properties: Mapping[str, Any]) -> int | None:
        return None

    def stacks(self) -> NestedStacks:
        stacks: NestedStacks = self.ctx.client("stacks")
        return stacks

    # -- actions ------------------------------------------------------------------------
    def _template(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        raise_all(self.validate(properties))  # a bad definition fails before any call
        return self.child_template(properties)

    def _create(self, properties: Mapping[str, Any]) -> Cookie:
        template = self._template(properties)
        stacks = self.stacks()
        stack_id = stacks.create(
            template=template,
            environment=stacks.parent_environment(),
            files=stacks.parent_files(),
            parameters=self.child_parameters(properties),
            timeout_mins=self.child_timeout(properties),
        )
        self.ctx.set_physical_id(stack_id)
        return {"stack": stack_id, "action": "CREATE"}

    def handle_create(self) -> Cookie:
        return self._create(self.properties)

    def check_create_complete(self, cookie: Cookie) -> bool:
        return wait_for_child(self.stacks(), cookie, "CREATE")

    def handle_update(
        self, new_properties: Mapping[str, Any], changed: Mapping[str, Any]
    ) -> Cookie:
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return self._create(new_properties)
        template = self._template(new_properties)
        stacks = self.stacks()
        stacks.update(
            stack_id,
            template=template,
            environment=stacks.parent_environment(),
            files=stacks.parent_files(),
            parameters=self.child_parameters(new_properties),
        )
        return {"stack": stack_id, "action": "UPDATE"}

    def check_update_complete(self, cookie: Cookie) -> bool:
        # An update of a resource that had no child yet created one.
        action = cookie.get("action", "UPDATE") if isinstance(cookie, Mapping) else "UPDATE"
        return wait_for_child(self.stacks(), cookie, action)

    def handle_delete(self) -> Cookie:
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return None
        self.stacks().delete(stack_id)
        return {"stack": stack_id, "action": "DELETE"}

    def check_delete_complete(self, cookie: Cookie) -> bool:
        return wait_for_child(self.stacks(), cookie, "DELETE")

    def poll_after(self, cookie: Cookie) -> float | None:
        return CHILD_POLL_SECONDS


def member_order(name: str) -> tuple[int, int, str]:
    """Sort key of member names: decimal indexes by value, then any other name."""
    return (0, int(name), "") if name.isascii() and name.isdigit() else (1, 0, name)


def member_template(members: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A child template holding ``members`` (name -> resource definition) and the outputs."""
    return {
        "heat_template_version": CHILD_VERSION,
        "resources": {name: dict(definition) for name, definition in members.items()},
        "outputs": {
            REFS_MAP: {"value": {name: {"get_resource": name} for name in members}},
            # Reading every attribute makes the child store them all on the member rows.
            ATTRIBUTES: {"value": {name: {"get_attr": [name]} for name in members}},
        },
    }


class MemberStackResource(ChildStackResource):
    """A child stack of members ``"0"``, ``"1"``, ...: ResourceGroup and ResourceChain."""

    dynamic_attributes = True

    def members(self, properties: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Member name -> resource definition (type, properties, ...), in member order."""
        raise NotImplementedError

    def child_template(self, properties: Mapping[str, Any]) -> dict[str, Any]:
        return member_template(self.members(properties))

    def refs_map(self) -> dict[str, Any]:
        """Member name -> reference id, in member order ({} before the child exists)."""
        stack_id = self.ctx.physical_id
        if stack_id is None:
            return {}
        return _ordered(self.stacks().outputs(stack_id).get(REFS_MAP))

    def get_attribute(self, name: str) -> Any:
        stack_id = self.ctx.physical_id
        if name == "show" or stack_id is None:
            return None
        stacks = self.stacks()
        if name.startswith(RESOURCE_PREFIX):
            # resource.<member> is its reference; the rest after the next dot is one
            # attribute name (a member's own attribute may hold dots: resource.x).
            member, _, attribute = name[len(RESOURCE_PREFIX) :].partition(".")
            if attribute:
                return stacks.resource_attribute(stack_id, member, attribute)
            found = stacks.resource(stack_id, member)
            return None if found is None else found[0]
        outputs = stacks.outputs(stack_id)
        refs = _ordered(outputs.get(REFS_MAP))
        if name == "refs":
            return list(refs.values())
        if name == "refs_map":
            return refs
        if name == "attributes":
            return _by_attribute(outputs.get(ATTRIBUTES), list(refs))
        stored = outputs.get(ATTRIBUTES)
        if isinstance(stored, Mapping) and all(
            isinstance(stored.get(n), Mapping) and name in stored[n] for n in refs
        ):
            # what each member stored when it finished: no member is asked again
            return [stored[n][name] for n in refs]
        return stacks.resource_attributes(stack_id, list(refs), name)


def _ordered(refs: Any) -> dict[str, Any]:
    """The ``refs_map`` output in member order ({} when the child has none)."""
    if not isinstance(refs, Mapping):
        return {}
    return {name: refs[name] for name in sorted(refs, key=member_order)}


def _by_attribute(stored: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    """{member: {attr: value}} turned into {attr: {member: value}} over every member.

    The engine applies ``get_attr``'s path after the plugin answers, so
    ``[group, attributes, X]`` selects ``X`` here: member name -> value, as Heat.
    """
    per_member = stored if isinstance(stored, Mapping) else {}
    attrs: dict[str, Any] = {n: per_member.get(n) or {} for n in names}
    keys = sorted({key for values in attrs.values() for key in values})
    return {key: {n: attrs[n].get(key) for n in names} for key in keys}
