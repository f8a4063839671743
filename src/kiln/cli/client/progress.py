"""``--wait``: follow a stack action to its end, with live progress.

Progress is what a person wants to see: the stack's state, resources done of
total, and the latest events. On failure the failing resources are printed
with their full path through nested stacks, and their reasons.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import click
from rich.live import Live
from rich.text import Text

from kiln.cli.client.connection import ApiError, Orchestration
from kiln.cli.client.output import console

POLL_SECONDS = 0.5
LATEST_EVENTS = 5


def _resources(api: Orchestration, path: str) -> list[dict[str, Any]]:
    try:
        found = api.get(f"{path}/resources", nested_depth=5)
    except ApiError:
        return []
    return list(found.get("resources", [])) if isinstance(found, dict) else []


def _events_after(api: Orchestration, path: str, marker: str | None) -> list[dict[str, Any]]:
    try:
        found = api.get(f"{path}/events", marker=marker, sort_dir="asc", limit=200)
    except ApiError:
        return []
    return list(found.get("events", [])) if isinstance(found, dict) else []


def _done(resource: dict[str, Any], action: str) -> bool:
    status = str(resource.get("resource_status", ""))
    return status.endswith("_COMPLETE") or status.endswith("_FAILED")


def resource_path(resource: dict[str, Any], by_stack: dict[str, str]) -> str:
    """``parent_resource/.../name`` through nested stacks."""
    parts = [str(resource.get("resource_name"))]
    parent = resource.get("parent_resource")
    seen = 0
    while parent and seen < 10:
        parts.append(str(parent))
        parent = by_stack.get(str(parent))
        seen += 1
    return "/".join(reversed(parts))


def failures(api: Orchestration, path: str) -> list[tuple[str, str]]:
    """(path, reason) of every failed resource, the deepest first."""
    rows = _resources(api, path)
    parents = {str(r.get("resource_name")): str(r.get("parent_resource") or "") for r in rows}
    failed = [r for r in rows if str(r.get("resource_status", "")).endswith("FAILED")]
    found = [(resource_path(r, parents), str(r.get("resource_status_reason", ""))) for r in failed]
    return sorted(found, key=lambda pair: -pair[0].count("/"))


def wait_for(
    api: Orchestration,
    path: str,
    action: str,
    *,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    deleting: bool = False,
) -> dict[str, Any] | None:
    """Poll until the stack's action ends; returns the final stack (None once deleted)."""
    marker: str | None = None
    latest: list[str] = []
    with Live(console=console, refresh_per_second=4, transient=True) as live:
        while True:
            try:
                stack = api.get(path)["stack"]
            except ApiError as err:
                if deleting and err.status == 404:
                    return None
                raise
            for event in _events_after(api, path, marker):
                marker = str(event.get("id"))
                line = (
                    f"{event.get('event_time', '')} {event.get('resource_name', '')} "
                    f"{event.get('resource_status', '')} {event.get('resource_status_reason', '')}"
                )
                latest = [*latest, line][-LATEST_EVENTS:]
                if on_event:
                    on_event(event)
            rows = _resources(api, path)
            done = sum(1 for r in rows if _done(r, action))
            status = str(stack.get("stack_status", ""))
            live.update(
                Text(
                    f"{stack.get('stack_name')}: {status}  {done}/{len(rows)} resources\n"
                    + "\n".join(latest)
                )
            )
            if not status.endswith("IN_PROGRESS"):
                if deleting and status == "DELETE_COMPLETE":
                    return None
                return dict(stack)
            time.sleep(POLL_SECONDS)


def report_end(api: Orchestration, path: str, stack: dict[str, Any] | None, action: str) -> None:
    """Print the outcome; a failure lists each failing resource and exits 1."""
    if stack is None:
        click.echo("Stack deleted.")
        return
    status = str(stack.get("stack_status"))
    click.echo(f"{stack.get('stack_name')} {status}: {stack.get('stack_status_reason', '')}")
    if status.endswith("FAILED"):
        for where, reason in failures(api, path):
            click.echo(f"  {where}: {reason}", err=True)
        raise SystemExit(1)
