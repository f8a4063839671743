"""Raw templates: immutable, content-addressed rows of template, environment and files.

The id is the sha256 of the canonical JSON of the three documents (sorted keys,
no spaces), so storing the same content twice is a no-op and returns the same
id. Imports: stdlib, SQLAlchemy and ``kiln.db``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from kiln.db import tables
from kiln.db.common import from_row, insert_ignore
from kiln.db.errors import NotFound

T = tables.raw_template


@dataclass(frozen=True, slots=True)
class RawTemplate:
    id: str
    template: dict[str, Any]
    environment: dict[str, Any]
    files: dict[str, Any]
    created_at: datetime


def template_id(
    template: Mapping[str, Any],
    environment: Mapping[str, Any] | None = None,
    files: Mapping[str, Any] | None = None,
) -> str:
    """The content hash that identifies a raw template."""
    canonical = json.dumps(
        {"template": template, "environment": environment or {}, "files": files or {}},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def store_raw_template(
    conn: Connection,
    template: Mapping[str, Any],
    environment: Mapping[str, Any] | None = None,
    files: Mapping[str, Any] | None = None,
    *,
    now: datetime,
) -> str:
    """Store the documents unless they are stored already; returns their id. Writes."""
    tid = template_id(template, environment, files)
    # Look first: the common case (an unchanged template) then sends no documents.
    if conn.execute(sa.select(T.c.id).where(T.c.id == tid)).first() is not None:
        return tid
    insert_ignore(
        conn,
        T,
        {
            "id": tid,
            "template": dict(template),
            "environment": dict(environment or {}),
            "files": dict(files or {}),
            "created_at": now,
        },
    )
    return tid


def get_raw_template(conn: Connection, raw_template_id: str) -> RawTemplate:
    """The raw template with that id; NotFound if there is none."""
    row = conn.execute(sa.select(T).where(T.c.id == raw_template_id)).first()
    if row is None:
        raise NotFound("Template", raw_template_id)
    return from_row(RawTemplate, row)
