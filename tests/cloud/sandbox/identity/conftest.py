"""Fixtures: an identity service over SQLite in tmp_path, served on an ephemeral port.

Creating the tables and bootstrapping costs a few hundred milliseconds of SQLite commits,
so it is done once per session into a template file that each test copies.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from identity_support import (
    ADMIN_PASSWORD,
    CATALOG,
    DEMO_PASSWORD,
    SERVICE_PASSWORD,
    IdentityClient,
)

from kiln.cloud.sandbox.http_server import ServerHandle, serve_in_thread
from kiln.cloud.sandbox.identity import IdentityStore, bootstrap, create_identity_app
from kiln.cloud.sandbox.identity.bootstrap import BootstrapResult
from kiln.core.clock import VirtualClock


def seed_store(store: IdentityStore) -> BootstrapResult:
    return bootstrap(
        store,
        admin_password=ADMIN_PASSWORD,
        demo_password=DEMO_PASSWORD,
        service_password=SERVICE_PASSWORD,
    )


@pytest.fixture(scope="session")
def seeded_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("identity") / "template.sqlite"
    engine = sa.create_engine(f"sqlite:///{path}")
    store = IdentityStore(engine)
    seed_store(store)
    store.fernet("token")
    store.fernet("credential")
    engine.dispose()
    return path


@pytest.fixture
def clock() -> VirtualClock:
    # Near the real time: keystonemiddleware compares expiry with its own clock.
    return VirtualClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def store(tmp_path: Path, clock: VirtualClock, seeded_database: Path) -> Iterator[IdentityStore]:
    path = tmp_path / "kiln.sqlite"
    shutil.copyfile(seeded_database, path)
    engine = sa.create_engine(f"sqlite:///{path}")
    yield IdentityStore(engine, now=clock.now)
    engine.dispose()


@pytest.fixture
def seed(store: IdentityStore) -> BootstrapResult:
    return seed_store(store)  # finds what the template holds


@pytest.fixture
def identity(store: IdentityStore, seed: BootstrapResult) -> Iterator[ServerHandle]:
    with serve_in_thread(create_identity_app(store, catalog=CATALOG), poll_interval=0.02) as handle:
        yield handle


@pytest.fixture
def client(identity: ServerHandle) -> Iterator[IdentityClient]:
    api = IdentityClient(identity.url)
    try:
        yield api
    finally:
        api.close()
