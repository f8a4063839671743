"""``kiln manage``: the operator's commands of a scaled-out deployment (Heat's heat-manage).

``db-sync`` migrates the database of ``[database] connection``; ``service list`` and
``service clean`` show and remove engine processes (up: a heartbeat within two
``[engine] heartbeat_interval``, the API's rule with the default interval);
``purge-deleted`` removes soft-deleted stacks for good; ``stack resume`` hands a stuck
stack's work back to the live engines. Every command reads the same heat.conf-style
file as the services; ``--config-file`` goes before or after the subcommand.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import sqlalchemy as sa
from alembic.util import CommandError
from oslo_config import cfg
from sqlalchemy.engine import Engine

from kiln.cli import config
from kiln.cli.client.output import FORMATS, show_rows
from kiln.cli.engine_cmd import check_schema, config_files_option, configure_logging
from kiln.db import purge, recovery
from kiln.db.engine import create_engine, read, write
from kiln.db.engines import list_engines, reap_engines
from kiln.db.errors import NotFound
from kiln.db.migrate import current_revision, upgrade

# Where the group's --config-file values wait for the subcommand (ctx.meta is shared).
_GROUP_FILES = "kiln.manage.config_files"
GRANULARITIES = ("days", "hours", "minutes", "seconds")
SERVICE_COLUMNS = (
    "Engine ID",
    "Host",
    "PID",
    "Started",
    "Last heartbeat",
    "Heartbeat age (s)",
    "Status",
)


def _load(
    ctx: click.Context, config_files: tuple[str, ...], *, migrations_log: bool = False
) -> cfg.ConfigOpts:
    """The configuration of the group's files and then the subcommand's.

    Alembic's progress lines are shown by ``db-sync`` only (or with ``debug``).
    """
    files = [*ctx.meta.get(_GROUP_FILES, ()), *config_files]
    try:
        conf = config.load(files or None)
        # values are parsed when first read: a bad one is reported here, as one line
        for group in ("engine", "database"):
            for name in conf[group]:
                conf[group][name]
    except (cfg.Error, ValueError) as exc:
        raise click.ClickException(_one_line(exc)) from exc
    configure_logging(conf)
    quiet = not migrations_log and not conf.debug
    logging.getLogger("alembic").setLevel(logging.WARNING if quiet else logging.NOTSET)
    return conf


def _one_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def _database(conf: cfg.ConfigOpts, *, migrated: bool = True) -> Iterator[Engine]:
    """The configured database; ``migrated``: refuse one not at this Kiln's schema.

    Database errors become one line for the operator, never a traceback.
    """
    try:
        url = config.database_url(conf)
        db = create_engine(url, **config.pool_options(conf, url))
    except (config.ConfigError, ValueError, sa.exc.ArgumentError) as exc:
        raise click.ClickException(_one_line(exc)) from exc
    try:
        if migrated:
            check_schema(db)
        yield db
    except config.ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    except sa.exc.DBAPIError as exc:
        where = db.url.render_as_string(hide_password=True)
        raise click.ClickException(f"database {where}: {_one_line(exc)}") from exc
    finally:
        db.dispose()


def _alive(conf: cfg.ConfigOpts) -> timedelta:
    """How recent a heartbeat makes an engine up."""
    return timedelta(seconds=2 * conf.engine.heartbeat_interval)


def _now() -> datetime:
    return datetime.now(UTC)


def _time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@click.group("manage")
@config_files_option
@click.pass_context
def manage_command(ctx: click.Context, config_files: tuple[str, ...]) -> None:
    """Operator commands: database schema, engine services, purging, recovery."""
    ctx.meta[_GROUP_FILES] = config_files


@manage_command.command("db-sync")
@config_files_option
@click.pass_context
def db_sync(ctx: click.Context, config_files: tuple[str, ...]) -> None:
    """Migrate the database to this Kiln's schema (a no-op when it is there)."""
    conf = _load(ctx, config_files, migrations_log=True)
    with _database(conf, migrated=False) as db:
        before = current_revision(db)
        try:
            upgrade(db)
        except CommandError as exc:
            raise click.ClickException(
                f"cannot migrate from revision {before}: {_one_line(exc)}"
            ) from exc
        after = current_revision(db)
    if before == after:
        click.echo(f"Database already at revision {after} (head).")
    else:
        click.echo(f"Database migrated from revision {before or 'none'} to {after} (head).")


@manage_command.group("service")
def service() -> None:
    """Engine processes registered in the database."""


@service.command("list")
@config_files_option
@click.option("-f", "--format", "fmt", type=FORMATS, default="table", show_default=True)
@click.pass_context
def service_list(ctx: click.Context, config_files: tuple[str, ...], fmt: str) -> None:
    """List the engines with their last heartbeat and whether they are up."""
    conf = _load(ctx, config_files)
    alive = _alive(conf)
    now = _now()
    with _database(conf) as db, read(db) as conn:
        engines = list_engines(conn, now=now)
    rows: list[dict[str, Any]] = [
        dict(
            zip(
                SERVICE_COLUMNS,
                (
                    e.id,
                    e.host,
                    e.pid,
                    _time(e.started_at),
                    _time(e.heartbeat_at),
                    round(e.heartbeat_age.total_seconds(), 1),
                    "up" if e.heartbeat_age <= alive else "down",
                ),
                strict=True,
            )
        )
        for e in engines
    ]
    show_rows(rows, SERVICE_COLUMNS, fmt)


