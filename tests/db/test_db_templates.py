"""kiln.db.templates: content-addressed, idempotent raw templates."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from kiln.db import tables
from kiln.db.engine import read, write
from kiln.db.errors import NotFound
from kiln.db.templates import get_raw_template, store_raw_template, template_id

TEMPLATE = {"heat_template_version": "2021-04-16", "resources": {"a": {"type": "X"}}}
ENV = {"parameters": {"n": 1}}
FILES = {"f.yaml": "x: ü"}


def test_id_is_sha256_of_canonical_json() -> None:
    canonical = json.dumps(
        {"template": TEMPLATE, "environment": ENV, "files": FILES},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert template_id(TEMPLATE, ENV, FILES) == hashlib.sha256(canonical.encode()).hexdigest()
    # Key order does not matter; content does.
    reordered = {"resources": TEMPLATE["resources"], "heat_template_version": "2021-04-16"}
    assert template_id(reordered, ENV, FILES) == template_id(TEMPLATE, ENV, FILES)
    assert template_id(TEMPLATE, ENV) != template_id(TEMPLATE, ENV, FILES)
    assert template_id(TEMPLATE) == template_id(TEMPLATE, {}, {})


def test_store_is_idempotent(db: Engine, now: datetime) -> None:
    with write(db) as conn:
        first = store_raw_template(conn, TEMPLATE, ENV, FILES, now=now)
    with write(db) as conn:
        second = store_raw_template(conn, TEMPLATE, ENV, FILES, now=now + timedelta(hours=1))
    assert first == second == template_id(TEMPLATE, ENV, FILES)
    with read(db) as conn:
        count = conn.execute(sa.select(sa.func.count()).select_from(tables.raw_template)).scalar()
        stored = get_raw_template(conn, first)
    assert count == 1
    assert (stored.template, stored.environment, stored.files) == (TEMPLATE, ENV, FILES)
    assert stored.created_at == now  # the first store wins


def test_get_unknown_template(db: Engine) -> None:
    with (
        read(db) as conn,
        pytest.raises(NotFound, match=r"The Template \(abc\) could not be found"),
    ):
        get_raw_template(conn, "abc")
