"""Previews: what a create or an update would do, with no side effects.

The update preview runs the same pure decision the engine runs
(``decide_resource_update``) on every resource, with properties resolved
against the stack's current resources, and sorts the names into Heat's five
categories: added, deleted, replaced, updated, unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.engine.compiled import RowState
from kiln.engine.nested import TemplateResource
from kiln.engine.plan import current_rows
from kiln.plugin.decisions import StoredResource, decide_resource_update
from kiln.template.functions.base import resolve_top
from kiln.template.report import resolved_resources
from kiln.template.stack import StackIdentity

if TYPE_CHECKING:
    from kiln.engine.service import Caller, StackRequest, StackService


@dataclass
class UpdatePreview:
    """Resource names by what an update would do to them."""

    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[str]]:
        return {k: sorted(v) for k, v in self.__dict__.items()}


def preview_create(
    service: StackService, caller: Caller, request: StackRequest
) -> list[dict[str, Any]]:
    """The resources a create would make, resolved as far as they can be now."""
    identity = StackIdentity(name=request.name, id=None, project_id=caller.project_id)
    definition = service._definition(request, identity, caller)
    return resolved_resources(definition)


def preview_update(
    service: StackService, caller: Caller, stack_id: str, request: StackRequest
) -> UpdatePreview:
    """What an update to ``request`` would do to each resource of the stack."""
    with dbe.read(service.deps.db) as conn:
        stack = sdb.get_stack(conn, stack_id, show_deleted=False)
        rows = current_rows(rdb.list_resources(conn, stack_id))
    identity = StackIdentity(name=stack.name, id=stack.id, project_id=stack.project_id)
    definition = service._definition(request, identity, caller)
    state = RowState(definition, rows)
    preview = UpdatePreview()
    for name, res in definition.resources.items():
        row = rows.get(name)
        if row is None or row.action == "INIT":
            preview.added.append(name)
            continue
        preview_kind = _decide(service, definition, state, name, res, row)
        getattr(preview, preview_kind).append(name)
    preview.deleted = sorted(set(rows) - set(definition.resources))
    return preview


def _decide(
    service: StackService, definition: Any, state: RowState, name: str, res: Any, row: rdb.Resource
) -> str:
    runner = service.runner
    typed = definition.typed.get(name)
    plugin_cls = (
        TemplateResource
        if typed is not None and typed.implementation == "TemplateResource"
        else service.deps.registry.plugin(getattr(getattr(typed, "type", None), "name", res.type))
    )
    if plugin_cls is None or row.type != res.type:
        return "replaced"
    try:
        props = runner._typed(plugin_cls, resolve_top(res.properties, state) or {})
        metadata = resolve_top(res.metadata, state)
    except KilnError:
        return "updated"  # cannot tell before the update runs: it will at least be visited
    if plugin_cls is TemplateResource:
        return "updated"  # its nested stack is converged in any case
    decision = decide_resource_update(
        plugin_cls(_PreviewContext(row, props)),
        StoredResource(row.action, row.status, row.properties, row.metadata or None),
        props,
        metadata,
    )
    return {"unchanged": "unchanged", "update": "updated", "replace": "replaced"}[decision.kind]


class _PreviewContext:
    """Just enough context for a plugin's pure ``needs_replace`` (no I/O allowed)."""

    def __init__(self, row: rdb.Resource, props: dict[str, Any]) -> None:
        self.name = row.name
        self.properties = props
        self.physical_id = row.physical_id

    def __getattr__(self, item: str) -> Any:
        raise KilnError(f"a preview cannot use {item}")
