"""The engine's side of the RPC messages: each message type to a service call.

Every read is scoped to the caller's project: a stack of another project is
"not found", never visible. The checks Heat's engine makes before it accepts
a request live here too: stack names, per-project quotas, which actions a
stack's state allows, and Heat's messages for each refusal.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

from kiln.core.errors import (
    ActionInProgress,
    KilnError,
    NotSupported,
    RequestLimitExceeded,
    StackValidationFailed,
)
from kiln.db import engine as dbe
from kiln.db import snapshots as sndb
from kiln.db import stacks as sdb
from kiln.db.errors import NotFound, StackExists
from kiln.engine import stack_previews, stack_reads
from kiln.engine.resource_handlers import may_see
from kiln.engine.service import Caller, StackRequest, StackService
from kiln.rpc import messages as m

#: heat-api.md 7: what a stack name may be
STACK_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]{0,254}")

CANCELLABLE = {"cancel_update": ("UPDATE",), "cancel_without_rollback": ("UPDATE", "CREATE")}
STACK_ACTIONS = ("suspend", "resume", "check")


class SnapshotNotFound(KilnError):
    """Heat's SnapshotNotFound (an EntityNotFound)."""

    http_status = 404

    def __init__(self, snapshot_id: str, stack_name: str) -> None:
        super().__init__(
            f"The Snapshot ({snapshot_id}) for Stack ({stack_name}) could not be found."
        )


def _caller(ctx: m.Context) -> Caller:
    return Caller(
        ctx.project_id,
        ctx.user_id,
        tuple(ctx.denied_resource_types),
        tuple(ctx.roles),
        auth_token=ctx.auth_token,
    )


def _request(name: str, given: m.StackInput, msg: Any) -> StackRequest:
    return StackRequest(
        name=name,
        template=given.template,
        environment=given.environment,
        environment_files=tuple(given.environment_files),
        files=given.files,
        parameters=given.parameters,
        timeout_mins=msg.timeout_mins,
        disable_rollback=msg.disable_rollback,
        tags=tuple(msg.tags),
    )


