"""Builders shared by the tests of kiln.db: a stored template, a stack, a started traversal."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.engine import Connection, Engine

from kiln.db.engine import write
from kiln.db.stacks import Stack, create_stack
from kiln.db.templates import store_raw_template
from kiln.db.traversals import NodeSpec, start_traversal

TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {}}


def new_id() -> str:
    return str(uuid.uuid4())


def make_stack(
    conn: Connection,
    now: datetime,
    *,
    name: str | None = None,
    project_id: str = "proj",
    owner_id: str | None = None,
) -> Stack:
    tid = store_raw_template(conn, TEMPLATE, now=now)
    return create_stack(
        conn,
        stack_id=new_id(),
        name=name or f"s-{uuid.uuid4().hex[:8]}",
        project_id=project_id,
        user_id="user",
        raw_template_id=tid,
        now=now,
        owner_id=owner_id,
    )


def make_traversal(
    engine: Engine,
    now: datetime,
    keys: Sequence[str],
    edges: Sequence[tuple[str, str]] = (),
    *,
    stack: Stack | None = None,
    priorities: dict[str, int] | None = None,
    action: str = "CREATE",
) -> tuple[Stack, str]:
    """A stack (new unless given) with a started traversal over ``keys``; returns (stack, id)."""
    with write(engine) as conn:
        if stack is None:
            stack = make_stack(conn, now)
        traversal_id = new_id()
        nodes = [
            NodeSpec(key, resource_name=key.split(":")[0], priority=(priorities or {}).get(key, 0))
            for key in keys
        ]
        started = start_traversal(
            conn,
            traversal_id=traversal_id,
            stack_id=stack.id,
            expected_current=stack.current_traversal_id,
            action=action,
            raw_template_id=stack.raw_template_id,
            nodes=nodes,
            edges=list(edges),
            now=now,
        )
        assert started
    return stack, traversal_id
