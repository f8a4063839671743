"""Every engine call and its reply (one frozen dataclass each).

Fields are plain values (str, int, bool, None, datetime, lists, tuples, dicts,
nested dataclasses of this module), so ``kiln.rpc.codec`` can send any of them.
New fields always get a default: an older peer simply drops what it does not
know. Imports: stdlib only.
"""

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
    #: resource types the caller may not use (``resource_types:<Type>`` policy rules,
    #: a type name or ``Prefix::*``), worked out by the API for creates and updates
    denied_resource_types: tuple[str, ...] = ()
    #: the caller's role names (the engine stores them with a stack it creates)
    roles: tuple[str, ...] = ()
    #: the caller's Keystone token: the engine makes the stack's trust with it
    auth_token: str | None = None


# -- requests ---------------------------------------------------------------------------
@dataclass(frozen=True)
class StackInput:
    """A template with everything that goes with it, as a request carries it.

    ``template`` and ``environment`` are data or JSON/YAML text (the engine
    parses text, so errors carry file:line:col); ``template`` is None only for
    a PATCH update that keeps the stored one. ``environment_files`` are
    (name, content) pairs in merge order; with any, ``environment`` is ignored.
    """

    template: Mapping[str, Any] | str | None
    environment: Mapping[str, Any] | str | None = None
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
    #: Heat's max_stacks_per_tenant (-1: unlimited); admins are exempt
    max_stacks_per_tenant: int = -1


@dataclass(frozen=True)
class UpdateStack:
    """PUT (``existing`` false) or PATCH update.

    None in ``timeout_mins``, ``disable_rollback`` or ``tags`` means "not
    given": a PATCH keeps the stack's value, a PUT takes Heat's default (no
    timeout, rollback disabled, no tags).
    """

    context: Context
    stack_id: str
    input: StackInput
    timeout_mins: int | None = None
    disable_rollback: bool | None = None
    tags: Sequence[str] | None = None
    existing: bool = False
    clear_parameters: Sequence[str] = ()
    #: observe reality before updating; accepted, Kiln converges anyway
    converge: bool = False
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class DeleteStack:
    context: Context
    stack_id: str
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class ShowStack:
    context: Context
    stack_id: str
    resolve_outputs: bool = True
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class ListStacks:
    """One page of stacks. Filter keys are stack columns (id, name, action, status,
    project_id, user_id, owner_id, status_reason, disable_rollback, timeout_mins);
    a list value matches any of its items. ``sort_keys`` are columns (name,
    status, created_at, updated_at); none means newest first."""

    context: Context
    limit: int | None = None
    marker: str | None = None
    show_deleted: bool = False
    show_nested: bool = False
    filters: Mapping[str, Any] = field(default_factory=dict)
    sort_keys: Sequence[str] = ()
    sort_dir: str | None = None
    #: stacks having all of these tags
    tags: Sequence[str] = ()
    #: stacks having any of these tags
    tags_any: Sequence[str] = ()
    #: not the stacks having all of these tags
    not_tags: Sequence[str] = ()
    #: not the stacks having any of these tags
    not_tags_any: Sequence[str] = ()
    #: Heat's hidden_stack_tags: stacks with any of them are left out unless show_hidden
    hidden_tags: Sequence[str] = ()
    show_hidden: bool = False
    #: every project's stacks (the API has checked stacks:global_index)
    global_tenant: bool = False
    with_count: bool = False


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


@dataclass(frozen=True)
class ListOutputs:
    """The stack's outputs, unresolved (keys and descriptions)."""

    context: Context
    stack_id: str
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class ShowOutput:
    """One output, resolved now; NotFound (kind ``NotFound``) for an unknown key."""

    context: Context
    stack_id: str
    key: str
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class GetStackDocument:
    """The stored ``template``, ``environment`` (hidden values masked) or ``files``."""

    context: Context
    stack_id: str
    which: str
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


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
    description: str | None
    error: str | None = None


