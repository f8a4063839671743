"""Stack operations besides create, update and delete.

Previews, suspend/resume/check/snapshot traversals, snapshots, signals
(breakpoint hooks), mark-unhealthy, export/abandon/adopt, rollback and cancel.
A mixin of :class:`kiln.engine.service.StackService`, which provides the
shared pieces it declares below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from kiln.core.errors import ActionInProgress, InvalidBreakPointHook, NotSupported
from kiln.db import engine as dbe
from kiln.db import events as evdb
from kiln.db import resources as rdb
from kiln.db import snapshots as sndb
from kiln.db import stacks as sdb
from kiln.db import traversals as trdb
from kiln.db.errors import NotFound
from kiln.db.tasks import wake_task
from kiln.engine.plan import ACTION_STEPS, build_plan, current_rows
from kiln.template.registry import VALID_HOOKS
from kiln.template.stack import StackIdentity

if TYPE_CHECKING:
    from kiln.engine.service import Caller, StackRequest, StackService
    from kiln.engine.steps import EngineDeps, StepRunner


class StackOperations:
    """Operations on existing stacks; mixed into StackService."""

    deps: EngineDeps
    runner: StepRunner
    wake: Callable[[], None]

    # Provided by StackService.
    def get_stack(self, stack_id: str) -> Any:
        raise NotImplementedError

    def update_stack(
        self, caller: Caller, stack_id: str, request: StackRequest, *, action: str = "UPDATE"
    ) -> None:
        raise NotImplementedError

    def _plan_input(self, *args: Any) -> Any:
        raise NotImplementedError

    def _start(self, *args: Any) -> str:
        raise NotImplementedError

    def _as_service(self) -> StackService:
        return cast("StackService", self)

    # -- abandon, export, adopt --------------------------------------------------------------
    def export_stack(self, caller: Caller, stack_id: str) -> dict[str, Any]:
        from kiln.engine.abandon import export_stack

        return export_stack(self._as_service(), stack_id)

    def abandon_stack(self, caller: Caller, stack_id: str) -> dict[str, Any]:
        from kiln.engine.abandon import abandon_stack

        return abandon_stack(self._as_service(), stack_id)

    def adopt_stack(
        self,
        caller: Caller,
        name: str,
        adopt_data: Any,
        parameters: Mapping[str, Any] | None = None,
    ) -> str:
        from kiln.engine.abandon import adopt_stack

        return adopt_stack(self._as_service(), caller, name, adopt_data, parameters)

    # -- suspend, resume, check --------------------------------------------------------------
    def stack_action(
        self, caller: Caller, stack_id: str, action: str, *, snapshot_name: str | None = None
    ) -> str | None:
        """Start SUSPEND (dependents first), RESUME, CHECK or SNAPSHOT (dependencies first).

        A SNAPSHOT returns the id of the snapshot it fills when it completes.
        """
        if action not in ACTION_STEPS:
            raise NotSupported(f"Stack action {action} is not supported")
        with dbe.read(self.deps.db) as conn:
            stack = sdb.get_stack(conn, stack_id, show_deleted=False)
        if stack.status == "IN_PROGRESS":
            raise ActionInProgress(
                f"Stack {stack.name} already has an action ({stack.action}) in progress."
            )
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            compiled = self.runner.compiled_for(conn, stack, stack.raw_template_id)
            stored = rdb.list_resources(conn, stack.id)
            given = self._plan_input(
                stack.id, stack.root_id, compiled.definition, stack.raw_template_id, stored
            )
            plan = build_plan(given, ACTION_STEPS[action])
            snapshot_id = None
            if action == "SNAPSHOT":
                snapshot_id = self.deps.new_id()
                sndb.create_snapshot(
                    conn, snapshot_id=snapshot_id, stack_id=stack.id, name=snapshot_name, now=now
                )
            self._start(
                conn,
                stack.id,
                stack.current_traversal_id,
                action,
                stack.raw_template_id,
                plan,
                now,
                None,
                False,
            )
        self.wake()
        return snapshot_id

    # -- snapshots -------------------------------------------------------------------------------
    def snapshot_stack(self, caller: Caller, stack_id: str, name: str | None = None) -> str:
        """Start a snapshot (each resource's handle_snapshot); returns the snapshot id."""
        snapshot_id = self.stack_action(caller, stack_id, "SNAPSHOT", snapshot_name=name)
        assert snapshot_id is not None
        return snapshot_id

    def get_snapshot(self, caller: Caller, stack_id: str, snapshot_id: str) -> Any:
        with dbe.read(self.deps.db) as conn:
            found = sndb.get_snapshot(conn, snapshot_id)
        if found.stack_id != stack_id:
            raise NotFound("Snapshot", snapshot_id)
        return found

    def list_snapshots(self, caller: Caller, stack_id: str) -> list[Any]:
        with dbe.read(self.deps.db) as conn:
            return sndb.list_snapshots(conn, stack_id)

    def delete_snapshot(self, caller: Caller, stack_id: str, snapshot_id: str) -> None:
        snapshot = self.get_snapshot(caller, stack_id, snapshot_id)
        if snapshot.status == "IN_PROGRESS":
            raise NotSupported("Deleting a snapshot in progress is not supported")
        with dbe.write(self.deps.db) as conn:
            sndb.delete_snapshot(conn, snapshot_id)

    def restore_snapshot(self, caller: Caller, stack_id: str, snapshot_id: str) -> None:
        """Converge the stack back to the snapshot's template, environment and files,
        each resource restored from what the snapshot kept of it (a volume from its
        backup, a server from its image: kiln.engine.snapshot_restore)."""
        snapshot = self.get_snapshot(caller, stack_id, snapshot_id)
        if snapshot.status != "COMPLETE":
            raise NotSupported(
                f"Snapshot {snapshot_id} is {snapshot.status}: it cannot be restored"
            )
        from kiln.engine.service import StackRequest
        from kiln.engine.snapshot_restore import restored_template

        data = snapshot.data
        stack = self.get_stack(stack_id)
        identity = StackIdentity(name=stack.name, id=stack.id, project_id=stack.project_id)
        request = StackRequest(
            name=stack.name,
            template=restored_template(data, self.deps.registry, self.deps.custom, identity),
            environment=data["environment"],
            files=data["files"],
            disable_rollback=True,
        )
        self.update_stack(caller, stack_id, request, action="RESTORE")

    # -- signals ---------------------------------------------------------------------------------
    def signal(
        self, caller: Caller, stack_id: str, resource_name: str, details: Mapping[str, Any] | None
    ) -> None:
        """Signal a resource. ``{unset_hook: HOOK}`` clears a hook the resource waits at;
        anything else goes to the resource's plugin (kiln.engine.signals)."""
        hook = (details or {}).get("unset_hook") if isinstance(details, Mapping) else None
        if hook is None:
            from kiln.engine.signals import deliver_signal

            deliver_signal(self._as_service(), stack_id, resource_name, details)
            return
        if hook not in VALID_HOOKS:
            raise InvalidBreakPointHook(
                f'Invalid hook type "{hook}" for resource breakpoint, acceptable hook types '
                f"are: {VALID_HOOKS}"
            )
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            stack = sdb.get_stack(conn, stack_id, show_deleted=False)
            compiled = self.runner.compiled_for(conn, stack, stack.raw_template_id)
            registry = compiled.definition.environment.registry
            if hook not in registry.hooks_for(resource_name):
                raise InvalidBreakPointHook(f'The "{hook}" hook is not defined on {resource_name}')
            if stack.current_traversal_id is not None:
                for task in trdb.list_tasks(
                    conn, stack.current_traversal_id, states=["WAITING_HOOK"]
                ):
                    if (
                        task.resource_name == resource_name
                        and (task.cookie or {}).get("hook") == hook
                    ):
                        wake_task(conn, task.traversal_id, task.node_key, now=now)
        self.wake()

    # -- mark unhealthy --------------------------------------------------------------------------
    def mark_unhealthy(
        self, caller: Caller, stack_id: str, resource_name: str, mark: bool, reason: str = ""
    ) -> None:
        """Mark a resource CHECK_FAILED (the next update replaces it), or clear that mark."""
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            rows = current_rows(rdb.list_resources(conn, stack_id))
            row = rows.get(resource_name)
            if row is None:
                raise NotFound("Resource", resource_name)
            if mark:
                change = rdb.ResourceChange(
                    action="CHECK", status="FAILED", status_reason=reason or "marked unhealthy"
                )
            elif (row.action, row.status) == ("CHECK", "FAILED"):
                change = rdb.ResourceChange(action="CHECK", status="COMPLETE", status_reason="")
            else:
                return
            rdb.update_resource(conn, row.id, change, now=now, expected_version=row.version)
            evdb.add_event(
                conn,
                evdb.NewEvent(
                    uuid=self.deps.new_id(),
                    stack_id=stack_id,
                    resource_name=row.name,
                    resource_type=row.type,
                    action="CHECK",
                    status="FAILED" if mark else "COMPLETE",
                    status_reason=reason or ("marked unhealthy" if mark else ""),
                    physical_resource_id=row.physical_id,
                ),
                now=now,
            )

    # -- rollback and cancel ------------------------------------------------------------------
    def roll_back(self, traversal_id: str) -> bool:
        """Start the rollback of a failed or cancelled traversal if it asked for one."""
        from kiln.engine.rollback import roll_back

        return roll_back(self._as_service(), traversal_id)

    def cancel_update(self, caller: Caller, stack_id: str, *, rollback: bool = True) -> bool:
        """Stop the running update; roll back unless ``rollback`` is false."""
        from kiln.engine.rollback import cancel

        return cancel(self._as_service(), stack_id, rollback=rollback)
