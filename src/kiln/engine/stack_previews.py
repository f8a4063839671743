"""The two previews as reply messages: what a create would make, and what an
update would do to each resource (heat-api.md 2.1.2, 2.1.7, 3.4, 3.5).

The update preview runs the engine's own per-resource decision and, with
``show_nested``, descends into the nested stacks of template resources.
Nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.engine.compiled import RowState
from kiln.engine.nested import TemplateResource
from kiln.engine.plan import current_rows
from kiln.engine.stack_reads import display_parameters
from kiln.plugin.decisions import StoredResource, decide_resource_update
from kiln.rpc import messages as m
from kiln.template.functions.base import resolve_top
from kiln.template.report import resolved_resources
from kiln.template.stack import StackDefinition, StackIdentity

if TYPE_CHECKING:
    from kiln.engine.service import Caller, StackRequest, StackService


def preview_create(service: StackService, caller: Caller, request: StackRequest) -> m.CreatePreview:
    """What creating the stack would make; nothing is stored."""
    identity = StackIdentity(name=request.name, id=None, project_id=caller.project_id)
    definition = service._definition(request, identity, caller)
    return m.CreatePreview(
        resources=_planned(service, definition, request.name, None),
        description=definition.template.description or "",
        parameters=display_parameters(definition),
        outputs=tuple(
            m.Output(k, v.value, v.description, v.error)
            for k, v in definition.output_values().items()
        ),
    )


def _planned(
    service: StackService,
    definition: StackDefinition,
    stack_name: str,
    parent_resource: str | None,
) -> tuple[m.PreviewResource, ...]:
    entries = resolved_resources(definition)
    required_by = _required_by({e["name"]: e["requires"] for e in entries})
    out = []
    for entry in entries:
        name = entry["name"]
        nested = getattr(definition.typed.get(name), "nested", None)
        out.append(
            m.PreviewResource(
                name=name,
                type=entry["type"],
                stack_name=stack_name,
                stack_id=None,
                required_by=required_by.get(name, ()),
                description=definition.resources[name].description or "",
                metadata=entry.get("metadata") or {},
                attributes=_attribute_names(service, entry["type"]),
                properties=entry.get("properties") or {},
                parent_resource=parent_resource,
                nested=(
                    _planned(service, nested, f"{stack_name}-{name}", name)
                    if isinstance(nested, StackDefinition)
                    else None
                ),
            )
        )
    return tuple(out)


def preview_update(
    service: StackService,
    caller: Caller,
    stack: sdb.Stack,
    request: StackRequest,
    *,
    show_nested: bool,
) -> m.UpdatePreview:
    """What updating the stack to ``request`` would do to each resource."""
    from kiln.engine.service import _patched

    with dbe.read(service.deps.db) as conn:
        stored = tdb.get_raw_template(conn, stack.raw_template_id)
        rows = current_rows(rdb.list_resources(conn, stack.id))
    if request.existing:
        request = _patched(request, stored)
    identity = StackIdentity(name=stack.name, id=stack.id, project_id=stack.project_id)
    definition = service._definition(request, identity, caller)
    changes: dict[str, list[m.PreviewResource]] = {
        k: [] for k in ("added", "deleted", "replaced", "updated", "unchanged")
    }
    _compare(service, stack, definition, rows, changes, show_nested, None)
    return m.UpdatePreview(**{k: tuple(v) for k, v in changes.items()}, project_id=stack.project_id)


def _compare(
    service: StackService,
    stack: sdb.Stack,
    definition: StackDefinition,
    rows: dict[str, rdb.Resource],
    changes: dict[str, list[m.PreviewResource]],
    show_nested: bool,
    parent_resource: str | None,
) -> None:
    """Sort the resources of one stack into the five lists (nested stacks too, if asked)."""
    state = RowState(definition, rows)
    required_by = _required_by({n: r.requires for n, r in definition.resources.items()})
    row_names = {r.id: r.name for r in rows.values()}
    row_required_by = _required_by(
        {r.name: [row_names.get(i, i) for i in r.requires] for r in rows.values()}
    )
    for name in sorted(definition.resources):
        res = definition.resources[name]
        row = rows.get(name)
        kind = "added" if row is None or row.action == "INIT" else None
        if kind is None:
            assert row is not None
            kind = _decide(service, definition, state, name, res, row)
        if kind == "updated":
            assert row is not None
            entry = _current(service, stack, row, row_required_by, parent_resource)
        else:
            entry = m.PreviewResource(
                name=name,
                type=res.type,
                stack_name=stack.name,
                stack_id=stack.id,
                required_by=required_by.get(name, ()),
                description=res.description or "",
                attributes=_attribute_names(service, res.type),
                parent_resource=parent_resource,
            )
        changes[kind].append(entry)
        nested = getattr(definition.typed.get(name), "nested", None)
        if show_nested and row is not None and isinstance(nested, StackDefinition):
            # A template resource's physical id is its nested stack's id.
            child_id = row.nested_stack_id or row.physical_id
            if child_id:
                _compare_nested(service, stack.id, child_id, nested, changes, name)
    for name in sorted(set(rows) - set(definition.resources)):
        changes["deleted"].append(
            _current(service, stack, rows[name], row_required_by, parent_resource)
        )


def _compare_nested(
    service: StackService,
    parent_id: str,
    nested_id: str,
    definition: StackDefinition,
    changes: dict[str, list[m.PreviewResource]],
    parent_resource: str,
) -> None:
    with dbe.read(service.deps.db) as conn:
        try:
            child = sdb.get_stack(conn, nested_id, show_deleted=False)
        except KilnError:
            return
        if child.owner_id != parent_id:
            return
        rows = current_rows(rdb.list_resources(conn, nested_id))
    _compare(service, child, definition, rows, changes, True, parent_resource)


def _current(
    service: StackService,
    stack: sdb.Stack,
    row: rdb.Resource,
    required_by: Mapping[str, Sequence[str]],
    parent_resource: str | None,
) -> m.PreviewResource:
    return m.PreviewResource(
        name=row.name,
        type=row.type,
        stack_name=stack.name,
        stack_id=stack.id,
        action=row.action,
        status=row.status,
        status_reason=row.status_reason,
        physical_id=row.physical_id or "",
        created_at=row.created_at,
        updated_at=row.updated_at,
        required_by=required_by.get(row.name, ()),
        metadata=row.metadata or {},
        attributes={k: v for k, v in row.attributes.items() if k != "show"},
        parent_resource=parent_resource,
    )


def _required_by(requires: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for name, needs in requires.items():
        for need in needs:
            found.setdefault(need, []).append(name)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def _attribute_names(service: StackService, type_name: str) -> dict[str, None]:
    """Every attribute of the type, unresolved (what a preview can say of them)."""
    plugin = service.deps.registry.plugin(type_name)
    if plugin is None:
        return {}
    return dict.fromkeys(plugin.attributes_schema)


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
