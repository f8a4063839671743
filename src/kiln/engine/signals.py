"""Signals to resources (heat-api.md 2.3.4), other than clearing a hook.

A signal is handled at once, within the request, as Heat's engine does: the
plugin's ``handle_signal(details)`` runs with a context over the resource's
stored state, and what it records (resource data, a physical id) is written in
one transaction with a SIGNAL event. A plugin whose signal starts longer work
(a scaling policy) starts a stack action from its handler.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kiln.core.errors import KilnError, NotSupported
from kiln.db import engine as dbe
from kiln.db import resources as rdb
from kiln.db import stacks as sdb
from kiln.db.events import NewEvent, add_events
from kiln.db.resources import ResourceChange
from kiln.engine.plan import current_rows
from kiln.engine.resource_context import EngineResourceContext
from kiln.engine.step_base import LazyData, write_pending_data
from kiln.plugin.resource import Resource, ResourceFailure

if TYPE_CHECKING:
    from kiln.engine.service import StackService


def takes_signals(plugin_cls: type[Resource] | None) -> bool:
    return plugin_cls is not None and plugin_cls.handle_signal is not Resource.handle_signal


def describe(details: Any) -> str:
    """The event reason for a signal: what it said, briefly."""
    if details is None:
        return "No signal details provided"
    if isinstance(details, str):
        return details
    if isinstance(details, Mapping) and {"previous", "current", "reason"} <= set(details):
        return (
            f"alarm state changed from {details['previous']} to {details['current']} "
            f"({details['reason']})"
        )
    text = json.dumps(details, sort_keys=True, default=str)
    return "Signal: " + (text if len(text) <= 200 else text[:197] + "...")


def deliver_signal(service: StackService, stack_id: str, resource_name: str, details: Any) -> None:
    from kiln.engine.resource_handlers import (
        ResourceActionNotSupported,
        ResourceNotAvailable,
        ResourceNotFound,
    )

    deps, runner = service.deps, service.runner
    with dbe.read(deps.db) as conn:
        stack = sdb.get_stack(conn, stack_id, show_deleted=False)
        compiled = runner.compiled_for(conn, stack, stack.raw_template_id)
        row = current_rows(rdb.list_resources(conn, stack_id)).get(resource_name)
    if row is None:
        if resource_name in compiled.definition.resources:
            raise ResourceNotAvailable(resource_name)
        raise ResourceNotFound(resource_name, stack.name)
    if row.action == "INIT":
        raise ResourceNotAvailable(resource_name)
    if row.action in ("SUSPEND", "DELETE"):
        raise NotSupported(f"Signal resource during {row.action} is not supported.")
    plugin_cls = runner._plugin_for(compiled, row.name, row.type)
    if plugin_cls is None or not takes_signals(plugin_cls):
        raise ResourceActionNotSupported("signal")
    ctx = EngineResourceContext(
        name=row.name,
        type_name=row.type,
        stack_name=stack.name,
        stack_id=stack.id,
        project_id=stack.project_id,
        action="SIGNAL",
        properties=runner._stored_properties(plugin_cls, row),
        metadata=row.metadata,
        resource_uuid=row.id,
        clock=deps.clock,
        stored_physical_id=row.physical_id,
        stored_data=LazyData(deps.db, row.id),
        clients=dict(deps.clients),
        cloud=deps.scoped_cloud(stack),
        name_limit=plugin_cls.physical_name_limit,
        rng=deps.rng,
    )
    failure: KilnError | None = None
    plugin = plugin_cls(ctx)
    try:
        plugin.handle_signal(details)
        # what the signal changed shows in get_attr (outputs read stored attributes)
        attributes = runner._attributes(compiled, plugin, row.name)
    except KilnError as err:
        failure = err
    except Exception as err:  # the plugin's own failure, shown to the signaller
        failure = ResourceFailure(f"{type(err).__name__}: {err}")
    now = deps.clock.now()
    event = NewEvent(
        uuid=deps.new_id(),
        stack_id=stack.id,
        resource_name=row.name,
        resource_type=row.type,
        action="SIGNAL",
        status="FAILED" if failure else "COMPLETE",
        status_reason=failure.full_message if failure else describe(details),
        physical_resource_id=ctx.physical_id,
    )
    with dbe.write(deps.db) as conn:
        if failure is None:
            write_pending_data(conn, row.id, ctx)
            change = ResourceChange(attributes=attributes)
            if ctx.physical_id_changed:
                change = ResourceChange(attributes=attributes, physical_id=ctx.physical_id)
            rdb.update_resource(conn, row.id, change, now=now, expected_version=row.version)
        add_events(conn, [event], now=now)
    if failure is not None:
        raise failure
