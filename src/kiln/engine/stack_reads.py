"""What the stack API reads, as reply messages: show, list, stored documents,
outputs and the two previews (heat-api.md 2.1, 3.1-3.5, 3.8, 3.11).

Parameters are shown as Heat shows them: every value as text, hidden ones as
``******``, with the pseudo parameters (``OS::stack_id`` ...) added. Each read
takes a stack the caller may see; scoping is the handlers' job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.engine.compiled import RowState
from kiln.engine.plan import current_rows
from kiln.engine.preview import _decide
from kiln.rpc import messages as m
from kiln.template.loader import load_environment
from kiln.template.parameter_types import HIDDEN_TEXT
from kiln.template.parameters import display_value, parse_parameter_schemas
from kiln.template.report import resolved_resources
from kiln.template.stack import StackDefinition, StackIdentity
from kiln.template.template import Template

if TYPE_CHECKING:
    from kiln.engine.service import Caller, StackRequest, StackService

ENVIRONMENT_SECTIONS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "event_sinks",
    "encrypted_param_names",
)


class OutputNotFound(KilnError):
    """Heat's ``NotFound`` for an output key the template does not have."""

    http_status = 404

    def __init__(self, key: str) -> None:
        super().__init__(f"Specified output key {key} not found.")

    @property
    def kind(self) -> str:
        return "NotFound"


# -- show and list --------------------------------------------------------------------------
def stack_view(
    stack: sdb.Stack,
    *,
    definition: StackDefinition | None = None,
    outputs: Sequence[m.Output] | None = None,
) -> m.StackView:
    """The stack as show (with its ``definition``) or a list item (without) presents it."""
    return m.StackView(
        id=stack.id,
        name=stack.name,
        project_id=stack.project_id,
        action=stack.action,
        status=stack.status,
        status_reason=stack.status_reason,
        created_at=stack.created_at,
        # Heat's updated_time stays unset until the first update; every later
        # write (status changes included) moves it.
        updated_at=stack.updated_at if stack.prev_raw_template_id is not None else None,
        deleted_at=stack.deleted_at,
        parent_id=stack.owner_id,
        timeout_mins=stack.timeout_mins,
        disable_rollback=stack.disable_rollback,
        tags=tuple(stack.tags),
        parameters=display_parameters(definition) if definition is not None else {},
        outputs=tuple(outputs) if outputs is not None else None,
        description=(definition.template.description or "") if definition is not None else "",
        # Kiln stores the creator's user id (there is no user-name column).
        stack_owner=stack.user_id or None,
        # No separate stack-domain project: Heat without a stack user domain
        # also uses the stack's own project.
        stack_user_project_id=stack.project_id,
    )


def show_stack(service: StackService, stack: sdb.Stack, resolve_outputs: bool) -> m.StackView:
    definition = _definition(service, stack)
    outputs = None
    if resolve_outputs and stack.deleted_at is None:
        outputs = [
            m.Output(k, v.value, v.description, v.error)
            for k, v in service.outputs(stack.id).items()
        ]
    return stack_view(stack, definition=definition, outputs=outputs)


def list_stacks(service: StackService, msg: m.ListStacks) -> m.StackList:
    ctx = msg.context
    tags = sdb.TagFilter(
        all=tuple(msg.tags),
        any=tuple(msg.tags_any),
        not_all=tuple(msg.not_tags),
        not_any=tuple(msg.not_tags_any),
        hidden=() if msg.show_hidden else tuple(msg.hidden_tags),
    )
    sort_keys = tuple(k for k in msg.sort_keys if k in sdb.SORT_KEYS)
    sort_dir = msg.sort_dir or ("asc" if sort_keys else "desc")
    with dbe.read(service.deps.db) as conn:
        found, count = sdb.find_stacks(
            conn,
            None if msg.global_tenant else ctx.project_id,
            filters=_column_filters(msg.filters),
            sort_keys=sort_keys or ("created_at",),
            sort_dir=sort_dir,
            limit=msg.limit,
            marker=msg.marker,
            show_deleted=msg.show_deleted,
            show_nested=msg.show_nested,
            tags=tags,
            with_count=msg.with_count,
        )
    return m.StackList(tuple(stack_view(s) for s in found), count)