@service.command("clean")
@config_files_option
@click.pass_context
def service_clean(ctx: click.Context, config_files: tuple[str, ...]) -> None:
    """Remove the engines that are down (their tasks go to live engines when leases expire)."""
    conf = _load(ctx, config_files)
    now = _now()
    with _database(conf) as db, write(db) as conn:
        engines = {e.id: e for e in list_engines(conn, now=now)}
        removed = reap_engines(conn, now=now, max_age=_alive(conf))
    if not removed:
        click.echo("No engine is down.")
        return
    click.echo(f"Removed {len(removed)} engine(s) that were down:")
    for engine_id in removed:
        info = engines.get(engine_id)
        where = f" (host {info.host}, pid {info.pid})" if info else ""
        click.echo(f"  {engine_id}{where}")


@manage_command.command("purge-deleted")
@config_files_option
@click.option(
    "-g",
    "--granularity",
    type=click.Choice(GRANULARITIES),
    default="days",
    show_default=True,
    help="Unit of AGE.",
)
@click.option("-p", "--project-id", help="Only the stacks of this project.")
@click.option(
    "-b",
    "--batch-size",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Stacks (with their nested stacks) removed per transaction.",
)
@click.argument("age", type=click.IntRange(min=0), default=90)
@click.pass_context
def purge_deleted(
    ctx: click.Context,
    config_files: tuple[str, ...],
    granularity: str,
    project_id: str | None,
    batch_size: int,
    age: int,
) -> None:
    """Remove for good the stacks deleted more than AGE (default 90) days ago.

    Everything of theirs goes too: nested stacks, resources, events, snapshots,
    traversals, and the raw templates nothing else uses. Live stacks are never touched.
    """
    conf = _load(ctx, config_files)
    cutoff = _now() - timedelta(**{granularity: age})
    purged = templates = 0
    kept: set[str] = set()
    with _database(conf) as db:
        while True:
            with write(db) as conn:
                batch = purge.purge_batch(
                    conn,
                    deleted_before=cutoff,
                    limit=batch_size,
                    project_id=project_id,
                    skip=kept,
                )
            if batch.empty:
                break
            purged += len(batch.stack_ids)
            templates += batch.raw_templates
            kept.update(batch.kept_ids)
    click.echo(
        f"Purged {purged} stack(s) deleted before {_time(cutoff)} "
        f"and {templates} unused raw template(s)."
    )
    if kept:
        click.echo(f"Kept {len(kept)} deleted stack(s) with a live nested stack:")
        for stack_id in sorted(kept):
            click.echo(f"  {stack_id}")


@manage_command.group("stack")
def stack() -> None:
    """Operator actions on one stack."""


@stack.command("resume")
@config_files_option
@click.option(
    "--force",
    is_flag=True,
    help="Hand back every claimed task, also those of engines that look up.",
)
@click.argument("stack_id")
@click.pass_context
def stack_resume(
    ctx: click.Context, config_files: tuple[str, ...], force: bool, stack_id: str
) -> None:
    """Hand a stuck IN_PROGRESS stack's work back to the live engines.

    For the stack and its nested stacks: claimed tasks of engines that are down (all
    claimed tasks with --force) become ready at once, and lost traversals are repaired.
    """
    conf = _load(ctx, config_files)
    with _database(conf) as db:
        try:
            with write(db) as conn:
                done = recovery.resume_stack(
                    conn, stack_id, now=_now(), alive=_alive(conf), force=force
                )
        except (NotFound, recovery.NotInProgress) as exc:
            message = f"stack {stack_id} not found" if isinstance(exc, NotFound) else str(exc)
            raise click.ClickException(message) from exc
    _report_resume(done)


def _report_resume(done: recovery.Resumed) -> None:
    stack = done.stack
    nested = len(done.stack_ids) - 1
    click.echo(f"Stack {stack.id} ({stack.name}) with {nested} nested stack(s).")
    click.echo(f"Tasks handed back: {len(done.handed_back)}")
    for task in done.handed_back:
        owner = task.lease_owner or "no engine"
        click.echo(f"  {task.traversal_id} {task.node_key} (claimed by {owner})")
    click.echo(f"Traversals repaired: {len(done.repaired)}")
    for traversal_id, ready in sorted(done.repaired.items()):
        click.echo(f"  {traversal_id}: {len(ready)} task(s) made ready")
    click.echo(f"Stack status: {stack.action}_{stack.status}")
    if not done.handed_back and not done.repaired:
        click.echo("Nothing was stuck.")
    else:
        click.echo("The engines pick the work up on their next poll of the queue.")
