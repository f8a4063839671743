"""What the resource endpoints show of a stack: its current rows, seen as Heat shows them.

``StackResources`` loads one stack's current rows, its definition (for
descriptions and the dependency graph) and its child stacks in one read
transaction. ``resource_info`` turns a row into the reply the API formats.
Attributes are resolved live, after the transaction, by the resource's own
plugin on a read-only context (as ``get_attr`` would see them now), falling
back to the values stored with the row (``RowState``) when the plugin cannot
answer. Heat's rule for the set: a ``show`` attribute that is a map is the
answer; otherwise every attribute of the type is resolved.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.engine.compiled import CompiledStack, RowState
from kiln.engine.nested import EngineNestedStacks
from kiln.engine.plan import current_rows
from kiln.engine.resource_context import EngineResourceContext
from kiln.plugin.resource import Resource
from kiln.rpc.messages import StackRef
from kiln.rpc.resource_messages import ResourceInfo
from kiln.template.provider import ProviderResource

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from kiln.engine.service import StackService

log = logging.getLogger(__name__)

STATUSES = ("IN_PROGRESS", "COMPLETE", "FAILED")


def stack_ref(stack: sdb.Stack) -> StackRef:
    return StackRef(stack.id, stack.name, stack.project_id)


@dataclass
class StackResources:
    """One stack's current resource rows, by name, with what is needed to show them."""

    stack: sdb.Stack
    rows: dict[str, rdb.Resource]
    compiled: CompiledStack | None
    children: list[sdb.Stack]
    required_by: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, service: StackService, conn: Connection, stack: sdb.Stack) -> StackResources:
        rows = current_rows(rdb.list_resources(conn, stack.id))
        try:
            compiled: CompiledStack | None = service.runner.compiled_for(
                conn, stack, stack.raw_template_id
            )
        except KilnError:  # a stored template that no longer builds: show the rows anyway
            log.warning("template of stack %s does not build", stack.id, exc_info=True)
            compiled = None
        children = sdb.list_children(conn, stack.id, show_deleted=stack.deleted_at is not None)
        loaded = cls(
            stack=stack, rows=dict(sorted(rows.items())), compiled=compiled, children=children
        )
        loaded.required_by = _required_by(loaded.rows, compiled)
        return loaded

    def child_of(self, row: rdb.Resource) -> sdb.Stack | None:
        """The nested stack the resource owns (its physical id), if any."""
        for child in self.children:
            if row.physical_id is not None and child.id == row.physical_id:
                return child
        named = [c for c in self.children if c.parent_resource == row.name]
        return named[-1] if named else None

    def description(self, name: str) -> str:
        definition = self.compiled.definition if self.compiled else None
        found = definition.resources.get(name) if definition else None
        return found.description if found is not None and found.description else ""

    def defines(self, name: str) -> bool:
        return self.compiled is not None and name in self.compiled.definition.resources


def _required_by(
    rows: Mapping[str, rdb.Resource], compiled: CompiledStack | None
) -> dict[str, list[str]]:
    """Names of the resources that depend on each one: the template's graph, plus the
    stored dependencies of rows the template no longer has."""
    found: dict[str, set[str]] = {}
    if compiled is not None:
        for name, definition in compiled.definition.resources.items():
            for required in definition.requires:
                found.setdefault(required, set()).add(name)
    names_by_id = {row.id: name for name, row in rows.items()}
    for name, row in rows.items():
        if compiled is None or name not in compiled.definition.resources:
            for required_id in row.requires:
                if required_id in names_by_id:
                    found.setdefault(names_by_id[required_id], set()).add(name)
    return {name: sorted(users) for name, users in found.items()}


# -- filters ---------------------------------------------------------------------------------
def matches(row: rdb.Resource, filters: Mapping[str, Sequence[str]]) -> bool:
    """R1's filters: exact values (any of them), ``type`` a substring of the type name.

    A status such as ``CREATE_FAILED`` filters the action and the status, a bare
    ``FAILED`` the status only (heat-api.md 2.1.3).
    """
    actions = set(filters.get("action") or ())
    statuses: set[str] = set()
    for value in filters.get("status") or ():
        action, status = split_state(value)
        if action:
            actions.add(action)
        statuses.add(status)
    if actions and row.action not in actions:
        return False
    if statuses and row.status not in statuses:
        return False
    exact = {"name": row.name, "id": row.id, "physical_resource_id": row.physical_id or ""}
    for key, value in exact.items():
        wanted = filters.get(key)
        if wanted and value not in wanted:
            return False
    types = filters.get("type")
    return not types or types[0] in row.type


def split_state(value: str) -> tuple[str, str]:
    """``CREATE_FAILED`` -> (CREATE, FAILED); ``FAILED`` -> ("", FAILED)."""
    for status in STATUSES:
        if value.endswith("_" + status):
            return value[: -len(status) - 1], status
    return "", value


