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
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.rpc import messages as m
from kiln.template.loader import load_environment
from kiln.template.parameter_types import HIDDEN_TEXT
from kiln.template.parameters import display_value, parse_parameter_schemas
from kiln.template.stack import StackDefinition
from kiln.template.template import Template

if TYPE_CHECKING:
    from kiln.engine.service import StackService


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
        # The stack-domain project once an in-instance user needed one (kept on
        # the root stack); before that, like Heat without a stack user domain,
        # the stack's own project.
        stack_user_project_id=stack.stack_user_project_id or stack.project_id,
    )


def show_stack(service: StackService, stack: sdb.Stack, resolve_outputs: bool) -> m.StackView:
    definition = _definition(service, stack)
    outputs = None
    if resolve_outputs and stack.deleted_at is None:
        outputs = [
            m.Output(k, v.value, v.description, v.error)
            for k, v in service.outputs(stack.id, stack).items()
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


__all__ = [
    "OutputNotFound",
    "display_parameters",
    "list_outputs",
    "list_stacks",
    "masked_stack_data",
    "without_masked_values",
    "show_output",
    "show_stack",
    "stack_document",
    "stack_view",
]
