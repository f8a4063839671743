"""Engine calls that read resources and events of a stack (heat-api.md 2.3, 2.4).

Every request names the stack as the URL does, ``{stack_name}/{stack_id}``: the
engine answers "not found" when the name is not the stored name of that id.
Replies carry data, not presentation: the API builds Heat's JSON (links, joined
states, times) from them. Signals and mark-unhealthy themselves are
``kiln.rpc.messages.SignalResource`` / ``MarkUnhealthy``; ``FindResource`` first
resolves what the URL names and checks that the resource can take the action.
Imports: kiln.core only (and kiln.rpc).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kiln.rpc.messages import Context, StackRef

#: FindResource actions.
SIGNAL = "signal"
MARK_UNHEALTHY = "mark_unhealthy"


# -- requests ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ListStackResources:
    """R1. ``filters``: name, status, action, id, physical_resource_id (any of the values),
    type (substring of the type name, first value)."""

    context: Context
    stack_name: str
    stack_id: str
    filters: Mapping[str, Sequence[str]] = field(default_factory=dict)
    nested_depth: int = 0
    with_detail: bool = False


@dataclass(frozen=True)
class ShowResource:
    """R2: one resource with its description and attributes (plus ``with_attr``)."""

    context: Context
    stack_name: str
    stack_id: str
    resource_name: str
    with_attr: Sequence[str] = ()


@dataclass(frozen=True)
class GetResourceMetadata:
    """R3."""

    context: Context
    stack_name: str
    stack_id: str
    resource_name: str


@dataclass(frozen=True)
class FindResource:
    """The logical name of the resource a URL names, before R4 or R5 acts on it.

    For ``MARK_UNHEALTHY`` the name may be a physical resource id. For ``SIGNAL``
    the resource must exist and take signals (``details`` is the signal body).
    """

    context: Context
    stack_name: str
    stack_id: str
    name_or_physical_id: str
    action: str = MARK_UNHEALTHY
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ListStackEvents:
    """E1 (and E2 with ``resource_name``). ``filters`` keys: resource_action,
    resource_status, resource_name, resource_type; each any of its values.
    ``sort_keys`` from event_time and resource_type; ``sort_dir`` None is Heat's
    default (newest first unless a sort key is given)."""

    context: Context
    stack_name: str
    stack_id: str
    resource_name: str | None = None
    filters: Mapping[str, Sequence[str]] = field(default_factory=dict)
    limit: int | None = None
    marker: str | None = None
    sort_keys: Sequence[str] = ()
    sort_dir: str | None = None
    nested_depth: int = 0


@dataclass(frozen=True)
class ShowEvent:
    """E3: the reply lists the event, or nothing when that resource has no such event."""

    context: Context
    stack_name: str
    stack_id: str
    resource_name: str
    event_id: str


# -- replies -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResourceInfo:
    """A resource as R1/R2 show it; ``description`` and ``attributes`` only in details."""

    name: str
    type: str
    physical_id: str
    action: str
    status: str
    status_reason: str
    created_at: datetime
    updated_at: datetime
    required_by: Sequence[str]
    #: the stack the resource belongs to (a nested stack for nested resources)
    stack: StackRef
    #: the child stack the resource owns, if any
    nested: StackRef | None = None
    #: for resources of nested stacks: the name of the resource that owns their stack
    parent_resource: str | None = None
    description: str | None = None
    attributes: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ResourceInfoList:
    resources: Sequence[ResourceInfo]


@dataclass(frozen=True)
class ResourceMetadata:
    metadata: Mapping[str, Any]


@dataclass(frozen=True)
class ResourceName:
    name: str


@dataclass(frozen=True)
class EventInfo:
    """An event as E1-E3 show it; ``resource_properties`` only for E3."""

    id: str
    created_at: datetime
    resource_name: str
    physical_resource_id: str | None
    resource_type: str
    action: str
    status: str
    status_reason: str
    #: the stack the event belongs to (a nested stack for nested events)
    stack: StackRef
    resource_properties: Mapping[str, Any] | None = None
    #: the stack the list was asked for, when nested events were asked for
    root_stack: StackRef | None = None


@dataclass(frozen=True)
class EventInfoList:
    events: Sequence[EventInfo]
