"""The stack-domain project of a stack tree: made when its first stack user needs it,
recorded on the root stack, removed when the root stack is deleted.

Nested stacks share their root's project, as in Heat, so one top-level stack's in-instance
users (across all its groups and nested stacks) live in one project. Making it is
idempotent (the name derives from the root stack) and the first recorded id wins, so two
resources that need it at once agree.
"""

from __future__ import annotations

from typing import Any

from kiln.cloud.api.errors import NotFound
from kiln.cloud.api.identity import StackDomainApi
from kiln.db import engine as dbe
from kiln.db import stacks as sdb
from kiln.plugin.stack_user import make_stack_user_project


def stack_user_project(db: Any, identity: StackDomainApi, stack: sdb.Stack) -> str:
    """The id of the stack tree's stack-domain project, made on first use."""
    with dbe.read(db) as conn:  # fresh: the step's stack row may be a cached copy
        root = sdb.get_stack(conn, stack.root_id)
    if root.stack_user_project_id:
        return root.stack_user_project_id
    project = make_stack_user_project(identity, root.project_id, root.id)
    with dbe.write(db) as conn:
        return sdb.set_stack_user_project(conn, root.id, project.id)


def delete_stack_user_project(identity: StackDomainApi, project_id: str) -> None:
    """Remove a deleted stack's project (its users went with their resources)."""
    try:
        identity.delete_project(project_id)
    except NotFound:
        pass