# -- replies --------------------------------------------------------------------------------
@dataclass
class Shown:
    """A row to show, with what its attributes need (data loaded inside the transaction)."""

    view: StackResources
    row: rdb.Resource
    data: dict[str, rdb.ResourceDatum] | None = None
    row_compiled: CompiledStack | None = None


def prepare(service: StackService, conn: Connection, shown: Shown) -> None:
    """Load what resolving ``shown``'s attributes needs, inside the read transaction."""
    shown.data = rdb.get_resource_data(conn, shown.row.id)
    view = shown.view
    if shown.row.raw_template_id == view.stack.raw_template_id or not shown.row.raw_template_id:
        shown.row_compiled = view.compiled
        return
    try:
        shown.row_compiled = service.runner.compiled_for(
            conn, view.stack, shown.row.raw_template_id
        )
    except KilnError:
        shown.row_compiled = view.compiled


def resource_info(
    service: StackService,
    shown: Shown,
    *,
    detail: bool,
    with_attr: Sequence[str] = (),
) -> ResourceInfo:
    view, row = shown.view, shown.row
    child = view.child_of(row)
    return ResourceInfo(
        name=row.name,
        type=row.type,
        physical_id=row.physical_id or "",
        action=row.action,
        status=row.status,
        status_reason=row.status_reason,
        created_at=row.created_at,
        updated_at=row.updated_at or row.created_at,
        required_by=tuple(view.required_by.get(row.name, ())),
        stack=stack_ref(view.stack),
        nested=stack_ref(child) if child is not None else None,
        parent_resource=view.stack.parent_resource,
        description=view.description(row.name) if detail else None,
        attributes=resource_attributes(service, shown, with_attr) if detail else None,
    )


# -- attributes -----------------------------------------------------------------------------
def plugin_class(service: StackService, shown: Shown) -> type[Resource] | None:
    compiled = shown.row_compiled or shown.view.compiled
    if compiled is None:
        return service.deps.registry.plugin(shown.row.type)
    return service.runner._plugin_for(compiled, shown.row.name, shown.row.type)


def _plugin(service: StackService, shown: Shown) -> Resource | None:
    """The row's plugin on a read-only context: nothing it writes is persisted."""
    plugin_cls = plugin_class(service, shown)
    if plugin_cls is None:
        return None
    deps = service.deps
    stack, row = shown.view.stack, shown.row
    clients = {**deps.clients, "stacks": EngineNestedStacks(service, stack, row.name, row.id)}
    ctx = EngineResourceContext(
        name=row.name,
        type_name=row.type,
        stack_name=stack.name,
        stack_id=stack.id,
        project_id=stack.project_id,
        action=row.action,
        properties=row.properties,
        metadata=row.metadata,
        resource_uuid=row.id,
        clock=deps.clock,
        stored_physical_id=row.physical_id,
        stored_data=shown.data or {},
        clients=clients,
        cloud=deps.scoped_cloud(stack),
        name_limit=plugin_cls.physical_name_limit,
        rng=deps.rng,
    )
    return plugin_cls(ctx)


def attribute_names(service: StackService, shown: Shown) -> list[str]:
    """Every attribute the resource's type has, ``show`` included."""
    compiled = shown.row_compiled or shown.view.compiled
    typed = compiled.definition.typed.get(shown.row.name) if compiled else None
    if isinstance(typed, ProviderResource):
        names: Iterable[str] = typed.attribute_names
    else:
        plugin_cls = plugin_class(service, shown)
        names = plugin_cls.attributes_schema if plugin_cls is not None else shown.row.attributes
    return list(dict.fromkeys([*names, "show"]))


def resource_attributes(
    service: StackService, shown: Shown, with_attr: Sequence[str] = ()
) -> dict[str, Any]:
    row = shown.row
    try:
        plugin = _plugin(service, shown)
    except Exception:  # a plugin that cannot even be built: stored values only
        log.warning("no plugin for %s (%s)", row.name, row.type, exc_info=True)
        plugin = None
    compiled = shown.row_compiled or shown.view.compiled
    stored = RowState(compiled.definition, {row.name: row}) if compiled is not None else None

    def resolve(attribute: str) -> Any:
        if plugin is not None:
            try:
                return plugin.get_attribute(attribute)
            except Exception:  # Heat: an attribute that cannot be resolved is null
                log.debug("attribute %s of %s failed", attribute, row.name, exc_info=True)
        if stored is not None and attribute != "show":
            return stored.resource_attribute(row.name, attribute, ())
        return None

    show = resolve("show")
    if isinstance(show, Mapping):
        found = dict(show)
        for name in with_attr:
            if name not in found:
                found[name] = resolve(name)
        return found
    names = [*attribute_names(service, shown), *with_attr]
    return {name: show if name == "show" else resolve(name) for name in dict.fromkeys(names)}
