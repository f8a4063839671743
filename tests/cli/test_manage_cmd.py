"""``kiln manage``: db-sync, service list/clean, purge-deleted and stack resume over a
temporary SQLite database named by a config file, and their one-line errors."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from sqlalchemy.engine import Engine

from kiln.cli.main import cli
from kiln.db import tables
from kiln.db.engine import create_engine, read, write
from kiln.db.engines import register_engine
from kiln.db.migrate import current_revision, head_revision, upgrade
from kiln.db.stacks import Stack, create_stack, soft_delete_stack
from kiln.db.tasks import claim_tasks
from kiln.db.templates import store_raw_template
from kiln.db.traversals import NodeSpec, list_tasks, start_traversal

Run = Callable[..., Result]
NOW = datetime.now(UTC)


def _config(tmp_path: Path, body: str) -> str:
    path = tmp_path / f"kiln-{uuid.uuid4().hex[:6]}.conf"
    path.write_text(body)
    return str(path)


@pytest.fixture(autouse=True)
def _no_config_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KILN_CONFIG_FILE", raising=False)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/kiln.sqlite"


@pytest.fixture
def conf_file(tmp_path: Path, url: str) -> str:
    # a long heartbeat interval: "up" does not depend on how fast the test runs
    return _config(
        tmp_path, f"[database]\nconnection = {url}\n[engine]\nheartbeat_interval = 3600\n"
    )


@pytest.fixture
def run(conf_file: str) -> Run:
    def invoke(*args: str, conf: str = conf_file) -> Result:
        return CliRunner().invoke(cli, ["manage", "--config-file", conf, *args])

    return invoke


@pytest.fixture
def db(url: str) -> Iterator[Engine]:
    upgrade(url)
    engine = create_engine(url)
    yield engine
    engine.dispose()


def _stack(db: Engine, *, project_id: str = "proj", deleted: datetime | None = None) -> Stack:
    with write(db) as conn:
        tid = store_raw_template(conn, {"description": uuid.uuid4().hex}, now=NOW)
        stack = create_stack(
            conn,
            stack_id=str(uuid.uuid4()),
            name=f"s-{uuid.uuid4().hex[:8]}",
            project_id=project_id,
            user_id="user",
            raw_template_id=tid,
            now=NOW - timedelta(days=365),
        )
        if deleted is not None:
            soft_delete_stack(conn, stack.id, now=deleted)
    return stack


def _stack_ids(db: Engine) -> set[str]:
    with read(db) as conn:
        return set(conn.execute(sa.select(tables.stack.c.id)).scalars())


def test_db_sync_migrates_and_then_does_nothing(run: Run, url: str, conf_file: str) -> None:
    head = head_revision()
    first = run("db-sync")
    assert first.exit_code == 0, first.output
    assert f"from revision none to {head}" in first.stdout
    assert current_revision(url) == head
    # the option also goes after the subcommand
    again = CliRunner().invoke(cli, ["manage", "db-sync", "--config-file", conf_file])
    assert again.exit_code == 0, again.output
    assert f"already at revision {head}" in again.stdout


def test_commands_other_than_db_sync_want_a_migrated_database(run: Run) -> None:
    result = run("service", "list")
    assert result.exit_code == 1
    assert "run 'kiln manage db-sync' first" in result.output
    assert "Traceback" not in result.output


def test_service_list_and_clean(run: Run, db: Engine) -> None:
    with write(db) as conn:
        register_engine(conn, "eng-up", host="h1", pid=11, now=NOW)
        register_engine(conn, "eng-down", host="h2", pid=22, now=NOW - timedelta(days=1))
    listed = run("service", "list", "-f", "json")
    assert listed.exit_code == 0, listed.output
    rows = {row["Engine ID"]: row for row in json.loads(listed.stdout)}
    assert {k: (r["Host"], r["PID"], r["Status"]) for k, r in rows.items()} == {
        "eng-up": ("h1", 11, "up"),
        "eng-down": ("h2", 22, "down"),
    }
    assert rows["eng-down"]["Heartbeat age (s)"] >= 86400
    assert "eng-up" in run("service", "list").stdout  # the table

    cleaned = run("service", "clean")
    assert cleaned.exit_code == 0, cleaned.output
    assert "eng-down (host h2, pid 22)" in cleaned.stdout
    assert "eng-up" not in cleaned.stdout
    listed = json.loads(run("service", "list", "-f", "json").stdout)
    assert [row["Engine ID"] for row in listed] == ["eng-up"]
    assert "No engine is down." in run("service", "clean").stdout


def test_purge_deleted(run: Run, db: Engine) -> None:
    old = [_stack(db, deleted=NOW - timedelta(days=100)) for _ in range(3)]
    recent = _stack(db, deleted=NOW - timedelta(hours=3))
    theirs = _stack(db, project_id="other", deleted=NOW - timedelta(hours=3))
    live = _stack(db)

    result = run("purge-deleted", "--batch-size", "2")  # AGE 90 days
    assert result.exit_code == 0, result.output
    assert "Purged 3 stack(s)" in result.stdout
    assert _stack_ids(db) == {recent.id, theirs.id, live.id}
    with read(db) as conn:
        left = set(conn.execute(sa.select(tables.raw_template.c.id)).scalars())
    assert not {s.raw_template_id for s in old} & left

    result = run("purge-deleted", "--granularity", "hours", "--project-id", "proj", "1")
    assert "Purged 1 stack(s)" in result.stdout
    assert _stack_ids(db) == {theirs.id, live.id}
    assert "Purged 1 stack(s)" in run("purge-deleted", "-g", "seconds", "0").stdout
    assert _stack_ids(db) == {live.id}


def test_purge_deleted_refuses_a_negative_age(run: Run) -> None:
    result = run("purge-deleted", "--", "-1")
    assert result.exit_code == 2
    assert "-1" in result.output


def _running_stack(db: Engine, claimed_by: str) -> tuple[Stack, str]:
    stack = _stack(db)
    traversal_id = str(uuid.uuid4())
    with write(db) as conn:
        assert start_traversal(
            conn,
            traversal_id=traversal_id,
            stack_id=stack.id,
            expected_current=None,
            action="CREATE",
            raw_template_id=stack.raw_template_id,
            nodes=[NodeSpec("a", "a")],
            edges=[],
            now=NOW,
        )
        assert claim_tasks(conn, claimed_by, now=NOW, lease=timedelta(hours=1), limit=10)
    return stack, traversal_id


def test_stack_resume(run: Run, db: Engine) -> None:
    with write(db) as conn:
        register_engine(conn, "eng-down", host="h", pid=1, now=NOW - timedelta(days=1))
    stack, traversal_id = _running_stack(db, "eng-down")
    result = run("stack", "resume", stack.id)
    assert result.exit_code == 0, result.output
    assert "Tasks handed back: 1" in result.stdout
    assert f"{traversal_id} a (claimed by eng-down)" in result.stdout
    assert "Stack status: CREATE_IN_PROGRESS" in result.stdout
    with read(db) as conn:
        assert [t.state for t in list_tasks(conn, traversal_id)] == ["READY"]
    assert "Nothing was stuck." in run("stack", "resume", stack.id).stdout


def test_stack_resume_force_takes_a_live_engines_tasks(run: Run, db: Engine) -> None:
    with write(db) as conn:
        register_engine(conn, "eng-up", host="h", pid=1, now=NOW)
    stack, traversal_id = _running_stack(db, "eng-up")
    assert "Tasks handed back: 0" in run("stack", "resume", stack.id).stdout
    result = run("stack", "resume", "--force", stack.id)
    assert "Tasks handed back: 1" in result.stdout
    with read(db) as conn:
        assert [t.state for t in list_tasks(conn, traversal_id)] == ["READY"]


def test_stack_resume_refuses_what_is_not_in_progress(run: Run, db: Engine) -> None:
    idle = _stack(db)
    result = run("stack", "resume", idle.id)
    assert result.exit_code == 1
    assert f"Error: stack {idle.id} is INIT_COMPLETE, not IN_PROGRESS" in result.output
    missing = run("stack", "resume", "no-such-stack")
    assert missing.exit_code == 1
    assert "Error: stack no-such-stack not found" in missing.output


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[database]\n", "Error: [database] connection is not set"),
        (
            "[database]\nconnection = postgresql://postgres@127.0.0.1:1/kiln\n",
            "Connection refused",
        ),
        ("[database]\nconnection = oracle://x/y\n", "unsupported database backend"),
        ("[engine]\nheartbeat_interval = often\n", "heartbeat_interval"),
    ],
)
def test_configuration_and_database_errors_are_one_line(
    run: Run, tmp_path: Path, body: str, message: str
) -> None:
    for args in (("db-sync",), ("service", "list"), ("purge-deleted",)):
        result = run(*args, conf=_config(tmp_path, body))
        assert result.exit_code == 1, result.output
        assert message in result.output
        assert len(result.output.strip().splitlines()) == 1
        assert isinstance(result.exception, SystemExit)
