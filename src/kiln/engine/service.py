"""Stack lifecycle: the operations that start traversals, and the reads.

Each mutating operation validates, then writes the stack, its template, the
new resource rows and the whole traversal plan in one transaction, and only
then wakes an engine. So a request never waits on a busy engine, and a crash
after the commit loses nothing: any engine picks the work up.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from kiln.cloud.api.scope import CloudScope
from kiln.core.errors import (
    KilnError,
    StackValidationFailed,
    ValidationFailed,
    raise_all,
)
from kiln.db import engine as dbe
from kiln.db import events as evdb
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.db import traversals as trdb
from kiln.db.errors import ConcurrentUpdate
from kiln.db.stacks import StackStatus
from kiln.engine.cloud_constraints import validating_with
from kiln.engine.compiled import RowState
from kiln.engine.nested import ParentLink
from kiln.engine.operations import StackOperations
from kiln.engine.plan import (
    CONVERGE_STEPS,
    DELETE_STEPS,
    PlanInput,
    build_plan,
    current_rows,
)
from kiln.engine.steps import EngineDeps, StepRunner
from kiln.engine.type_policy import check_resource_types
from kiln.template.inputs import build_stack
from kiln.template.outputs import OutputValue, resolve_output
from kiln.template.parameters import check_immutable
from kiln.template.stack import StackDefinition, StackIdentity

log = logging.getLogger(__name__)


#: an update validated while another was committed validates again, this many times in all
UPDATE_ATTEMPTS = 3


@dataclass(frozen=True)
class StackRequest:
    """A create or update request, as the API hands it over."""

    name: str
    #: data, or JSON/YAML text (parsed here, so errors have file:line:col)
    template: Mapping[str, Any] | str | None
    environment: Mapping[str, Any] | str | None = None
    environment_files: Sequence[tuple[str, Any]] = ()
    files: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: Sequence[str] = ()
    #: PATCH update: keep the stored template, environment and files unless given
    existing: bool = False
    #: PATCH update: stored parameter values to drop
    clear_parameters: Sequence[str] = ()
    #: update: store tags, timeout_mins and disable_rollback on the stack too
    #: (the API's updates do; a restore keeps the stack's own)
    store_settings: bool = False


@dataclass(frozen=True)
class Caller:
    """Who asks: the project the stack belongs to, and the user."""

    project_id: str
    user_id: str = ""
    #: resource types the caller's policy denies (``resource_types:<Type>``; a name
    #: or ``Prefix::*``), worked out by the API, which holds the policy
    denied_resource_types: tuple[str, ...] = ()
    #: the user's role names (stored with a stack: its cloud calls act with them)
    roles: tuple[str, ...] = ()
    #: the user's token (only to make the stack's trust; never stored)
    auth_token: str | None = None
    #: the Keystone trust the stack's cloud calls use (inherited by nested stacks)
    trust_id: str | None = None


class StackService(StackOperations):
    """Starts stack actions and answers questions about stacks."""

    def __init__(self, deps: EngineDeps, *, wake: Callable[[], None] = lambda: None) -> None:
        self.deps = deps
        self.wake = wake
        self.runner = StepRunner(deps)
        deps.on_traversal_failed = self.roll_back

    # -- validation -------------------------------------------------------------------------
    def _definition(
        self,
        request: StackRequest,
        identity: StackIdentity,
        caller: Caller | None = None,
        *,
        nested: bool = False,
    ) -> StackDefinition:
        """The validated definition of a request.

        Values under cloud-backed constraints (``nova.flavor``...) are looked up in the
        caller's cloud for what users send; a nested stack the engine makes is not looked
        up again (its values were checked above it, or come from resources it just made,
        and its plugins resolve names with the cloud's own message): at 200 ms a call,
        every level of a group would otherwise repeat every lookup.
        """
        if request.template is None:
            raise StackValidationFailed("No template specified")
        template = request.template
        cloud = self.deps.scoped_cloud(caller) if caller is not None and not nested else None
        with validating_with(cloud):
            definition = build_stack(
                template if isinstance(template, str) else dict(template),
                environment=request.environment,
                environment_files=request.environment_files,
                files=request.files,
                parameters=request.parameters,
                identity=identity,
                types=self.deps.registry,
                custom=self.deps.custom,
                check_values=True,
                limits=self.deps.limits,
            )
        raise_all(definition.errors)
        if caller is not None and caller.denied_resource_types:
            check_resource_types(definition, caller.denied_resource_types)
        return definition

    def _deadline(self, timeout_mins: int | None) -> Any:
        timeout_mins = timeout_mins or self.deps.default_timeout_mins
        if not timeout_mins:
            return None
        return self.deps.clock.now() + timedelta(minutes=timeout_mins)

    # -- create -------------------------------------------------------------------------------
    def create_stack(
        self,
        caller: Caller,
        request: StackRequest,
        *,
        parent: ParentLink | None = None,
        adopt: Mapping[str, tuple[str | None, Mapping[str, Any]]] | None = None,
    ) -> str:
        """Validate and start creating a stack (a child stack when ``parent``); returns its id.

        ``adopt`` (abandon data's resources: name -> physical id and data) makes it
        an ADOPT: those resources are taken over instead of created.
        """
        stack_id = self.deps.new_id()
        identity = StackIdentity(name=request.name, id=stack_id, project_id=caller.project_id)
        if parent is None:
            caller = self._with_trust(caller)
        try:
            return self._create(caller, request, stack_id, identity, parent, adopt)
        except BaseException:
            if parent is None and caller.trust_id is not None:
                self.give_back_trust(caller.trust_id)  # no stack will use it
            raise

    def _with_trust(self, caller: Caller) -> Caller:
        """The caller with a new trust for the stack, when the cloud works with trusts
        (a real one) and the caller came with a token."""
        cloud = self.deps.cloud
        create_trust = getattr(cloud, "create_trust", None)
        if create_trust is None or not caller.auth_token or caller.trust_id is not None:
            return caller
        scope = CloudScope(caller.project_id, caller.user_id, frozenset(caller.roles))
        try:
            trust_id = create_trust(caller.auth_token, scope)
        except Exception as err:
            raise StackValidationFailed(f"Could not create a trust for the stack: {err}") from err
        return replace(caller, trust_id=str(trust_id))

    def give_back_trust(self, trust_id: str) -> None:
        self.runner.give_back_trust(trust_id)

    def _create(
        self,
        caller: Caller,
        request: StackRequest,
        stack_id: str,
        identity: StackIdentity,
        parent: ParentLink | None,
        adopt: Mapping[str, tuple[str | None, Mapping[str, Any]]] | None,
    ) -> str:
        definition = self._definition(request, identity, caller, nested=parent is not None)
        now = self.deps.clock.now()
        root_id = parent.root_id if parent else stack_id
        plan = build_plan(self._plan_input(stack_id, root_id, definition, "", []), CONVERGE_STEPS)
        with dbe.write(self.deps.db) as conn:
            template_id = tdb.store_raw_template(
                conn,
                dict(definition.template.data),
                definition.environment.to_dict(),
                dict(request.files),
                now=now,
            )
            sdb.create_stack(
                conn,
                stack_id=stack_id,
                name=request.name,
                project_id=caller.project_id,
                user_id=caller.user_id,
                user_roles=list(caller.roles),
                trust_id=caller.trust_id,
                raw_template_id=template_id,
                now=now,
                owner_id=parent.owner_id if parent else None,
                root_id=parent.root_id if parent else stack_id,
                parent_resource=parent.resource if parent else None,
                nested_depth=parent.depth if parent else 0,
                timeout_mins=request.timeout_mins,
                disable_rollback=request.disable_rollback,
                tags=list(request.tags),
                parameters=dict(definition.environment.parameters),
            )
            rows = [_with_template(r, template_id) for r in plan.new_rows]
            rows = [_adopted(r, adopt) for r in rows] if adopt else rows
            rdb.create_resources(conn, rows, now=now)
            row_ids = {r.name: r.id for r in rows}
            for name, (_, data) in (adopt or {}).items():
                if name in row_ids:
                    for key, value in data.items():
                        rdb.set_resource_data(conn, row_ids[name], key, json.dumps(value))
            self._start(
                conn,
                stack_id,
                None,
                "ADOPT" if adopt else "CREATE",
                template_id,
                plan,
                now,
                self._deadline(request.timeout_mins),
                not request.disable_rollback,
            )
        self.deps.compiled_cache().put(template_id, definition)
        self.wake()
        return stack_id

    # -- update -------------------------------------------------------------------------------
    def update_stack(
        self, caller: Caller, stack_id: str, request: StackRequest, *, action: str = "UPDATE"
    ) -> None:
        """Validate and start converging an existing stack to a new template.

        A PATCH (``existing``) starts from the stored template, environment and
        files, loads what the request gives on top, and drops
        ``clear_parameters`` (reference 6.4). Immutable parameters may not change.
        Two updates racing on one stack are both accepted, one after the other:
        the later one (the one whose plan is committed last) supersedes the other.
        """
        for _attempt in range(UPDATE_ATTEMPTS - 1):
            if self._try_update(caller, stack_id, request, action):
                return
        if not self._try_update(caller, stack_id, request, action):
            raise ConcurrentUpdate("Stack", stack_id)

    def _try_update(
        self, caller: Caller, stack_id: str, request: StackRequest, action: str
    ) -> bool:
        """One attempt of ``update_stack``; False when the stack changed while it validated."""
        with dbe.read(self.deps.db) as conn:
            stack = sdb.get_stack(conn, stack_id, show_deleted=False)
            old = self.runner.compiled_for(conn, stack, stack.raw_template_id).definition
            stored_raw = tdb.get_raw_template(conn, stack.raw_template_id)
        if request.existing:
            request = _patched(request, stored_raw)
        elif request.template is None:
            raise StackValidationFailed("No template specified")
        identity = StackIdentity(name=stack.name, id=stack.id, project_id=stack.project_id)
        caller = replace(caller, trust_id=stack.trust_id)  # lookups act through its trust
        definition = self._definition(request, identity, caller, nested=stack.owner_id is not None)
        raise_all(
            check_immutable(
                old.parameter_schemas,
                old.parameter_values,
                definition.parameter_schemas,
                definition.parameter_values,
            )
        )
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            # The stack row is locked first (sdb.lock_stack), so the rows read next are
            # all there are: engines may have added rows (replacements) while this
            # request validated, which the plan must clean up.
            if sdb.lock_stack(conn, stack_id).version != stack.version:
                return False  # another update came first: validate against it
            stored = rdb.list_resources(conn, stack_id)
            plan = build_plan(
                self._plan_input(stack.id, stack.root_id, definition, "", stored), CONVERGE_STEPS
            )
            template_id = tdb.store_raw_template(
                conn,
                dict(definition.template.data),
                definition.environment.to_dict(),
                dict(request.files),
                now=now,
            )
            sdb.set_template(
                conn,
                stack.id,
                raw_template_id=template_id,
                prev_raw_template_id=stack.raw_template_id,
                now=now,
                expected_version=stack.version,
                parameters=dict(definition.environment.parameters),
                **_settings(request),
            )
            rows = [_with_template(r, template_id) for r in plan.new_rows]
            rdb.create_resources(conn, rows, now=now)
            self._start(
                conn,
                stack.id,
                stack.current_traversal_id,
                action,
                template_id,
                plan,
                now,
                self._deadline(request.timeout_mins or stack.timeout_mins),
                not request.disable_rollback,
            )
        self.wake()
        return True

    # -- delete -------------------------------------------------------------------------------
    def delete_stack(self, caller: Caller, stack_id: str) -> None:
        """Start deleting a stack and every resource row it has."""
        with dbe.read(self.deps.db) as conn:
            stack = sdb.get_stack(conn, stack_id, show_deleted=False)
        now = self.deps.clock.now()
        with dbe.write(self.deps.db) as conn:
            stack = sdb.lock_stack(conn, stack_id)  # the newest action's state (see update_stack)
            stored = rdb.list_resources(conn, stack_id)
            given = PlanInput(
                stack.id, stack.root_id, stack.raw_template_id, {}, {}, stored, self.deps.new_id
            )
            plan = build_plan(given, DELETE_STEPS)
            self._start(
                conn,
                stack.id,
                stack.current_traversal_id,
                "DELETE",
                stack.raw_template_id,
                plan,
                now,
                None,
                False,
            )
        self.wake()

    # -- shared --------------------------------------------------------------------------------
    def _plan_input(
        self,
        stack_id: str,
        root_id: str,
        definition: StackDefinition,
        template_id: str,
        stored: list[rdb.Resource],
    ) -> PlanInput:
        return PlanInput(
            stack_id=stack_id,
            root_stack_id=root_id,
            raw_template_id=template_id,
            requires={n: d.requires for n, d in definition.resources.items()},
            types={n: d.type for n, d in definition.resources.items()},
            stored=stored,
            new_id=self.deps.new_id,
        )

    def _start(
        self,
        conn: Any,
        stack_id: str,
        expected: str | None,
        action: str,
        template_id: str,
        plan: Any,
        now: Any,
        deadline: Any,
        rollback: bool,
    ) -> str:
        traversal_id = self.deps.new_id()
        started = trdb.start_traversal(
            conn,
            traversal_id=traversal_id,
            stack_id=stack_id,
            expected_current=expected,
            action=action,
            raw_template_id=template_id,
            nodes=plan.nodes,
            edges=plan.edges,
            now=now,
            deadline_at=deadline,
            rollback_on_failure=rollback,
        )
        if not started:
            raise KilnError("Another operation on this stack started at the same time")
        with_stack = sdb.get_stack(conn, stack_id)
        evdb.add_event(
            conn,
            evdb.NewEvent(
                uuid=self.deps.new_id(),
                stack_id=stack_id,
                resource_name=with_stack.name,
                resource_type="OS::Heat::Stack",
                action=action,
                status="IN_PROGRESS",
                status_reason=f"Stack {action} started",
                physical_resource_id=stack_id,
            ),
            now=now,
        )
        if not plan.nodes:  # nothing to do: the traversal is complete at once
            trdb.finish_traversal(conn, traversal_id, state="COMPLETE", now=now)
            sdb.update_stack_status(
                conn,
                stack_id,
                traversal_id=traversal_id,
                outcome=StackStatus(action, "COMPLETE", f"Stack {action} completed successfully"),
                now=now,
            )
            if action == "DELETE":
                sdb.soft_delete_stack(conn, stack_id, now=now)
        return traversal_id

    # -- reads -----------------------------------------------------------------------------------
    def get_stack(self, stack_id: str) -> sdb.Stack:
        with dbe.read(self.deps.db) as conn:
            return sdb.get_stack(conn, stack_id)

    def outputs(self, stack_id: str, stack: sdb.Stack | None = None) -> dict[str, OutputValue]:
        """Every output resolved now against the stack's resources (``stack``: its row
        when the caller has just read it, saving a query on every show)."""
        with dbe.read(self.deps.db) as conn:
            if stack is None:
                stack = sdb.get_stack(conn, stack_id)
            rows = current_rows(rdb.list_resources(conn, stack_id))
            compiled = self.runner.compiled_for(conn, stack, stack.raw_template_id)
        state = RowState(compiled.definition, rows)
        return {
            name: resolve_output(state, out)  # type: ignore[arg-type]
            for name, out in compiled.definition.outputs.items()
        }

    def resources(self, stack_id: str) -> list[rdb.Resource]:
        with dbe.read(self.deps.db) as conn:
            return list(current_rows(rdb.list_resources(conn, stack_id)).values())

    def events(self, stack_id: str) -> list[evdb.Event]:
        with dbe.read(self.deps.db) as conn:
            return evdb.list_events(conn, [stack_id])


def _settings(request: StackRequest) -> dict[str, Any]:
    if not request.store_settings:
        return {}
    return {
        "tags": list(request.tags),
        "timeout_mins": request.timeout_mins,
        "disable_rollback": request.disable_rollback,
    }


def _patched(request: StackRequest, stored: tdb.RawTemplate) -> StackRequest:
    """A PATCH request made whole from what the stack has stored."""
    from dataclasses import replace

    from kiln.template.loader import load_environment

    environment = dict(stored.environment)
    parameters = {
        k: v
        for k, v in dict(environment.get("parameters") or {}).items()
        if k not in request.clear_parameters
    }
    defaults = dict(environment.get("parameter_defaults") or {})
    for key in request.clear_parameters:
        defaults.pop(key, None)
    template = request.template if request.template is not None else stored.template
    files = {**stored.files, **request.files}
    if request.environment_files:
        # The files merge over the stored environment (an inline one is
        # ignored when there are files): the stored one goes first.
        environment.update(parameters=parameters, parameter_defaults=defaults)
        return replace(
            request,
            template=template,
            environment=None,
            environment_files=[
                ("<existing environment>", environment),
                *request.environment_files,
            ],
            files=files,
        )
    given_env = request.environment
    if isinstance(given_env, str):
        given_env = load_environment(given_env).data
    given = dict(given_env or {})
    parameters.update(given.pop("parameters", None) or {})
    defaults.update(given.pop("parameter_defaults", None) or {})
    registry = dict(environment.get("resource_registry") or {})
    registry.update(given.pop("resource_registry", None) or {})
    environment.update(given)
    environment.update(
        parameters=parameters, parameter_defaults=defaults, resource_registry=registry
    )
    return replace(request, template=template, environment=environment, files=files)


def _adopted(
    row: rdb.NewResource, adopt: Mapping[str, tuple[str | None, Mapping[str, Any]]]
) -> rdb.NewResource:
    from dataclasses import replace

    physical_id = adopt.get(row.name, (None, {}))[0]
    return replace(row, physical_id=physical_id) if physical_id else row


def _with_template(row: rdb.NewResource, template_id: str) -> rdb.NewResource:
    from dataclasses import replace

    return replace(row, raw_template_id=template_id)


__all__ = ["Caller", "KilnError", "StackRequest", "StackService", "ValidationFailed"]
