"""An in-memory ResourceContext for plugin unit tests, and a driver for one action.

:class:`FakeContext` implements kiln.plugin.context.ResourceContext with plain
attributes: typed properties (coerced against the plugin's schema by
:meth:`FakeContext.for_plugin`), a dict data store with redact flags, a virtual
clock that only moves when told (:meth:`FakeContext.advance`), a seeded
``random.Random`` and cloud clients from a dict of fakes. :func:`run_action`
plays the engine for one action: ``handle_<action>`` then ``check_<action>_complete``
polls, one virtual second apart. :func:`decide` is the engine's update decision
for a plugin instance. During an UPDATE, ``ctx.properties`` stay the stored
(old) ones until the update completes, as the engine persists them only then.
:class:`FakeNestedStacks` is the ``stacks`` client of plugins that own child
stacks: children as data, with made-up child resources.
Imports: anything (test support).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from random import Random
from typing import Any, TypeVar

from kiln.core.errors import raise_all
from kiln.plugin.context import ResourceContext
from kiln.plugin.decisions import (
    StoredResource,
    UpdateDecision,
    changed_properties,
    decide_resource_update,
)
from kiln.plugin.names import physical_resource_name
from kiln.plugin.nested import ChildState, NestedStacks
from kiln.plugin.resource import Resource
from kiln.schema.custom import CustomConstraints
from kiln.schema.properties import coerce_properties

R = TypeVar("R", bound=Resource)

#: where every fake clock starts unless told otherwise
START = datetime(2026, 1, 1, tzinfo=UTC)

_SAME: Any = object()  # "keep the current metadata"


class PollLimitExceeded(AssertionError):
    """The action was still in progress after the allowed number of polls."""


def typed_properties(
    plugin: type[Resource],
    properties: Mapping[str, Any] | None,
    custom: CustomConstraints | None = None,
) -> dict[str, Any]:
    """``properties`` as the engine gives them to ``plugin``: typed, defaults applied.

    Raises the schema's error (or a ValidationFailed with all of them). Types
    that accept any properties get them unchanged. Custom constraints are
    checked only when ``custom`` is given. The plugin's ``validate`` hook is
    not run: tests call it, or see the plugin call it when it acts.
    """
    if plugin.accepts_any_properties:
        return dict(properties or {})
    typed, errors = coerce_properties(plugin.properties_schema, properties, custom)
    raise_all(errors)
    return typed


def _uuid_for(text: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"kiln-fake:{text}"))


@dataclass(eq=False)
class FakeContext:
    """One resource's world, in memory. Every field may be set or changed by a test."""

    name: str = "resource"
    type_name: str = ""
    stack_name: str = "stack"
    stack_id: str = ""
    project_id: str = "project"
    action: str = "CREATE"
    properties: Mapping[str, Any] = field(default_factory=dict)
    metadata: Any = None
    update_policy: Mapping[str, Any] = field(default_factory=dict)
    physical_id: str | None = None
    #: the resource row's UUID, from which the physical name's short id derives
    resource_uuid: str = ""
    #: the type's physical name length limit
    name_limit: int = 255
    clients: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    clock: datetime = START
    #: custom constraints checked when properties are (re)typed; None skips them
    custom: CustomConstraints | None = None
    data: dict[str, Any] = field(default_factory=dict)
    redacted: set[str] = field(default_factory=set)
    #: the stack tree's stack-domain project, once made (through ``clients["identity"]``)
    stack_user_project: str | None = None
    random: Random = field(init=False)

    def __post_init__(self) -> None:
        if not self.stack_id:
            self.stack_id = _uuid_for(f"stack/{self.stack_name}")
        if not self.resource_uuid:
            self.resource_uuid = _uuid_for(f"{self.stack_id}/{self.name}")
        self.random = Random(self.seed)

    @classmethod
    def for_plugin(
        cls, plugin: type[Resource], properties: Mapping[str, Any] | None = None, **kw: Any
    ) -> FakeContext:
        """A context for ``plugin`` with ``properties`` typed against its schema."""
        kw.setdefault("type_name", plugin.type_name)
        kw.setdefault("name_limit", plugin.physical_name_limit)
        typed = typed_properties(plugin, properties, kw.get("custom"))
        return cls(properties=typed, **kw)

    # -- identity ---------------------------------------------------------------------
    def set_physical_id(self, physical_id: str | None) -> None:
        self.physical_id = physical_id

    def physical_resource_name(self) -> str:
        return physical_resource_name(
            self.stack_name, self.name, self.resource_uuid, self.name_limit
        )

    def metadata_set(self, metadata: Any) -> None:
        self.metadata = metadata

    def stack_user_project_id(self) -> str:
        if self.stack_user_project is None:
            from kiln.plugin.stack_user import make_stack_user_project

            project = make_stack_user_project(
                self.client("identity"), self.project_id, self.stack_id
            )
            self.stack_user_project = project.id
        return self.stack_user_project

    # -- data store -------------------------------------------------------------------
    def data_get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def data_set(self, key: str, value: Any, *, redact: bool = False) -> None:
        self.data[key] = value
        if redact:
            self.redacted.add(key)
        else:
            self.redacted.discard(key)

    def data_delete(self, key: str) -> None:
        self.data.pop(key, None)
        self.redacted.discard(key)

    # -- clock and clients ------------------------------------------------------------
    def now(self) -> datetime:
        return self.clock

    def advance(self, seconds: float) -> None:
        """Move the virtual clock forward."""
        self.clock += timedelta(seconds=seconds)

    def client(self, service: str) -> Any:
        try:
            return self.clients[service]
        except KeyError:
            raise LookupError(f"no fake client for service {service!r}") from None