def _column_filters(filters: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Filter values as the columns hold them; a value that cannot match is dropped
    (an empty list matches nothing)."""
    out: dict[str, list[Any]] = {}
    for key, value in filters.items():
        if key not in sdb.FILTER_KEYS:
            continue
        values = list(value) if isinstance(value, list | tuple) else [value]
        if key == "disable_rollback":
            values = [
                v if isinstance(v, bool) else str(v).lower() == "true"
                for v in values
                if isinstance(v, bool) or str(v).lower() in ("true", "false")
            ]
        elif key == "timeout_mins":
            values = [int(v) for v in values if str(v).isdigit()]
        out[key] = values
    return out


# -- stored documents and outputs -----------------------------------------------------------
def stack_document(service: StackService, stack: sdb.Stack, which: str) -> m.StackDocument:
    """The stored template, environment (hidden values masked) or files."""
    with dbe.read(service.deps.db) as conn:
        raw = tdb.get_raw_template(conn, stack.raw_template_id)
    if which == "template":
        return m.StackDocument(raw.template)
    if which == "files":
        return m.StackDocument(raw.files)
    if which != "environment":
        raise KilnError(f"unknown stack document {which}")
    definition = _definition(service, stack)
    hidden = set()
    if definition is not None:
        hidden = {n for n, s in definition.parameter_schemas.items() if s.hidden}
    environment: dict[str, Any] = {
        "parameters": {},
        "parameter_defaults": {},
        "resource_registry": {"resources": {}},
        "event_sinks": [],
        "encrypted_param_names": [],
    }
    environment.update(raw.environment)
    for section in ("parameters", "parameter_defaults"):
        values = dict(environment.get(section) or {})
        environment[section] = {k: HIDDEN_TEXT if k in hidden else v for k, v in values.items()}
    return m.StackDocument(environment)


def list_outputs(service: StackService, stack: sdb.Stack) -> m.OutputList:
    definition = _definition(service, stack)
    outputs = definition.outputs if definition is not None else {}
    return m.OutputList(
        tuple(
            m.Output(name, None, out.description or "No description given")
            for name, out in outputs.items()
        )
    )


def show_output(service: StackService, stack: sdb.Stack, key: str) -> m.Output:
    definition = _definition(service, stack)
    if definition is None or key not in definition.outputs:
        raise OutputNotFound(key)
    found = service.outputs(stack.id)[key]
    return m.Output(key, found.value, found.description, found.error)


# -- previews -------------------------------------------------------------------------------
def preview_create(service: StackService, caller: Caller, request: StackRequest) -> m.CreatePreview:
    """What creating the stack would make; nothing is stored."""
    identity = StackIdentity(name=request.name, id=None, project_id=caller.project_id)
    definition = service._definition(request, identity)
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
    definition = service._definition(request, identity)
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


# -- shared -----------------------------------------------------------------------------------
def display_parameters(definition: StackDefinition) -> dict[str, str]:
    """Parameter values as stack representations show them (pseudo parameters too)."""
    shown = {k: str(v) for k, v in definition.pseudo_parameters().items()}
    values = definition.parameter_values
    for name, schema in definition.parameter_schemas.items():
        if schema.hidden:
            shown[name] = HIDDEN_TEXT
        elif name in values and values[name] is not None:
            shown[name] = display_value(schema, values[name])
    return shown


def masked_stack_data(data: Any) -> Any:
    """Snapshot or abandon data as shown: the hidden parameters of its template masked
    in its environment. A restore reads the stored data, never this copy; an adopt
    of masked data leaves the masked values out (see ``without_masked_values``)."""
    if not isinstance(data, Mapping) or not isinstance(data.get("environment"), Mapping):
        return data
    try:
        template = Template.from_data(data.get("template"))
        schemas, _ = parse_parameter_schemas(template.section("parameters"), template.version)
    except KilnError:
        return data
    hidden = {n for n, s in schemas.items() if s.hidden}
    return _environment_values(data, lambda k, v: HIDDEN_TEXT if k in hidden else v)


def without_masked_values(adopt_data: Any) -> Any:
    """Abandon data to adopt, minus the values export masked: those parameters take
    their defaults, or the values the adopt request gives."""
    data = adopt_data
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            try:
                data = load_environment(data, "adopt_stack_data").data
            except KilnError:
                return adopt_data  # the adopt itself reports it
    if not isinstance(data, Mapping) or not isinstance(data.get("environment"), Mapping):
        return adopt_data
    return _environment_values(data, lambda k, v: _DROP if v == HIDDEN_TEXT else v)


_DROP = object()


def _environment_values(data: Mapping[str, Any], change: Any) -> dict[str, Any]:
    environment = dict(data["environment"])
    for section in ("parameters", "parameter_defaults"):
        values = environment.get(section)
        if isinstance(values, Mapping):
            changed = {k: change(k, v) for k, v in values.items()}
            environment[section] = {k: v for k, v in changed.items() if v is not _DROP}
    return {**data, "environment": environment}


def _definition(service: StackService, stack: sdb.Stack) -> StackDefinition | None:
    """The stack's current definition (None if its stored template no longer builds)."""
    try:
        with dbe.read(service.deps.db) as conn:
            return service.runner.compiled_for(conn, stack, stack.raw_template_id).definition
    except KilnError:
        return None


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


__all__ = [
    "OutputNotFound",
    "display_parameters",
    "list_outputs",
    "list_stacks",
    "masked_stack_data",
    "without_masked_values",
    "preview_create",
    "preview_update",
    "show_output",
    "show_stack",
    "stack_document",
    "stack_view",
]
