"""The identity objects as immutable values, built from table rows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Domain:
    id: str
    name: str
    description: str = ""
    enabled: bool = True


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    domain_id: str
    description: str = ""
    enabled: bool = True
    parent_id: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class User:
    id: str
    name: str
    domain_id: str
    enabled: bool = True
    default_project_id: str | None = None
    description: str = ""
    email: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    password_hash: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Role:
    id: str
    name: str
    description: str = ""


@dataclass(frozen=True)
class Assignment:
    """A user's role on a project (``target_type`` "project") or a domain."""

    user_id: str
    target_type: str
    target_id: str
    role_id: str


@dataclass(frozen=True)
class Trust:
    id: str
    trustor_user_id: str
    trustee_user_id: str
    project_id: str | None
    impersonation: bool
    role_ids: tuple[str, ...]
    expires_at: datetime | None
    remaining_uses: int | None
    allow_redelegation: bool
    created_at: datetime


@dataclass(frozen=True)
class Credential:
    id: str
    user_id: str
    project_id: str | None
    type: str
    blob: str  # plain text (decrypted); for EC2 a JSON object with access and secret


def project_from_row(row: Mapping[Any, Any]) -> Project:
    return Project(
        id=row["id"],
        name=row["name"],
        domain_id=row["domain_id"],
        description=row["description"] or "",
        enabled=bool(row["enabled"]),
        parent_id=row["parent_id"],
        tags=tuple(json.loads(row["tags"] or "[]")),
    )


def user_from_row(row: Mapping[Any, Any]) -> User:
    return User(
        id=row["id"],
        name=row["name"],
        domain_id=row["domain_id"],
        enabled=bool(row["enabled"]),
        default_project_id=row["default_project_id"],
        description=row["description"] or "",
        email=row["email"],
        options=json.loads(row["options"] or "{}"),
        password_hash=row["password_hash"],
    )
