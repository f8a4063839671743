"""Every engine call and its reply (one frozen dataclass each)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Context:
    """Who calls: the project everything is scoped to."""

    project_id: str
    user_id: str = ""
    is_admin: bool = False


# -- requests ---------------------------------------------------------------------------
@dataclass(frozen=True)
class StackInput:
    """A template with everything that goes with it, as a request carries it."""

    template: Mapping[str, Any]
    environment: Mapping[str, Any] | None = None
    environment_files: Sequence[tuple[str, Any]] = ()
    files: Mapping[str, Any] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CreateStack:
    context: Context
    name: str
    input: StackInput
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: Sequence[str] = ()


@dataclass(frozen=True)
class UpdateStack:
    context: Context
    stack_id: str
    input: StackInput
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: Sequence[str] = ()


@dataclass(frozen=True)
class DeleteStack:
    context: Context
    stack_id: str


@dataclass(frozen=True)
class ShowStack:
    context: Context
    stack_id: str
    resolve_outputs: bool = True


@dataclass(frozen=True)
class ListStacks:
    context: Context
    limit: int | None = None
    marker: str | None = None
    show_deleted: bool = False
    show_nested: bool = False
    filters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ListResources:
    context: Context
    stack_id: str


@dataclass(frozen=True)
class ListEvents:
    context: Context
    stack_id: str
    limit: int | None = None
    marker: str | None = None
    sort_dir: str = "asc"


# -- replies ------------------------------------------------------------------------------
@dataclass(frozen=True)
class StackCreated:
    stack_id: str
    name: str


@dataclass(frozen=True)
class Accepted:
    """A mutating call was recorded; an engine carries it out."""

    stack_id: str


@dataclass(frozen=True)
class Output:
    key: str
    value: Any
    description: str
    error: str | None = None


@dataclass(frozen=True)
class StackView:
    id: str
    name: str
    project_id: str
    action: str
    status: str
    status_reason: str
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    parent_id: str | None = None
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: Sequence[str] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    outputs: Sequence[Output] = ()


@dataclass(frozen=True)
class ResourceView:
    name: str
    type: str
    physical_id: str | None
    action: str
    status: str
    status_reason: str
    requires: Sequence[str]
    updated_at: datetime


@dataclass(frozen=True)
class EventView:
    id: str
    resource_name: str
    resource_type: str
    physical_resource_id: str | None
    action: str
    status: str
    status_reason: str
    created_at: datetime


@dataclass(frozen=True)
class StackList:
    stacks: Sequence[StackView]


@dataclass(frozen=True)
class ResourceList:
    resources: Sequence[ResourceView]


@dataclass(frozen=True)
class EventList:
    events: Sequence[EventView]


# -- more requests ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PreviewCreate:
    context: Context
    name: str
    input: StackInput


@dataclass(frozen=True)
class PreviewUpdate:
    context: Context
    stack_id: str
    input: StackInput
    existing: bool = False
    clear_parameters: Sequence[str] = ()


@dataclass(frozen=True)
class StackAction:
    """suspend, resume, check, cancel_update or cancel_without_rollback."""

    context: Context
    stack_id: str
    action: str


@dataclass(frozen=True)
class SignalResource:
    context: Context
    stack_id: str
    resource_name: str
    details: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class MarkUnhealthy:
    context: Context
    stack_id: str
    resource_name: str
    mark_unhealthy: bool
    reason: str = ""


@dataclass(frozen=True)
class CreateSnapshot:
    context: Context
    stack_id: str
    name: str | None = None


@dataclass(frozen=True)
class SnapshotRef:
    """show, delete or restore one snapshot (``op``)."""

    context: Context
    stack_id: str
    snapshot_id: str
    op: str = "show"


@dataclass(frozen=True)
class ListSnapshots:
    context: Context
    stack_id: str


@dataclass(frozen=True)
class AbandonStack:
    """Abandon (forget the stack) or, with ``keep``, export only."""

    context: Context
    stack_id: str
    keep: bool = False


@dataclass(frozen=True)
class AdoptStack:
    context: Context
    name: str
    adopt_data: Any
    parameters: Mapping[str, Any] = field(default_factory=dict)


# -- more replies -----------------------------------------------------------------------------
@dataclass(frozen=True)
class UpdatePreview:
    added: Sequence[str]
    deleted: Sequence[str]
    replaced: Sequence[str]
    updated: Sequence[str]
    unchanged: Sequence[str]


@dataclass(frozen=True)
class CreatePreview:
    resources: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class SnapshotView:
    id: str
    name: str | None
    status: str
    status_reason: str
    data: Any
    created_at: datetime


@dataclass(frozen=True)
class SnapshotList:
    snapshots: Sequence[SnapshotView]


@dataclass(frozen=True)
class StackData:
    """Abandon or export data (heat-api.md 3.10)."""

    data: Mapping[str, Any]


# -- lookups ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LookupStack:
    """Find a stack by id (soft-deleted too) or else by live name (heat-api.md 1.5)."""

    context: Context
    identity: str


@dataclass(frozen=True)
class StackRef:
    id: str
    name: str
    project_id: str
