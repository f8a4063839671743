"""An in-memory ResourceContext for plugin unit tests, and a driver for one action.

:class:`FakeContext` implements kiln.plugin.context.ResourceContext with plain
attributes: typed properties (coerced against the plugin's schema by
:meth:`FakeContext.for_plugin`), a dict data store with redact flags, a virtual
clock that only moves when told (:meth:`FakeContext.advance`), a seeded
``random.Random`` and cloud clients from a dict of fakes. :func:`run_action`
plays the engine for one action: ``handle_<action>`` then ``check_<action>_complete``
polls, one virtual second apart. :func:`decide` is the engine's update decision
for a plugin instance. During an UPDATE, ``ctx.properties`` stay the stored (old)
ones until the update completes, as the engine persists them only then.
Imports: anything (test support).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
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
