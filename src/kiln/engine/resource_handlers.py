"""The engine's side of the resource and event reads (kiln.rpc.resource_messages).

Every call names the stack as its URL does; ``stack_in_scope`` answers "not
found" for another project's stack and for a name that is not the stored name
of the id (heat-api.md 1.5). Lists and shows of resources and events work on
soft-deleted stacks, as in Heat; the rest needs a live stack. ``FindResource``
resolves what R4/R5 name (R5 also by physical id) and refuses a signal the
resource cannot take, before the API sends the action itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kiln.core.errors import KilnError, NotSupported, UserError
from kiln.db import engine as dbe
from kiln.db import events as evdb
from kiln.db import stacks as sdb
from kiln.db.errors import NotFound
from kiln.engine.resource_reads import (
    Shown,
    StackResources,
    matches,
    plugin_class,
    prepare,
    resource_info,
    stack_ref,
)
from kiln.engine.service import StackService
from kiln.engine.signals import takes_signals
from kiln.rpc import messages as m
from kiln.rpc import resource_messages as rm

#: E1's filter names -> event columns
EVENT_FILTERS = {
    "resource_action": "action",
    "resource_status": "status",
    "resource_name": "resource_name",
    "resource_type": "resource_type",
}
#: resource actions during which a signal is refused (Heat's no_signal_actions)
NO_SIGNAL_ACTIONS = ("SUSPEND", "DELETE")


class ResourceNotFound(KilnError):
    http_status = 404

    def __init__(self, resource_name: str, stack_name: str) -> None:
        super().__init__(
            f"The Resource ({resource_name}) could not be found in Stack {stack_name}."
        )


class ResourceNotAvailable(KilnError):
    """The resource is in the template but has no row yet."""

    http_status = 404

    def __init__(self, resource_name: str) -> None:
        super().__init__(f"The Resource ({resource_name}) is not available.")


class ResourceActionNotSupported(UserError):
    def __init__(self, action: str) -> None:
        super().__init__(f"{action} is not supported for resource.")


class PhysicalResourceIDAmbiguity(UserError):
    def __init__(self, physical_id: str) -> None:
        super().__init__(
            f"Multiple physical resources were found with physical ID ({physical_id})."
        )


def stack_in_scope(
    conn: Any, ctx: m.Context, stack_name: str, stack_id: str, *, show_deleted: bool
) -> sdb.Stack:
    """The stack ``{stack_name}/{stack_id}`` names, if the caller may see it.

    Another project's stack, a soft-deleted one (unless ``show_deleted``) and a
    name that is not the stack's stored name are all "The Stack (name) could
    not be found." (the name as the URL gave it).
    """
    try:
        stack = sdb.get_stack(conn, stack_id, show_deleted=show_deleted)
    except NotFound:
        raise NotFound("Stack", stack_name) from None
    if stack.name != stack_name or not may_see(conn, ctx, stack):
        raise NotFound("Stack", stack_name)
    return stack


def may_see(conn: Any, ctx: m.Context, stack: sdb.Stack) -> bool:
    """Whether the caller may reach the stack: its project, an admin, or one of the
    stack's in-instance users (scoped to its stack-domain project; the policy then
    lets them read metadata and signal, nothing more)."""
    if stack.project_id == ctx.project_id or ctx.is_admin:
        return True
    return bool(ctx.project_id) and sdb.stack_user_project_of(conn, stack) == ctx.project_id


class ResourceHandlers:
    """Handlers for kiln.rpc.resource_messages, over one StackService."""

    def __init__(self, service: StackService) -> None:
        self.service = service

    def table(self) -> dict[type, Callable[[Any], Any]]:
        return {
            rm.ListStackResources: self.list_resources,
            rm.ShowResource: self.show_resource,
            rm.GetResourceMetadata: self.metadata,
            rm.FindResource: self.find_resource,
            rm.ListStackEvents: self.list_events,
            rm.ShowEvent: self.show_event,
        }

    @property
    def _db(self) -> Any:
        return self.service.deps.db

    # -- resources --------------------------------------------------------------------------
    def list_resources(self, msg: rm.ListStackResources) -> rm.ResourceInfoList:
        with dbe.read(self._db) as conn:
            stack = stack_in_scope(
                conn, msg.context, msg.stack_name, msg.stack_id, show_deleted=True
            )
            shown = list(self._walk(conn, stack, msg.filters, max(msg.nested_depth, 0)))
            if msg.with_detail:
                for item in shown:
                    prepare(self.service, conn, item)
        return rm.ResourceInfoList(
            tuple(resource_info(self.service, s, detail=msg.with_detail) for s in shown)
        )

    def _walk(
        self, conn: Any, stack: sdb.Stack, filters: Mapping[str, Any], depth: int
    ) -> Iterator[Shown]:
        """The stack's matching rows, then (depth-first, per resource) its nested stacks'."""
        view = StackResources.load(self.service, conn, stack)
        for row in view.rows.values():
            if matches(row, filters):
                yield Shown(view, row)
        if depth <= 0:
            return
        for row in view.rows.values():
            child = view.child_of(row)
            if child is not None:
                yield from self._walk(conn, child, filters, depth - 1)

    def _one(self, conn: Any, msg: rm.ShowResource | rm.GetResourceMetadata) -> Shown:
        """The named resource of a live stack (R2, R3)."""
        stack = stack_in_scope(conn, msg.context, msg.stack_name, msg.stack_id, show_deleted=False)
        view = StackResources.load(self.service, conn, stack)
        row = view.rows.get(msg.resource_name)
        if row is None:
            raise ResourceNotFound(msg.resource_name, stack.name)
        return Shown(view, row)

    def show_resource(self, msg: rm.ShowResource) -> rm.ResourceInfo:
        with dbe.read(self._db) as conn:
            shown = self._one(conn, msg)
            prepare(self.service, conn, shown)
        return resource_info(self.service, shown, detail=True, with_attr=tuple(msg.with_attr))

    def metadata(self, msg: rm.GetResourceMetadata) -> rm.ResourceMetadata:
        with dbe.read(self._db) as conn:
            shown = self._one(conn, msg)
        found = shown.row.metadata
        return rm.ResourceMetadata(dict(found) if isinstance(found, Mapping) else {})

    def find_resource(self, msg: rm.FindResource) -> rm.ResourceName:
        with dbe.read(self._db) as conn:
            stack = stack_in_scope(
                conn, msg.context, msg.stack_name, msg.stack_id, show_deleted=False
            )
            view = StackResources.load(self.service, conn, stack)
        if msg.action == rm.SIGNAL:
            return rm.ResourceName(self._check_signal(view, msg))
        name = msg.name_or_physical_id
        if name in view.rows:
            return rm.ResourceName(name)
        found = [n for n, row in view.rows.items() if row.physical_id == name]
        if len(found) > 1:
            raise PhysicalResourceIDAmbiguity(name)
        if not found:
            raise ResourceNotFound(name, stack.name)
        return rm.ResourceName(found[0])

    def _check_signal(self, view: StackResources, msg: rm.FindResource) -> str:
        """Heat's checks before a signal: the resource exists, has a row, is not being
        suspended or deleted, and takes signals (clearing a hook works on any)."""
        name = msg.name_or_physical_id
        row = view.rows.get(name)
        if row is None:
            if view.defines(name):
                raise ResourceNotAvailable(name)
            raise ResourceNotFound(name, view.stack.name)
        if row.action in NO_SIGNAL_ACTIONS:
            raise NotSupported(f"Signal resource during {row.action} is not supported.")
        details = msg.details
        if isinstance(details, Mapping) and "unset_hook" in details:
            return name
        plugin_cls = plugin_class(self.service, Shown(view, row))
        if not takes_signals(plugin_cls):
            raise ResourceActionNotSupported("signal")
        return name

    # -- events -----------------------------------------------------------------------------
    def list_events(self, msg: rm.ListStackEvents) -> rm.EventInfoList:
        filters = {
            column: list(msg.filters[key])
            for key, column in EVENT_FILTERS.items()
            if msg.filters.get(key)
        }
        if msg.resource_name is not None:
            filters["resource_name"] = [msg.resource_name]
        sort_keys = _event_sort_columns(msg.sort_keys)
        known = [k for k in msg.sort_keys if k in ("event_time", "resource_type")]
        sort_dir = msg.sort_dir or ("asc" if known else "desc")
        with dbe.read(self._db) as conn:
            stack = stack_in_scope(
                conn, msg.context, msg.stack_name, msg.stack_id, show_deleted=True
            )
            stacks = {s.id: s for s in _with_descendants(conn, stack, max(msg.nested_depth, 0))}
            marker = msg.marker
            if marker is not None and evdb.find_event(conn, marker, list(stacks)) is None:
                marker = None  # Heat ignores an unknown marker (a purged one, too)
            events = evdb.list_events(
                conn,
                list(stacks),
                filters=filters,
                limit=msg.limit,
                marker=marker,
                sort_dir=sort_dir,
                sort_keys=sort_keys,
            )
        root = stack_ref(stack) if msg.nested_depth else None
        return rm.EventInfoList(
            tuple(_event(e, stacks[e.stack_id], root=root, detail=False) for e in events)
        )

    def show_event(self, msg: rm.ShowEvent) -> rm.EventInfoList:
        with dbe.read(self._db) as conn:
            stack = stack_in_scope(
                conn, msg.context, msg.stack_name, msg.stack_id, show_deleted=True
            )
            events = evdb.list_events(
                conn,
                stack.id,
                filters={"uuid": msg.event_id, "resource_name": msg.resource_name},
                limit=1,
            )
        return rm.EventInfoList(tuple(_event(e, stack, root=None, detail=True) for e in events))


def _event_sort_columns(keys: Sequence[str]) -> list[str]:
    """Heat's event sort keys as columns before the id: ``event_time`` is the id order
    (events are numbered as they are written), so nothing after it matters."""
    columns: list[str] = []
    for key in keys:
        if key == "event_time":
            break
        if key == "resource_type":
            columns.append("resource_type")
    return columns


def _with_descendants(conn: Any, stack: sdb.Stack, depth: int) -> list[sdb.Stack]:
    """The stack and its nested stacks down to ``depth`` levels."""
    found = [stack]
    level = [stack]
    deleted = stack.deleted_at is not None
    for _ in range(depth):
        level = [c for s in level for c in sdb.list_children(conn, s.id, show_deleted=deleted)]
        if not level:
            break
        found += level
    return found


def _event(
    event: evdb.Event, stack: sdb.Stack, *, root: m.StackRef | None, detail: bool
) -> rm.EventInfo:
    return rm.EventInfo(
        id=event.uuid,
        created_at=event.created_at,
        resource_name=event.resource_name,
        physical_resource_id=event.physical_resource_id,
        resource_type=event.resource_type,
        action=event.action,
        status=event.status,
        status_reason=event.status_reason,
        stack=stack_ref(stack),
        resource_properties=dict(event.resource_properties or {}) if detail else None,
        root_stack=root,
    )
