"""The engine's side of the RPC messages: each message type to a service call.

Every read is scoped to the caller's project: a stack of another project is
"not found", never visible.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kiln.core.errors import NotSupported
from kiln.db import engine as dbe
from kiln.db import stacks as sdb
from kiln.db.errors import NotFound
from kiln.engine.service import Caller, StackRequest, StackService
from kiln.rpc import messages as m


def _caller(ctx: m.Context) -> Caller:
    return Caller(ctx.project_id, ctx.user_id)


def _request(name: str, given: m.StackInput, msg: Any) -> StackRequest:
    return StackRequest(
        name=name,
        template=given.template,
        environment=given.environment,
        environment_files=given.environment_files,
        files=given.files,
        parameters=given.parameters,
        timeout_mins=msg.timeout_mins,
        disable_rollback=msg.disable_rollback,
        tags=msg.tags,
    )


def _view(stack: sdb.Stack, outputs: list[m.Output] | None = None) -> m.StackView:
    return m.StackView(
        id=stack.id,
        name=stack.name,
        project_id=stack.project_id,
        action=stack.action,
        status=stack.status,
        status_reason=stack.status_reason,
        created_at=stack.created_at,
        updated_at=stack.updated_at,
        deleted_at=stack.deleted_at,
        parent_id=stack.owner_id,
        timeout_mins=stack.timeout_mins,
        disable_rollback=stack.disable_rollback,
        tags=tuple(stack.tags),
        parameters=dict(stack.parameters),
        outputs=tuple(outputs or ()),
    )


class EngineHandlers:
    """Handlers for every message, over one StackService."""

    def __init__(self, service: StackService) -> None:
        self.service = service

    def table(self) -> dict[type, Callable[[Any], Any]]:
        return {
            m.CreateStack: self.create,
            m.UpdateStack: self.update,
            m.DeleteStack: self.delete,
            m.ShowStack: self.show,
            m.ListStacks: self.list,
            m.ListResources: self.resources,
            m.ListEvents: self.events,
            m.PreviewCreate: self.preview_create,
            m.PreviewUpdate: self.preview_update,
            m.StackAction: self.action,
            m.SignalResource: self.signal,
            m.MarkUnhealthy: self.mark_unhealthy,
            m.CreateSnapshot: self.create_snapshot,
            m.SnapshotRef: self.snapshot,
            m.ListSnapshots: self.list_snapshots,
            m.AbandonStack: self.abandon,
            m.AdoptStack: self.adopt,
            m.LookupStack: self.lookup,
        }

    def _own_stack(self, ctx: m.Context, stack_id: str) -> sdb.Stack:
        stack = self.service.get_stack(stack_id)
        if stack.project_id != ctx.project_id and not ctx.is_admin:
            raise NotFound("Stack", stack_id)
        return stack

    def lookup(self, msg: m.LookupStack) -> m.StackRef:
        ctx = msg.context
        found: sdb.Stack | None = None
        if _looks_like_uuid(msg.identity):
            try:
                found = self._own_stack(ctx, msg.identity)
            except NotFound:
                found = None
        if found is None:
            with dbe.read(self.service.deps.db) as conn:
                try:
                    found = sdb.get_stack_by_name(conn, ctx.project_id, msg.identity)
                except NotFound:
                    raise NotFound("Stack", msg.identity) from None
        return m.StackRef(found.id, found.name, found.project_id)

    def create(self, msg: m.CreateStack) -> m.StackCreated:
        stack_id = self.service.create_stack(
            _caller(msg.context), _request(msg.name, msg.input, msg)
        )
        return m.StackCreated(stack_id, msg.name)

    def update(self, msg: m.UpdateStack) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id)
        self.service.update_stack(
            _caller(msg.context), stack.id, _request(stack.name, msg.input, msg)
        )
        return m.Accepted(stack.id)

    def delete(self, msg: m.DeleteStack) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id)
        self.service.delete_stack(_caller(msg.context), stack.id)
        return m.Accepted(stack.id)

    def show(self, msg: m.ShowStack) -> m.StackView:
        stack = self._own_stack(msg.context, msg.stack_id)
        outputs = None
        if msg.resolve_outputs and stack.deleted_at is None:
            outputs = [
                m.Output(k, v.value, v.description, v.error)
                for k, v in self.service.outputs(stack.id).items()
            ]
        return _view(stack, outputs)

    def list(self, msg: m.ListStacks) -> m.StackList:
        with dbe.read(self.service.deps.db) as conn:
            stacks = sdb.list_stacks(
                conn,
                None if msg.context.is_admin else msg.context.project_id,
                filters=msg.filters,
                limit=msg.limit,
                marker=msg.marker,
                show_deleted=msg.show_deleted,
                show_nested=msg.show_nested,
            )
        return m.StackList(tuple(_view(s) for s in stacks))

    def resources(self, msg: m.ListResources) -> m.ResourceList:
        stack = self._own_stack(msg.context, msg.stack_id)
        rows = self.service.resources(stack.id)
        names = {r.id: r.name for r in rows}
        return m.ResourceList(
            tuple(
                m.ResourceView(
                    r.name,
                    r.type,
                    r.physical_id,
                    r.action,
                    r.status,
                    r.status_reason,
                    tuple(names.get(i, i) for i in r.requires),
                    r.updated_at,
                )
                for r in rows
            )
        )

    def events(self, msg: m.ListEvents) -> m.EventList:
        stack = self._own_stack(msg.context, msg.stack_id)
        found = self.service.events(stack.id)
        return m.EventList(
            tuple(
                m.EventView(
                    e.uuid,
                    e.resource_name,
                    e.resource_type,
                    e.physical_resource_id,
                    e.action,
                    e.status,
                    e.status_reason,
                    e.created_at,
                )
                for e in found
            )
        )

    def preview_create(self, msg: m.PreviewCreate) -> m.CreatePreview:
        request = StackRequest(
            name=msg.name,
            template=msg.input.template,
            environment=msg.input.environment,
            environment_files=msg.input.environment_files,
            files=msg.input.files,
            parameters=msg.input.parameters,
        )
        return m.CreatePreview(tuple(self.service.preview_create(_caller(msg.context), request)))

    def preview_update(self, msg: m.PreviewUpdate) -> m.UpdatePreview:
        stack = self._own_stack(msg.context, msg.stack_id)
        request = StackRequest(
            name=stack.name,
            template=msg.input.template,
            environment=msg.input.environment,
            environment_files=msg.input.environment_files,
            files=msg.input.files,
            parameters=msg.input.parameters,
            existing=msg.existing,
            clear_parameters=msg.clear_parameters,
        )
        found = self.service.preview_update(_caller(msg.context), stack.id, request).as_dict()
        return m.UpdatePreview(**{k: tuple(v) for k, v in found.items()})

    def action(self, msg: m.StackAction) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id)
        caller = _caller(msg.context)
        if msg.action in ("cancel_update", "cancel_without_rollback"):
            if not self.service.cancel_update(
                caller, stack.id, rollback=msg.action == "cancel_update"
            ):
                raise NotSupported(f"Cancelling update when stack is {stack.action}_{stack.status}")
        else:
            self.service.stack_action(caller, stack.id, msg.action.upper())
        return m.Accepted(stack.id)

    def signal(self, msg: m.SignalResource) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id)
        self.service.signal(_caller(msg.context), stack.id, msg.resource_name, msg.details)
        return m.Accepted(stack.id)

    def mark_unhealthy(self, msg: m.MarkUnhealthy) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id)
        self.service.mark_unhealthy(
            _caller(msg.context), stack.id, msg.resource_name, msg.mark_unhealthy, msg.reason
        )
        return m.Accepted(stack.id)

    def create_snapshot(self, msg: m.CreateSnapshot) -> m.SnapshotView:
        stack = self._own_stack(msg.context, msg.stack_id)
        snapshot_id = self.service.snapshot_stack(_caller(msg.context), stack.id, msg.name)
        return _snapshot(self.service.get_snapshot(_caller(msg.context), stack.id, snapshot_id))

    def snapshot(self, msg: m.SnapshotRef) -> m.SnapshotView | m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id)
        caller = _caller(msg.context)
        if msg.op == "delete":
            self.service.delete_snapshot(caller, stack.id, msg.snapshot_id)
            return m.Accepted(stack.id)
        if msg.op == "restore":
            self.service.restore_snapshot(caller, stack.id, msg.snapshot_id)
            return m.Accepted(stack.id)
        return _snapshot(self.service.get_snapshot(caller, stack.id, msg.snapshot_id))

    def list_snapshots(self, msg: m.ListSnapshots) -> m.SnapshotList:
        stack = self._own_stack(msg.context, msg.stack_id)
        found = self.service.list_snapshots(_caller(msg.context), stack.id)
        return m.SnapshotList(tuple(_snapshot(s) for s in found))

    def abandon(self, msg: m.AbandonStack) -> m.StackData:
        stack = self._own_stack(msg.context, msg.stack_id)
        caller = _caller(msg.context)
        if msg.keep:
            return m.StackData(self.service.export_stack(caller, stack.id))
        return m.StackData(self.service.abandon_stack(caller, stack.id))

    def adopt(self, msg: m.AdoptStack) -> m.StackCreated:
        stack_id = self.service.adopt_stack(
            _caller(msg.context), msg.name, msg.adopt_data, msg.parameters
        )
        return m.StackCreated(stack_id, msg.name)


def _looks_like_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _snapshot(found: Any) -> m.SnapshotView:
    return m.SnapshotView(
        found.id, found.name, found.status, found.status_reason, found.data, found.created_at
    )