def _conforms(ctx: FakeContext) -> ResourceContext:
    return ctx  # mypy checks here that FakeContext implements the protocol


def fake_resource(
    plugin: type[R], properties: Mapping[str, Any] | None = None, **kw: Any
) -> tuple[R, FakeContext]:
    """A plugin instance on a fresh :class:`FakeContext` (see ``for_plugin``)."""
    ctx = FakeContext.for_plugin(plugin, properties, **kw)
    return plugin(ctx), ctx


def _fake(resource: Resource) -> FakeContext:
    if not isinstance(resource.ctx, FakeContext):
        raise TypeError("the resource does not act through a FakeContext")
    return resource.ctx


def run_action(
    resource: Resource,
    action: str,
    *,
    new_properties: Mapping[str, Any] | None = None,
    new_metadata: Any = _SAME,
    max_polls: int = 100,
) -> int:
    """Run ``handle_<action>`` then poll ``check_<action>_complete``; the number of polls.

    The fake clock advances one second after each poll that is not complete.
    For ``update``, ``new_properties`` (raw; typed here, default: unchanged)
    and ``new_metadata`` become the context's when the update completes.
    Errors of the hooks propagate (ResourceFailure, UpdateReplace, ...);
    :class:`PollLimitExceeded` when still in progress after ``max_polls`` polls.
    """
    ctx = _fake(resource)
    verb = action.lower()
    ctx.action = verb.upper()
    new: dict[str, Any] = {}
    if verb == "update":
        new = (
            dict(ctx.properties)
            if new_properties is None
            else typed_properties(type(resource), new_properties, ctx.custom)
        )
        cookie = resource.handle_update(new, changed_properties(ctx.properties, new))
    else:
        handle = getattr(resource, f"handle_{verb}", None)
        if handle is None or verb == "signal":
            raise ValueError(f"no action {action!r} to run")
        cookie = handle()
    check = getattr(resource, f"check_{verb}_complete")
    polls = 0
    while not check(cookie):
        polls += 1
        if polls >= max_polls:
            raise PollLimitExceeded(f"{ctx.action} still in progress after {max_polls} polls")
        ctx.advance(1)
    polls += 1
    if verb == "update":
        ctx.properties = new
        if new_metadata is not _SAME:
            ctx.metadata = new_metadata
    return polls


def decide(
    resource: Resource,
    new_properties: Mapping[str, Any] | None,
    new_metadata: Any = _SAME,
    *,
    stored_action: str = "CREATE",
    stored_status: str = "COMPLETE",
    restricted: Collection[str] = (),
) -> UpdateDecision:
    """The engine's decision for moving ``resource`` to ``new_properties`` (raw; typed here).

    The stored side is the context's properties and metadata, in state
    ``stored_action``/``stored_status``.
    """
    ctx = _fake(resource)
    stored = StoredResource(stored_action, stored_status, ctx.properties, ctx.metadata)
    new = typed_properties(type(resource), new_properties, ctx.custom)
    metadata = ctx.metadata if new_metadata is _SAME else new_metadata
    return decide_resource_update(resource, stored, new, metadata, restricted=restricted)


# -- child stacks ----------------------------------------------------------------------------
@dataclass
class FakeChild:
    """One child stack of :class:`FakeNestedStacks`: what it was given, and where it is."""

    template: dict[str, Any]
    environment: dict[str, Any]
    files: dict[str, Any]
    parameters: dict[str, Any]
    timeout_mins: int | None = None
    action: str = "CREATE"
    status: str = "IN_PROGRESS"
    reason: str = ""
    polls_left: int = 0
    deleted: bool = False

    @property
    def resources(self) -> dict[str, Any]:
        found = self.template.get("resources")
        return dict(found) if isinstance(found, Mapping) else {}


