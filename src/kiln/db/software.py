"""Software configs and software deployments (heat-api.md 2.8, 3.13).

A config is immutable: it is created and deleted, never changed. Its body
(``config``, ``inputs``, ``outputs``, ``options``) is one JSON document. A
deployment ties a config to a server; callers see the deployments of their
project and those whose ``stack_user_project_id`` is their project (the
in-instance agents' credentials live in that project). A config still
referenced by a deployment cannot be deleted (the foreign key holds it).
``StoredConfigs`` is the read-only lookup resource plugins use
(``kiln.plugin.software_configs``). Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from kiln.db import tables
from kiln.db.common import KEEP, Keep, changes, from_row
from kiln.db.engine import read
from kiln.db.errors import NotFound

SC = tables.software_config
SD = tables.software_deployment


@dataclass(frozen=True, slots=True)
class SoftwareConfig:
    id: str
    project_id: str
    name: str | None
    group: str | None
    config: Any
    inputs: list[Any]
    outputs: list[Any]
    options: dict[str, Any]
    created_at: datetime

    def as_plugin_config(self) -> dict[str, Any]:
        """The fields plugins read (kiln.plugin.software_configs)."""
        return {
            "id": self.id,
            "name": self.name,
            "group": self.group,
            "config": self.config,
            "options": self.options,
            "inputs": self.inputs,
            "outputs": self.outputs,
        }


@dataclass(frozen=True, slots=True)
class SoftwareDeployment:
    id: str
    project_id: str
    config_id: str
    server_id: str
    input_values: Any
    output_values: Any
    action: str | None
    status: str | None
    status_reason: str | None
    stack_user_project_id: str | None
    created_at: datetime
    updated_at: datetime | None


def _config(row: sa.Row[Any]) -> SoftwareConfig:
    body = row.body if isinstance(row.body, dict) else {}
    return SoftwareConfig(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        group=row.group,
        config=body.get("config"),
        inputs=list(body.get("inputs") or []),
        outputs=list(body.get("outputs") or []),
        options=dict(body.get("options") or {}),
        created_at=row.created_at,
    )


# -- configs ------------------------------------------------------------------------------------
def create_config(
    conn: Connection,
    *,
    config_id: str,
    project_id: str,
    name: str | None,
    group: str | None,
    config: Any,
    inputs: list[Any],
    outputs: list[Any],
    options: Mapping[str, Any],
    now: datetime,
) -> SoftwareConfig:
    """Store a config. Writes."""
    body = {"config": config, "inputs": inputs, "outputs": outputs, "options": dict(options)}
    conn.execute(
        sa.insert(SC).values(
            id=config_id,
            project_id=project_id,
            name=name,
            group=group,
            body=body,
            created_at=now,
            updated_at=None,
        )
    )
    return SoftwareConfig(
        config_id, project_id, name, group, config, inputs, outputs, dict(options), now
    )


def get_config(conn: Connection, config_id: str) -> SoftwareConfig:
    """The config with that id; NotFound otherwise."""
    row = conn.execute(sa.select(SC).where(SC.c.id == config_id)).first()
    if row is None:
        raise NotFound("Software config", config_id)
    return _config(row)


def list_configs(
    conn: Connection,
    project_id: str | None,
    *,
    limit: int | None = None,
    marker: str | None = None,
) -> list[SoftwareConfig]:
    """One page of configs, newest first (every project's when ``project_id`` is None).

    ``marker`` is the id of the last config of the previous page; an unknown
    marker is ignored (the first page), as Heat does.
    """
    query = sa.select(SC)
    if project_id is not None:
        query = query.where(SC.c.project_id == project_id)
    if marker is not None:
        mark = conn.execute(sa.select(SC.c.created_at, SC.c.id).where(SC.c.id == marker)).first()
        if mark is not None:
            query = query.where(
                sa.or_(
                    SC.c.created_at < mark.created_at,
                    sa.and_(SC.c.created_at == mark.created_at, SC.c.id < mark.id),
                )
            )
    query = query.order_by(SC.c.created_at.desc(), SC.c.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return [_config(row) for row in conn.execute(query)]


def count_configs(conn: Connection, project_id: str) -> int:
    """How many configs the project has."""
    query = sa.select(sa.func.count()).select_from(SC).where(SC.c.project_id == project_id)
    return int(conn.execute(query).scalar_one())


def config_in_use(conn: Connection, config_id: str) -> bool:
    """Whether any deployment refers to the config."""
    query = sa.select(SD.c.id).where(SD.c.config_id == config_id).limit(1)
    return conn.execute(query).first() is not None


def delete_config(conn: Connection, config_id: str) -> None:
    """Remove a config; NotFound if there is none. Writes.

    The caller checks :func:`config_in_use` first: the foreign key would refuse.
    """
    if conn.execute(sa.delete(SC).where(SC.c.id == config_id)).rowcount != 1:
        raise NotFound("Software config", config_id)


# -- deployments ----------------------------------------------------------------------------------
def create_deployment(
    conn: Connection,
    *,
    deployment_id: str,
    project_id: str,
    config_id: str,
    server_id: str,
    input_values: Any,
    action: str | None,
    status: str | None,
    status_reason: str | None,
    stack_user_project_id: str | None,
    now: datetime,
) -> SoftwareDeployment:
    """Store a deployment (its config must exist). Writes."""
    row = {
        "id": deployment_id,
        "project_id": project_id,
        "config_id": config_id,
        "server_id": server_id,
        "input_values": input_values,
        "output_values": None,
        "action": action,
        "status": status,
        "status_reason": status_reason,
        "stack_user_project_id": stack_user_project_id,
        "created_at": now,
        "updated_at": None,
    }
    conn.execute(sa.insert(SD).values(**row))
    return SoftwareDeployment(**row)


def get_deployment(conn: Connection, deployment_id: str) -> SoftwareDeployment:
    """The deployment with that id; NotFound otherwise."""
    row = conn.execute(sa.select(SD).where(SD.c.id == deployment_id)).first()
    if row is None:
        raise NotFound("Software deployment", deployment_id)
    return from_row(SoftwareDeployment, row)


def _visible_to(project_id: str) -> Any:
    return sa.or_(SD.c.project_id == project_id, SD.c.stack_user_project_id == project_id)


def list_deployments(
    conn: Connection, project_id: str, *, server_id: str | None = None
) -> list[SoftwareDeployment]:
    """The deployments the project sees (its own and its stack users'), oldest first."""
    query = sa.select(SD).where(_visible_to(project_id))
    if server_id is not None:
        query = query.where(SD.c.server_id == server_id)
    query = query.order_by(SD.c.created_at, SD.c.id)
    return [from_row(SoftwareDeployment, row) for row in conn.execute(query)]


def server_configs(conn: Connection, project_id: str, server_id: str) -> list[SoftwareConfig]:
    """The configs of the server's deployments the project sees, sorted by config name.

    What an in-instance agent reads (heat-api.md 2.8, server metadata); ties on
    the name keep the deployments' creation order.
    """
    query = (
        sa.select(SC)
        .join(SD, SD.c.config_id == SC.c.id)
        .where(_visible_to(project_id), SD.c.server_id == server_id)
        .order_by(SD.c.created_at, SD.c.id)
    )
    configs = [_config(row) for row in conn.execute(query)]
    return sorted(configs, key=lambda c: c.name or "")


def count_deployments(conn: Connection, project_id: str) -> int:
    """How many deployments the project has."""
    query = sa.select(sa.func.count()).select_from(SD).where(SD.c.project_id == project_id)
    return int(conn.execute(query).scalar_one())


def update_deployment(
    conn: Connection,
    deployment_id: str,
    *,
    now: datetime,
    config_id: str | Keep = KEEP,
    input_values: Any = KEEP,
    output_values: Any = KEEP,
    action: str | Keep = KEEP,
    status: str | Keep = KEEP,
    status_reason: str | Keep = KEEP,
) -> SoftwareDeployment:
    """Change a deployment (``updated_at`` becomes ``now``); NotFound if there is none. Writes."""
    values = changes(
        config_id=config_id,
        input_values=input_values,
        output_values=output_values,
        action=action,
        status=status,
        status_reason=status_reason,
    )
    result = conn.execute(
        sa.update(SD).where(SD.c.id == deployment_id).values(**values, updated_at=now)
    )
    if result.rowcount != 1:
        raise NotFound("Software deployment", deployment_id)
    return get_deployment(conn, deployment_id)


def delete_deployment(conn: Connection, deployment_id: str) -> None:
    """Remove a deployment; NotFound if there is none. Writes."""
    if conn.execute(sa.delete(SD).where(SD.c.id == deployment_id)).rowcount != 1:
        raise NotFound("Software deployment", deployment_id)


# -- the plugins' view --------------------------------------------------------------------------
class StoredConfigs:
    """Stored configs by id, as resource plugins look them up (``ctx.client``).

    ``for_project`` narrows the lookup to one project's configs; the unscoped
    store answers any id (ids are random UUIDs).
    """

    def __init__(self, db: Engine, project_id: str | None = None) -> None:
        self.db = db
        self.project_id = project_id

    def for_project(self, project_id: str) -> StoredConfigs:
        return StoredConfigs(self.db, project_id)

    def get(self, config_id: str) -> Mapping[str, Any] | None:
        with read(self.db) as conn:
            try:
                found = get_config(conn, config_id)
            except NotFound:
                return None
        if self.project_id is not None and found.project_id != self.project_id:
            return None
        return found.as_plugin_config()