@dataclass(frozen=True)
class StackView:
    """A stack as show and list present it.

    ``updated_at`` is None until the stack is first updated (Heat's
    ``updated_time``). ``parameters`` (show only) are display strings, hidden
    ones masked, pseudo parameters included. ``outputs`` is None when they
    were not resolved.
    """

    id: str
    name: str
    project_id: str
    action: str
    status: str
    status_reason: str
    created_at: datetime
    updated_at: datetime | None
    deleted_at: datetime | None = None
    parent_id: str | None = None
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: Sequence[str] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    outputs: Sequence[Output] | None = None
    description: str = ""
    stack_owner: str | None = None
    stack_user_project_id: str | None = None


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
    #: the number of matching stacks regardless of paging (with_count only)
    count: int | None = None


@dataclass(frozen=True)
class ResourceList:
    resources: Sequence[ResourceView]


@dataclass(frozen=True)
class EventList:
    events: Sequence[EventView]


@dataclass(frozen=True)
class OutputList:
    outputs: Sequence[Output]


@dataclass(frozen=True)
class StackDocument:
    data: Mapping[str, Any]


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
    #: also list what would happen inside nested stacks
    show_nested: bool = False
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class StackAction:
    """suspend, resume, check, cancel_update or cancel_without_rollback."""

    context: Context
    stack_id: str
    action: str
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


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
    #: Heat's max_snapshots_per_stack (-1: unlimited); admins are exempt
    max_snapshots: int = -1
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class SnapshotRef:
    """show, delete or restore one snapshot (``op``)."""

    context: Context
    stack_id: str
    snapshot_id: str
    op: str = "show"
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class ListSnapshots:
    context: Context
    stack_id: str
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class AbandonStack:
    """Abandon (forget the stack) or, with ``keep``, export only."""

    context: Context
    stack_id: str
    keep: bool = False
    #: the name in the URL: the stack must have it (else "not found")
    stack_name: str | None = None


@dataclass(frozen=True)
class AdoptStack:
    """Create a stack from abandon data (data, or its JSON/YAML text)."""

    context: Context
    name: str
    adopt_data: Any
    parameters: Mapping[str, Any] = field(default_factory=dict)
    #: as in CreateStack
    max_stacks_per_tenant: int = -1


# -- more replies -----------------------------------------------------------------------------
@dataclass(frozen=True)
class PreviewResource:
    """A resource as previews show it (Heat's engine format, heat-api.md 3.5).

    ``nested`` holds the resources of the nested stack the resource would own
    (create preview) or the changes inside it (update preview, show_nested).
    """

    name: str
    type: str
    stack_name: str
    stack_id: str | None
    action: str = "INIT"
    status: str = "COMPLETE"
    status_reason: str = ""
    physical_id: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    required_by: Sequence[str] = ()
    description: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    attributes: Mapping[str, Any] = field(default_factory=dict)
    properties: Mapping[str, Any] | None = None
    parent_resource: str | None = None
    nested: Sequence[PreviewResource] | None = None


@dataclass(frozen=True)
class UpdatePreview:
    added: Sequence[PreviewResource]
    deleted: Sequence[PreviewResource]
    replaced: Sequence[PreviewResource]
    updated: Sequence[PreviewResource]
    unchanged: Sequence[PreviewResource]
    #: the stack's project (the tenant of the resources' identities)
    project_id: str = ""


@dataclass(frozen=True)
class CreatePreview:
    """What a create would make: the stack's description, parameters and outputs
    as show presents them, and its resources (nested ones inside)."""

    resources: Sequence[PreviewResource]
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    outputs: Sequence[Output] = ()


@dataclass(frozen=True)
class SnapshotView:
    id: str
    name: str | None
    status: str
    status_reason: str | None
    data: Any
    created_at: datetime
    action: str = "CREATE"


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
