"""The store on its own: bootstrap, implied roles, a second SQLite writer, PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from identity_support import ADMIN_PASSWORD, IdentityClient
from sqlalchemy.engine import Engine

from kiln.cloud.sandbox.http_server import serve_in_thread
from kiln.cloud.sandbox.identity import IdentityStore, bootstrap, create_identity_app
from kiln.cloud.sandbox.identity.errors import Conflict, NotFound
from kiln.cloud.sandbox.identity.passwords import check_password

pytestmark = pytest.mark.timeout(60)

POSTGRESQL_URL = os.environ.get(
    "KILN_TEST_POSTGRESQL_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/{db}"
)


def test_bootstrap_is_idempotent_and_resets_passwords(store: IdentityStore, seed) -> None:
    again = bootstrap(store, admin_password="new-admin", demo_password="new-demo")
    assert again.admin_project == seed.admin_project
    assert again.demo_user.id == seed.demo_user.id
    assert check_password("new-demo", store.get_user(seed.demo_user.id).password_hash)
    assert len(store.list_assignments()) == 4
    assert [p.name for p in store.list_projects()] == ["admin", "demo", "service"]


def test_bootstrap_makes_the_stack_user_domain_and_its_admin(store: IdentityStore, seed) -> None:
    domain, admin = seed.stack_domain, seed.stack_domain_admin
    assert (domain.name, domain.enabled) == ("heat", True)
    assert (admin.name, admin.domain_id, admin.enabled) == ("heat_domain_admin", domain.id, True)
    # the admin password unless told otherwise; admin on domain heat and nothing else
    assert check_password(ADMIN_PASSWORD, admin.password_hash)
    grants = store.list_assignments(user_id=admin.id)
    assert [(a.target_type, a.target_id, a.role_id) for a in grants] == [
        ("domain", domain.id, seed.roles["admin"].id)
    ]
    assert store.list_projects(domain_id=domain.id) == []

    again = bootstrap(
        store,
        admin_password=ADMIN_PASSWORD,
        demo_password="d",
        stack_domain_admin_password="own-secret",
    )
    assert again.stack_domain == domain
    assert again.stack_domain_admin.id == admin.id
    assert check_password("own-secret", store.get_user(admin.id).password_hash)
    assert len(store.list_assignments(user_id=admin.id)) == 1
    assert [d.name for d in store.list_domains()] == ["Default", "heat"]


def test_implied_roles_are_transitive(store: IdentityStore, seed) -> None:
    roles = seed.roles
    assert store.expand_implied([roles["admin"].id]) == {
        roles["admin"].id,
        roles["member"].id,
        roles["reader"].id,
    }
    assert store.expand_implied([roles["heat_stack_owner"].id]) == {roles["heat_stack_owner"].id}


def test_duplicates_and_unknown_ids(store: IdentityStore, seed) -> None:
    with pytest.raises(Conflict):
        store.create_project("demo")
    with pytest.raises(NotFound):
        store.create_project("x", domain_id="nope")
    with pytest.raises(NotFound):
        store.delete_user("nope")


def test_a_second_sqlite_writer_is_waited_for(tmp_path: Path, seeded_database: Path) -> None:
    path = tmp_path / "shared.sqlite"
    path.write_bytes(seeded_database.read_bytes())
    # A short busy timeout, so that the lock surfaces as "database is locked" at once.
    engine = sa.create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.01})
    locked = threading.Event()
    release = threading.Event()

    def other_writer() -> None:
        conn = sqlite3.connect(path, timeout=5)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO keystone_settings (name, value) VALUES ('other', 'x')")
        locked.set()
        release.wait(10)
        conn.commit()
        conn.close()

    holder = threading.Thread(target=other_writer)
    holder.start()
    try:
        assert locked.wait(10)
        impatient = IdentityStore(engine, lock_retries=1)
        with pytest.raises(sa.exc.OperationalError, match="locked"):
            impatient.create_role("impatient")
        patient = IdentityStore(engine)
        threading.Timer(0.2, release.set).start()
        patient.create_role("patient")  # retried until the other writer commits
    finally:
        release.set()
        holder.join(10)
    assert [r.name for r in patient.list_roles(name="patient")] == ["patient"]
    engine.dispose()


@pytest.fixture
def postgresql_engine() -> Iterator[Engine]:
    name = f"kiln_identity_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(POSTGRESQL_URL.format(db="test"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    except sa.exc.OperationalError as exc:
        admin.dispose()
        pytest.skip(f"PostgreSQL is not reachable: {exc.orig}")
    engine = sa.create_engine(POSTGRESQL_URL.format(db=name))
    try:
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}"')
        admin.dispose()


def test_the_service_on_postgresql(postgresql_engine: Engine) -> None:
    store = IdentityStore(postgresql_engine)
    seed = bootstrap(store, admin_password="a", demo_password="d")
    bootstrap(store, admin_password="a", demo_password="d")
    with serve_in_thread(create_identity_app(store), poll_interval=0.02) as handle:
        api = IdentityClient(handle.url)
        admin, _ = api.login("admin", "admin", password="a")
        demo, doc = api.login("demo", "demo", password="d")
        assert {r["name"] for r in doc["roles"]} == {"member", "reader"}
        assert doc["project"]["id"] == seed.demo_project.id
        dup = api.request("POST", "/v3/projects", admin, json={"project": {"name": "demo"}})
        assert dup.status_code == 409
        assert api.validate(admin, demo, "DELETE").status_code == 204
        assert api.validate(admin, demo).status_code == 404
        api.close()


def test_change_listeners_hear_every_committed_write(store: IdentityStore, seed) -> None:
    heard: list[str] = []
    store.add_change_listener(lambda: heard.append("changed"))
    store.list_projects()  # a read changes nothing
    assert heard == []
    project = store.create_project("listened")
    store.delete_project(project.id)
    assert heard == ["changed", "changed"]
    with pytest.raises(Conflict):
        store.create_project("demo")  # a write that failed changed nothing
    assert len(heard) == 2