def check_stack_name(name: Any) -> None:
    """Heat's rule for the name of a new (top-level) stack."""
    if not isinstance(name, str):
        raise StackValidationFailed(f"Invalid stack name {name}, must be a string")
    if not STACK_NAME.fullmatch(name):
        raise StackValidationFailed(
            f'Invalid stack name {name} must contain only alphanumeric or "_-." '
            "characters, must start with alpha and must be 255 characters or less."
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
            m.ListOutputs: self.list_outputs,
            m.ShowOutput: self.show_output,
            m.GetStackDocument: self.document,
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

    def _own_stack(self, ctx: m.Context, stack_id: str, name: str | None = None) -> sdb.Stack:
        """The stack with that id (and ``name``, when the URL gives one) the caller may see."""
        try:
            with dbe.read(self.service.deps.db) as conn:
                stack = sdb.get_stack(conn, stack_id)
                visible = may_see(conn, ctx, stack)
        except NotFound:
            raise NotFound("Stack", name or stack_id) from None
        if not visible:
            raise NotFound("Stack", name or stack_id)
        if name is not None and stack.name != name:
            raise NotFound("Stack", name)
        return stack

    def _check_new_stack(self, ctx: m.Context, name: str, max_stacks: int | None) -> None:
        """Name, uniqueness and (unless ``max_stacks`` is None) the project's quota."""
        check_stack_name(name)
        with dbe.read(self.service.deps.db) as conn:
            try:
                sdb.get_stack_by_name(conn, ctx.project_id, name)
            except NotFound:
                pass
            else:
                raise StackExists(name)
            if max_stacks is None or max_stacks < 0 or ctx.is_admin:
                return
            count = sdb.count_live_stacks(conn, ctx.project_id)
        if count >= max_stacks:
            raise RequestLimitExceeded(
                "Request limit exceeded: You have reached the maximum stacks per tenant, "
                f"{max_stacks}. Please delete some stacks."
            )

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
                    found = None
                if found is None and ctx.project_id:
                    try:  # an in-instance user names a stack of its stack-domain project
                        found = sdb.get_stack_of_stack_users(conn, ctx.project_id, msg.identity)
                    except NotFound:
                        pass
                if found is None:
                    raise NotFound("Stack", msg.identity)
        return m.StackRef(found.id, found.name, found.project_id)

    # -- lifecycle ----------------------------------------------------------------------------
    def create(self, msg: m.CreateStack) -> m.StackCreated:
        self._check_new_stack(msg.context, msg.name, msg.max_stacks_per_tenant)
        stack_id = self.service.create_stack(
            _caller(msg.context), _request(msg.name, msg.input, msg)
        )
        return m.StackCreated(stack_id, msg.name)

    def update(self, msg: m.UpdateStack) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        if stack.action == "SUSPEND":
            raise NotSupported("Updating a stack when it is suspended is not supported.")
        if stack.action == "DELETE":
            raise NotSupported("Updating a stack when it is deleting is not supported.")
        # A PATCH keeps what it does not name; a PUT starts from Heat's defaults.
        keep = msg.existing
        request = StackRequest(
            name=stack.name,
            template=msg.input.template,
            environment=msg.input.environment,
            environment_files=tuple(msg.input.environment_files),
            files=msg.input.files,
            parameters=msg.input.parameters,
            timeout_mins=(
                msg.timeout_mins
                if msg.timeout_mins is not None
                else (stack.timeout_mins if keep else None)
            ),
            disable_rollback=(
                msg.disable_rollback
                if msg.disable_rollback is not None
                else (stack.disable_rollback if keep else True)
            ),
            tags=tuple(msg.tags if msg.tags is not None else (stack.tags if keep else ())),
            existing=msg.existing,
            clear_parameters=tuple(msg.clear_parameters),
            store_settings=True,
        )
        self.service.update_stack(_caller(msg.context), stack.id, request)
        return m.Accepted(stack.id)

    def delete(self, msg: m.DeleteStack) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        self.service.delete_stack(_caller(msg.context), stack.id)
        # Heat deletes a stack's snapshots with it.
        with dbe.write(self.service.deps.db) as conn:
            for snapshot in sndb.list_snapshots(conn, stack.id):
                sndb.delete_snapshot(conn, snapshot.id)
        return m.Accepted(stack.id)

    # -- reads --------------------------------------------------------------------------------
    def show(self, msg: m.ShowStack) -> m.StackView:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        return stack_reads.show_stack(self.service, stack, msg.resolve_outputs)

    def list(self, msg: m.ListStacks) -> m.StackList:
        return stack_reads.list_stacks(self.service, msg)

    def list_outputs(self, msg: m.ListOutputs) -> m.OutputList:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        return stack_reads.list_outputs(self.service, stack)

    def show_output(self, msg: m.ShowOutput) -> m.Output:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        return stack_reads.show_output(self.service, stack, msg.key)

    def document(self, msg: m.GetStackDocument) -> m.StackDocument:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        return stack_reads.stack_document(self.service, stack, msg.which)

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

    # -- previews -----------------------------------------------------------------------------
    def preview_create(self, msg: m.PreviewCreate) -> m.CreatePreview:
        # Heat checks a preview's name as a create's (the quota aside).
        self._check_new_stack(msg.context, msg.name, None)
        request = StackRequest(
            name=msg.name,
            template=msg.input.template,
            environment=msg.input.environment,
            environment_files=tuple(msg.input.environment_files),
            files=msg.input.files,
            parameters=msg.input.parameters,
        )
        return stack_previews.preview_create(self.service, _caller(msg.context), request)

    def preview_update(self, msg: m.PreviewUpdate) -> m.UpdatePreview:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        request = StackRequest(
            name=stack.name,
            template=msg.input.template,
            environment=msg.input.environment,
            environment_files=tuple(msg.input.environment_files),
            files=msg.input.files,
            parameters=msg.input.parameters,
            existing=msg.existing,
            clear_parameters=tuple(msg.clear_parameters),
        )
        return stack_previews.preview_update(
            self.service, _caller(msg.context), stack, request, show_nested=msg.show_nested
        )

    # -- actions ------------------------------------------------------------------------------
    def action(self, msg: m.StackAction) -> m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        caller = _caller(msg.context)
        if msg.action in CANCELLABLE:
            refused = NotSupported(
                f"Cancelling update when stack is {stack.action}_{stack.status} is not supported."
            )
            if stack.status != "IN_PROGRESS" or stack.action not in CANCELLABLE[msg.action]:
                raise refused
            rollback = msg.action == "cancel_update"
            if not self.service.cancel_update(caller, stack.id, rollback=rollback):
                raise refused
        elif msg.action in STACK_ACTIONS:
            self.service.stack_action(caller, stack.id, msg.action.upper())
        else:
            raise NotSupported(f"Invalid action {msg.action} specified")
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

    # -- snapshots ----------------------------------------------------------------------------
    def create_snapshot(self, msg: m.CreateSnapshot) -> m.SnapshotView:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        caller = _caller(msg.context)
        if stack.status == "IN_PROGRESS":  # before the quota, as in Heat
            raise ActionInProgress(
                f"Stack {stack.name} already has an action ({stack.action}) in progress."
            )
        limit = msg.max_snapshots
        if (
            limit >= 0
            and not msg.context.is_admin
            and len(self.service.list_snapshots(caller, stack.id)) >= limit
        ):
            raise RequestLimitExceeded(
                "Request limit exceeded: You have reached the maximum snapshots per "
                f"stack, {limit}. Please delete some snapshots."
            )
        snapshot_id = self.service.snapshot_stack(caller, stack.id, msg.name)
        return _snapshot(self.service.get_snapshot(caller, stack.id, snapshot_id))

    def snapshot(self, msg: m.SnapshotRef) -> m.SnapshotView | m.Accepted:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        caller = _caller(msg.context)
        try:
            found = self.service.get_snapshot(caller, stack.id, msg.snapshot_id)
        except NotFound:
            raise SnapshotNotFound(msg.snapshot_id, stack.name) from None
        if msg.op == "delete":
            if found.status == "IN_PROGRESS":
                raise NotSupported("Deleting in-progress snapshot is not supported.")
            self.service.delete_snapshot(caller, stack.id, msg.snapshot_id)
            return m.Accepted(stack.id)
        if msg.op == "restore":
            if found.status != "COMPLETE":
                raise NotSupported("Restoring incomplete snapshot is not supported.")
            self.service.restore_snapshot(caller, stack.id, msg.snapshot_id)
            return m.Accepted(stack.id)
        return _snapshot(found)

    def list_snapshots(self, msg: m.ListSnapshots) -> m.SnapshotList:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        found = self.service.list_snapshots(_caller(msg.context), stack.id)
        return m.SnapshotList(tuple(_snapshot(s) for s in found))

    # -- abandon, export, adopt ---------------------------------------------------------------
    def abandon(self, msg: m.AbandonStack) -> m.StackData:
        stack = self._own_stack(msg.context, msg.stack_id, msg.stack_name)
        caller = _caller(msg.context)
        if msg.keep:
            data = self.service.export_stack(caller, stack.id)
        else:
            data = self.service.abandon_stack(caller, stack.id)
        # Hidden values never leave the engine, not even for a later adopt.
        return m.StackData(stack_reads.masked_stack_data(data))

    def adopt(self, msg: m.AdoptStack) -> m.StackCreated:
        self._check_new_stack(msg.context, msg.name, msg.max_stacks_per_tenant)
        adopt_data = stack_reads.without_masked_values(msg.adopt_data)
        stack_id = self.service.adopt_stack(
            _caller(msg.context), msg.name, adopt_data, msg.parameters
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
        found.id,
        found.name,
        found.status,
        found.status_reason or None,
        stack_reads.masked_stack_data(found.data),
        found.created_at,
        action=found.action,
    )