@dataclass(eq=False)
class FakeNestedStacks:
    """An in-memory ``stacks`` client (kiln.plugin.nested.NestedStacks).

    Each action ends after ``polls`` calls of :meth:`state`: COMPLETE, or FAILED
    with ``fail_reason`` when set. A child resource's reference is
    ``<stack id>/<name>`` and its attributes are its properties, so a test reads a
    member's property back as its attribute. Properties and outputs resolve
    ``get_param`` (the child's parameters), ``get_resource`` and ``get_attr`` (with a
    path, or the all-attributes form); nothing else.
    ``environment`` and ``files`` are what a child inherits from the parent.
    """

    environment: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Any] = field(default_factory=dict)
    polls: int = 1
    fail_reason: str | None = None
    children: dict[str, FakeChild] = field(default_factory=dict)

    def _start(self, child: FakeChild, action: str) -> None:
        child.action, child.status, child.reason = action, "IN_PROGRESS", ""
        child.polls_left = self.polls

    def create(
        self,
        *,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        parameters: Mapping[str, Any],
        timeout_mins: int | None = None,
    ) -> str:
        stack_id = f"child-{len(self.children) + 1}"
        child = FakeChild(
            dict(template), dict(environment), dict(files), dict(parameters), timeout_mins
        )
        self.children[stack_id] = child
        self._start(child, "CREATE")
        return stack_id

    def update(
        self,
        stack_id: str,
        *,
        template: Mapping[str, Any],
        environment: Mapping[str, Any],
        files: Mapping[str, Any],
        parameters: Mapping[str, Any],
    ) -> None:
        child = self._live(stack_id)
        if child is None:
            raise LookupError(f"no child stack {stack_id}")
        child.template, child.environment = dict(template), dict(environment)
        child.files, child.parameters = dict(files), dict(parameters)
        self._start(child, "UPDATE")

    def delete(self, stack_id: str) -> None:
        child = self._live(stack_id)
        if child is not None and child.action != "DELETE":
            self._start(child, "DELETE")

    def _live(self, stack_id: str) -> FakeChild | None:
        child = self.children.get(stack_id)
        return None if child is None or child.deleted else child

    def state(self, stack_id: str) -> ChildState | None:
        child = self._live(stack_id)
        if child is None:
            return None
        if child.status == "IN_PROGRESS":
            child.polls_left -= 1
            if child.polls_left <= 0:
                child.status = "FAILED" if self.fail_reason else "COMPLETE"
                child.reason = self.fail_reason or ""
                if child.action == "DELETE" and child.status == "COMPLETE":
                    child.deleted = True
                    return None
        return ChildState(child.action, child.status, child.reason)

    def _made_up(self, stack_id: str, name: str) -> tuple[Any, dict[str, Any]] | None:
        child = self._live(stack_id)
        definition = child.resources.get(name) if child is not None else None
        if not isinstance(definition, Mapping):
            return None
        return f"{stack_id}/{name}", self._resolve(
            stack_id, dict(definition.get("properties") or {})
        )

    def resource(self, stack_id: str, name: str) -> tuple[Any, dict[str, Any]] | None:
        return self._made_up(stack_id, name)

    def resource_attribute(self, stack_id: str, name: str, attribute: str) -> Any:
        found = self._made_up(stack_id, name)
        return None if found is None else found[1].get(attribute)

    def resource_attributes(self, stack_id: str, names: Sequence[str], attribute: str) -> list[Any]:
        return [self.resource_attribute(stack_id, name, attribute) for name in names]

    def outputs(self, stack_id: str) -> dict[str, Any]:
        child = self._live(stack_id)
        outputs = child.template.get("outputs") if child is not None else None
        if not isinstance(outputs, Mapping):
            return {}
        return {k: self._resolve(stack_id, v.get("value")) for k, v in outputs.items()}

    def _resolve(self, stack_id: str, value: Any) -> Any:
        if isinstance(value, Mapping) and len(value) == 1:
            ((key, arg),) = value.items()
            if key == "get_param":
                child = self._live(stack_id)
                return None if child is None else child.parameters.get(arg)
            if key == "get_resource":
                found = self._made_up(stack_id, arg)
                return None if found is None else found[0]
            if key == "get_attr":
                found = self._made_up(stack_id, arg[0])
                if found is None or len(arg) == 1:
                    return None if found is None else found[1]
                result = found[1].get(arg[1])
                for step in arg[2:]:
                    result = result.get(step) if isinstance(result, Mapping) else None
                return result
        if isinstance(value, Mapping):
            return {k: self._resolve(stack_id, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._resolve(stack_id, v) for v in value]
        return value

    def parent_environment(self) -> dict[str, Any]:
        return dict(self.environment)

    def parent_files(self) -> dict[str, Any]:
        return dict(self.files)


def _stacks_conform(fake: FakeNestedStacks) -> NestedStacks:
    return fake  # mypy checks here that FakeNestedStacks implements the protocol
