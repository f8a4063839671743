"""Abandon, export and adopt (heat-api.md 2.1.9 and 3.10).

Export writes what Heat needs to take a stack over again: its template,
environment, files and, per resource, the physical id and private data.
Abandon is export plus forgetting the stack: its records go, its cloud
resources stay (no traversal runs: nothing is deleted). Adopt creates a stack
from such data: every resource with a physical id is taken over (checked, not
created) by an ADOPT traversal, the rest are created.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kiln.core.errors import StackValidationFailed
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db import templates as tdb
from kiln.engine.plan import current_rows

if TYPE_CHECKING:
    from kiln.engine.service import Caller, StackService


def export_stack(service: StackService, stack_id: str) -> dict[str, Any]:
    """The stack as abandon data."""
    with dbe.read(service.deps.db) as conn:
        stack = sdb.get_stack(conn, stack_id, show_deleted=False)
        raw = tdb.get_raw_template(conn, stack.raw_template_id)
        rows = current_rows(rdb.list_resources(conn, stack_id))
        data = {row.name: rdb.get_resource_data(conn, row.id) for row in rows.values()}
    return {
        "name": stack.name,
        "id": stack.id,
        "action": stack.action,
        "status": stack.status,
        "project_id": stack.project_id,
        "stack_user_project_id": stack.stack_user_project_id or stack.project_id,
        "tags": list(stack.tags),
        "template": raw.template,
        "environment": raw.environment,
        "files": raw.files,
        "resources": {
            name: {
                "name": name,
                "type": row.type,
                "resource_id": row.physical_id,
                "action": row.action,
                "status": row.status,
                "metadata": row.metadata,
                "resource_data": {k: json.loads(v.value) for k, v in data[name].items()},
            }
            for name, row in rows.items()
        },
    }


def abandon_stack(service: StackService, stack_id: str) -> dict[str, Any]:
    """Export, then forget the stack and its records; cloud resources are left alone."""
    found = export_stack(service, stack_id)
    now = service.deps.clock.now()
    with dbe.write(service.deps.db) as conn:
        for row in rdb.list_resources(conn, stack_id):
            rdb.delete_resource(conn, row.id)
        sdb.soft_delete_stack(conn, stack_id, now=now)
    return found


def adopt_stack(
    service: StackService,
    caller: Caller,
    name: str,
    adopt_data: Mapping[str, Any] | str,
    parameters: Mapping[str, Any] | None = None,
) -> str:
    """Create a stack that takes over the resources described by abandon data."""
    from kiln.engine.service import StackRequest

    data = _parse(adopt_data)
    environment = dict(data.get("environment") or {})
    request = StackRequest(
        name=name,
        template=data["template"],
        environment=environment,
        files=dict(data.get("files") or {}),
        parameters=dict(parameters or {}),
        tags=list(data.get("tags") or []),
    )
    adopted = {
        rname: (res.get("resource_id"), res.get("resource_data") or {})
        for rname, res in dict(data.get("resources") or {}).items()
        if isinstance(res, Mapping)
    }
    return service.create_stack(caller, request, adopt=adopted)


def _parse(adopt_data: Mapping[str, Any] | str) -> dict[str, Any]:
    if isinstance(adopt_data, str):
        from kiln.template.loader import load_environment

        try:
            parsed = json.loads(adopt_data)
        except ValueError:
            parsed = load_environment(adopt_data, "adopt_stack_data").data
    else:
        parsed = dict(adopt_data)
    if not isinstance(parsed, dict) or not isinstance(parsed.get("template"), dict):
        raise StackValidationFailed("Adopt data must be abandon data with a template")
    return parsed
