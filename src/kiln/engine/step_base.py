"""What every step shares: the engine's dependencies, loading, and helpers.

``StepBase`` loads a task's traversal, stack, row and compiled definition, and
offers the helpers steps use (predecessor rows, typed properties, attributes,
the plugin's context and writing it back, events). The steps themselves are in
``steps.py`` (converge and cleanup) and ``step_endings.py`` (completion,
failure, parking, abandoning).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.engine import Engine

from kiln.cloud.api.clients import CloudConnector
from kiln.cloud.api.scope import CloudScope
from kiln.core.clock import Clock
from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.db import traversals as trdb
from kiln.db.events import NewEvent
from kiln.db.resources import Resource as Row
from kiln.db.resources import ResourceChange
from kiln.db.tasks import (
    NodeTask,
    resource_in_flight,
)
from kiln.engine.compiled import ALL_ATTRIBUTES, CompiledCache, CompiledStack, RowState
from kiln.engine.nested import TEMPLATE_KEY, EngineNestedStacks, ProviderSpec, TemplateResource
from kiln.engine.plan import CONVERGE, converge_key
from kiln.engine.resource_context import EngineResourceContext, ScopedCloud
from kiln.engine.stack_users import stack_user_project
from kiln.plugin.names import short_id
from kiln.plugin.registry import PluginRegistry
from kiln.plugin.resource import Resource
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import coerce_properties
from kiln.template.functions.base import resolve_top
from kiln.template.provider import ProviderResource, nested_parameters
from kiln.template.stack import Limits, StackIdentity
from kiln.template.stack_resources import BuiltinResource

log = logging.getLogger(__name__)

REQUESTED = "REQUESTED"
POLLING = "POLLING"
HOOK = "HOOK"  # a task paused at a pre-* hook: nothing in flight
HOOK_AFTER = "HOOK_AFTER"  # paused at a post-* hook: its action is done and recorded

START = "start"
BEFORE_HANDLE = "before_handle"
AFTER_HANDLE = "after_handle"
BEFORE_OUTCOME = "before_outcome"
AFTER_OUTCOME = "after_outcome"
FAULT_POINTS = (START, BEFORE_HANDLE, AFTER_HANDLE, BEFORE_OUTCOME, AFTER_OUTCOME)


@dataclass
class EngineDeps:
    """What every step needs, wired once by the composition root."""

    db: Engine
    registry: PluginRegistry
    custom: CustomConstraints
    clock: Clock
    engine_id: str
    lease: timedelta = timedelta(seconds=15)
    clients: Mapping[str, Any] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.SystemRandom)
    new_id: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    #: called after a traversal failed (the service starts a rollback if asked to)
    on_traversal_failed: Callable[[str], object] = field(default=lambda _tid: None)
    cache: CompiledCache | None = None
    #: test hook called at each named step boundary (FAULT_POINTS); None in production
    fault_point: Callable[[str, NodeTask], None] | None = None
    #: Heat's max_events_per_stack: older events are pruned when a stack action ends
    max_events_per_stack: int = 1000
    #: tasks of one stack tree (a root stack and its nested stacks) running at once
    #: across all engines (a soft cap on PostgreSQL/MariaDB); 0 = unlimited
    max_concurrent_tasks_per_stack: int = 64
    #: wakes idle workers when a step starts new work (a child stack); set by the runtime
    wake: Callable[[], None] = field(default=lambda: None)
    #: the cloud plugins act on (kiln.cloud.api.clients.CloudConnector); None: no cloud
    cloud: CloudConnector | None = None
    #: Heat's max_resources_per_stack, max_nested_stack_depth and max_template_size,
    #: checked when a stack's template is validated
    limits: Limits = field(default_factory=Limits)
    #: Heat's stack_action_timeout in minutes, for stacks that set no timeout (None: none)
    default_timeout_mins: int | None = None

    def scoped_cloud(self, owner: Any) -> ScopedCloud | None:
        """The cloud clients acting for ``owner``: a stack row (its project, owner and the
        owner's roles), or a caller (Caller, rpc Context)."""
        if self.cloud is None:
            return None
        roles = getattr(owner, "user_roles", None)
        if roles is None:
            roles = getattr(owner, "roles", ())
        scope = CloudScope(
            owner.project_id,
            owner.user_id,
            frozenset(roles or ()),
            trust_id=getattr(owner, "trust_id", None),
        )
        return ScopedCloud(self.cloud, scope)

    def compiled_cache(self) -> CompiledCache:
        if self.cache is None:
            self.cache = CompiledCache(self.registry, self.custom)
        return self.cache


def poll_delay(polls: int) -> float:
    """Seconds before the next poll: quick at first, then backing off to 2 s."""
    return float(min(0.1 * (1.5**polls), 2.0))


def next_poll(cookie: dict[str, Any], hint: Any) -> tuple[dict[str, Any], float]:
    """The cookie with one more poll counted, and the seconds until that poll (the
    plugin's ``poll_after`` hint, or the default backoff)."""
    polls = int(cookie.get("polls", 0)) + 1
    delay = poll_delay(polls) if hint is None else max(0.0, float(hint))
    return {**cookie, "polls": polls}, delay


class LeaseTooShort(BaseException):
    """Too little of the task's lease is left to start a cloud call safely (self-fencing).

    A BaseException: the handlers that turn a plugin's exceptions into resource
    failures must let it through.
    """


class ResourceBusy(Exception):
    """The resource row is being changed by another task right now."""


@dataclass
class _Loaded:
    task: NodeTask
    traversal: trdb.Traversal
    stack: sdb.Stack
    compiled: CompiledStack
    row: Row
    owned: bool = False
    preds: dict[str, Row] | None = None
    #: the traversal is over: finish the action in flight, do not propagate
    finishing: bool = False
    #: another traversal's task has an action in flight on the row
    blocked: bool = False

    def own(self, conn: Any, now: Any) -> None:
        """Take ownership of the row for this step's writes (CAS on its version)."""
        if self.owned:
            return
        if not rdb.claim_resource(
            conn,
            self.row.id,
            traversal_id=self.task.traversal_id,
            epoch=self.task.lease_epoch,
            expected_version=self.row.version,
            now=now,
        ):
            raise ResourceBusy(self.row.id)
        self.owned = True


class _RowGone(Exception):
    """The task's row was deleted (by an older traversal that finished deleting it)."""

    def __init__(self, traversal: trdb.Traversal, stack: sdb.Stack) -> None:
        super().__init__(traversal.id)
        self.traversal = traversal
        self.stack = stack


def write_pending_data(conn: Any, resource_id: str, ctx: EngineResourceContext) -> None:
    """Store what the plugin set or deleted in its resource data during the step."""
    for key, pending in ctx.pending_data.items():
        if pending is None:
            rdb.delete_resource_data(conn, resource_id, key)
        else:
            value = json.dumps(pending[0])
            rdb.set_resource_data(conn, resource_id, key, value, redact=pending[1])
    ctx.pending_data.clear()


class LazyData(dict[str, rdb.ResourceDatum]):
    """A resource's data store, read from the database on first use only."""

    def __init__(self, db: Engine, resource_id: str) -> None:
        super().__init__()
        self._db = db
        self._resource_id = resource_id
        self._loaded = False

    def get(self, key: str, default: Any = None) -> Any:
        if not self._loaded:
            with dbe.read(self._db) as conn:
                self.update(rdb.get_resource_data(conn, self._resource_id))
            self._loaded = True
        return super().get(key, default)


class StepBase:
    """Loading and helpers shared by every kind of step."""

    def __init__(self, deps: EngineDeps) -> None:
        self.deps = deps
        self._templates: dict[str, tdb.RawTemplate] = {}
        self._stacks: dict[str, sdb.Stack] = {}  # identity only: name, project, root
        self._edges: dict[str, dict[str, list[str]]] = {}  # traversal -> node -> successors
        self._stack_service: Any = None
        #: set by a step that made another task due (a parent's child finished)
        self.wake_after_step = False
        #: set by the step that finished deleting a stack with a trust
        self.trust_to_give_back: str | None = None
        #: set by the step that finished deleting a stack tree with stack users: the root
        #: stack and its stack-domain project, removed once this step has committed
        self.stack_users_to_remove: tuple[sdb.Stack, str] | None = None

    def _run(self, task: NodeTask) -> list[str]:
        """One step of ``task`` (the step runner implements it)."""
        raise NotImplementedError

    def _check_lease(self, task: NodeTask) -> None:
        """Self-fencing: never start a cloud call with less than a third of the lease left.

        Database writes are fenced by the lease epoch, but a cloud call is not: an
        engine that lost its lease (a long pause) must not begin one that another
        engine may begin too.
        """
        expires = task.lease_expires_at
        if expires is not None and expires - self.deps.clock.now() < self.deps.lease / 3:
            raise LeaseTooShort(task.node_key)

    def _fault(self, point: str, task: NodeTask) -> None:
        if self.deps.fault_point is not None:
            self.deps.fault_point(point, task)

    # -- loading ------------------------------------------------------------------------
    def _raw_template(self, conn: Any, template_id: str) -> tdb.RawTemplate:
        found = self._templates.get(template_id)
        if found is None:
            found = tdb.get_raw_template(conn, template_id)
            self._templates[template_id] = found
        return found

    def compiled_for(self, conn: Any, stack: sdb.Stack, template_id: str) -> CompiledStack:
        cached = self.deps.compiled_cache().peek(template_id, stack.id)
        if cached is not None:  # the raw template (a large document) is not even read
            return cached
        raw = self._raw_template(conn, template_id)
        identity = StackIdentity(name=stack.name, id=stack.id, project_id=stack.project_id)
        return self.deps.compiled_cache().get(
            template_id, raw.template, raw.environment, raw.files, identity
        )

    def _load(self, task: NodeTask) -> _Loaded | None:
        """What the step needs; None when the traversal is over and the task had not started."""
        with dbe.read(self.deps.db) as conn:
            traversal = trdb.get_traversal(conn, task.traversal_id)
            if traversal.cancel_requested or (
                traversal.state != "RUNNING" and task.phase in (None, HOOK)
            ):
                return None
            stack = self._stacks.get(task.stack_id)
            if stack is None:
                stack = self._stacks.setdefault(task.stack_id, sdb.get_stack(conn, task.stack_id))
            assert task.resource_id is not None
            row_id = task.result_resource_id or task.resource_id
            row = rdb.get_resources(conn, [row_id]).get(row_id)
            if row is None:
                raise _RowGone(traversal, stack)
            template_id = traversal.raw_template_id
            if task.kind != CONVERGE:
                template_id = row.raw_template_id
            compiled = self.compiled_for(conn, stack, template_id)
            loaded = _Loaded(
                task, traversal, stack, compiled, row, finishing=traversal.state != "RUNNING"
            )
            owner = row.owner_traversal_id
            if task.phase is None and owner is not None and owner != task.traversal_id:
                loaded.blocked = resource_in_flight(conn, owner, row.id)
            if task.kind == CONVERGE:
                definition = compiled.definition.resources.get(task.resource_name)
                if definition is not None and definition.requires:
                    keys = [converge_key(n) for n in definition.requires]
                    found = rdb.resources_of_tasks(conn, task.traversal_id, keys)
                    loaded.preds = {key[2:]: r for key, r in found.items()}
        return loaded

    # -- helpers ----------------------------------------------------------------------------
    def _successors(self, conn: Any, ld: _Loaded) -> list[str]:
        """The node's successors, from the traversal's edges read once per traversal.

        Empty for a traversal that is over: its completions do not propagate.
        """
        if ld.finishing:
            return []
        tid = ld.task.traversal_id
        edges = self._edges.get(tid)
        if edges is None:
            edges = {}
            for before, after in trdb.list_edges(conn, tid):
                edges.setdefault(before, []).append(after)
            self._edges[tid] = edges
            while len(self._edges) > 64:
                self._edges.pop(next(iter(self._edges)))
        return edges.get(ld.task.node_key, [])

    def _predecessors(self, ld: _Loaded, requires: frozenset[str]) -> dict[str, Row]:
        if not requires:
            return {}
        if ld.preds is None:
            keys = [converge_key(n) for n in requires]
            with dbe.read(self.deps.db) as conn:
                found = rdb.resources_of_tasks(conn, ld.task.traversal_id, keys)
            ld.preds = {key[2:]: row for key, row in found.items()}
        return ld.preds

    def _required_rows(self, ld: _Loaded, requires: frozenset[str]) -> list[str]:
        return sorted(row.id for row in self._predecessors(ld, requires).values())

    def _typed(self, plugin_cls: type[Resource], props: Mapping[str, Any]) -> dict[str, Any]:
        if plugin_cls.accepts_any_properties:
            return dict(props)
        typed, errors = coerce_properties(
            plugin_cls.properties_schema, plugin_cls.translate(props), self.deps.custom
        )
        if errors:
            raise errors[0]
        return {k: v for k, v in typed.items()}

    def _stored_properties(self, plugin_cls: type[Resource], row: Row) -> dict[str, Any]:
        """A row's last properties with the schema's defaults (a failed create stored none)."""
        if plugin_cls.accepts_any_properties:
            return dict(row.properties)
        typed, _ = coerce_properties(plugin_cls.properties_schema, row.properties, self.deps.custom)
        return {k: v for k, v in typed.items()}

    def _attributes(self, compiled: CompiledStack, plugin: Resource, name: str) -> dict[str, Any]:
        """The attribute values the stack's templates ask for, read from the plugin now."""
        wanted = compiled.wanted.get(name, set())
        if ALL_ATTRIBUTES in wanted:
            names = set(type(plugin).attributes_schema) | (wanted - {ALL_ATTRIBUTES})
            typed = compiled.definition.typed.get(name)
            if isinstance(typed, ProviderResource):  # a template resource: its outputs
                names |= set(typed.attribute_names)
        else:
            names = wanted
        out = {}
        for attr in sorted(names):
            if attr == "show":
                continue
            try:
                out[attr] = plugin.get_attribute(attr)
            except Exception:
                log.exception("attribute %s of %s failed", attr, name)
                out[attr] = None
        return out

    def _plugin_for(
        self, compiled: CompiledStack, name: str, type_name: str
    ) -> type[Resource] | None:
        """The implementation of a resource: its registry target, or a provider template."""
        typed = compiled.definition.typed.get(name)
        if isinstance(typed, ProviderResource):
            return TemplateResource
        if isinstance(typed, BuiltinResource):
            return self.deps.registry.plugin(typed.type.name)
        return self.deps.registry.plugin(type_name)

    def _service(self) -> Any:
        """A StackService over the same dependencies (for child stacks)."""
        if self._stack_service is None:
            from kiln.engine.service import StackService

            self._stack_service = StackService(self.deps, wake=self.deps.wake)
        return self._stack_service

    def _environment_identity(self, ld: _Loaded) -> str:
        """What a child stack inherits from the parent, as a hash (environment and files)."""
        definition = ld.compiled.definition
        text = json.dumps(
            [definition.environment.to_dict(), dict(definition.files)], sort_keys=True, default=str
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def provider_spec(self, ld: _Loaded, name: str, props: Mapping[str, Any]) -> ProviderSpec:
        """The nested stack a template resource makes of its provider template."""
        definition = ld.compiled.definition
        provider = definition.typed[name]
        assert isinstance(provider, ProviderResource) and provider.template is not None
        given = {k: v for k, v in props.items() if k != TEMPLATE_KEY and v is not None}
        environment = definition.environment.child(
            name, nested_parameters(given), exclude_type=definition.resources[name].type
        )
        child = f"{ld.stack.name}-{name}-{short_id(ld.row.id)}"
        return ProviderSpec(
            template=provider.template.data,
            environment=environment.to_dict(),
            files=dict(definition.files),
            location=provider.location,
            arn_prefix=f"arn:openstack:heat::{ld.stack.project_id}:stacks/{child}",
        )

    def _context(
        self,
        ld: _Loaded,
        row: Row,
        plugin_cls: type[Resource],
        action: str,
        props: Mapping[str, Any],
        metadata: Any,
    ) -> EngineResourceContext:
        db = self.deps.db
        clients = dict(self.deps.clients)
        clients["stacks"] = EngineNestedStacks(self._service(), ld.stack, row.name, row.id)
        if plugin_cls is TemplateResource and row.name in ld.compiled.definition.typed:
            clients["provider"] = self.provider_spec(ld, row.name, props)

        cloud = self.deps.scoped_cloud(ld.stack)
        return EngineResourceContext(
            name=row.name,
            type_name=row.type,
            stack_name=ld.stack.name,
            stack_id=ld.stack.id,
            project_id=ld.stack.project_id,
            action=action,
            properties=props,
            metadata=metadata,
            resource_uuid=row.id,
            clock=self.deps.clock,
            stored_physical_id=row.physical_id,
            stored_data=LazyData(db, row.id),
            update_policy=self._update_policy(ld, row.name),
            clients=clients,
            cloud=cloud,
            stack_user_project=None if cloud is None else self._stack_users(ld.stack, cloud),
            name_limit=plugin_cls.physical_name_limit,
            rng=self.deps.rng,
        )

    def _stack_users(self, stack: sdb.Stack, cloud: ScopedCloud) -> Callable[[], str]:
        """Makes (once per stack tree) the stack-domain project a stack user lives in."""
        db = self.deps.db
        return lambda: stack_user_project(db, cloud.client("identity"), stack)

    def _update_policy(self, ld: _Loaded, name: str) -> dict[str, Any]:
        """The resource's update_policy, resolved (functions in it are rare)."""
        definition = ld.compiled.definition.resources.get(name)
        if definition is None or definition.update_policy is None:
            return {}
        try:
            value = resolve_top(
                definition.update_policy, RowState(ld.compiled.definition, ld.preds or {})
            )
        except KilnError:
            return {}
        return dict(value) if isinstance(value, dict) else {}

    def _write_context(
        self, conn: Any, ld: _Loaded, ctx: EngineResourceContext, physical: bool = True
    ) -> None:
        row = ld.row
        write_pending_data(conn, row.id, ctx)
        if physical and ctx.physical_id_changed:
            rdb.write_owned_resource(
                conn,
                row.id,
                ResourceChange(physical_id=ctx.physical_id),
                traversal_id=ld.task.traversal_id,
                epoch=ld.task.lease_epoch,
                now=self.deps.clock.now(),
            )

    def _event(
        self,
        ld: _Loaded,
        row: Row,
        action: str,
        status: str,
        reason: str,
        ctx: EngineResourceContext | None,
    ) -> NewEvent:
        physical = ctx.physical_id if ctx is not None else row.physical_id
        return NewEvent(
            uuid=self.deps.new_id(),
            stack_id=ld.stack.id,
            resource_name=row.name,
            resource_type=row.type,
            action=action,
            status=status,
            status_reason=reason,
            physical_resource_id=physical,
        )


def _can_find_existing(plugin_cls: type[Resource]) -> bool:
    return plugin_cls.find_existing is not Resource.find_existing


def _overrides(plugin_cls: type[Resource], hook: str) -> bool:
    """Whether the plugin implements ``hook`` (the base class's hooks do nothing)."""
    return getattr(plugin_cls, hook) is not getattr(Resource, hook)


def _intent(action: str, props: Mapping[str, Any], metadata: Any) -> dict[str, Any]:
    """The cookie of an action about to start: what a resumed step goes on with."""
    return {"action": action, "properties": dict(props), "metadata": metadata}


def _reason(err: BaseException, name: str) -> str:
    """Heat's form: ``<kind>: resources.<name>: <message>``."""
    if isinstance(err, KilnError):
        return f"{err.kind}: resources.{name}: {err.full_message}"
    return f"{type(err).__name__}: resources.{name}: {err}"


def _with_result(task: NodeTask, row_id: str) -> NodeTask:
    from dataclasses import replace

    return replace(task, result_resource_id=row_id)
