"""End-to-end fixtures: ``kiln all`` in a subprocess, driven by the real clients.

One server per session (with Keystone auth) and one in ``--no-auth`` mode,
each on free ports with its own data directory and clouds.yaml.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kiln.testing.kiln_process import KilnServer, parse_json_output, start_server

__all__ = ["parse_json_output"]


@pytest.fixture(scope="session")
def kiln_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnServer]:
    server = start_server(tmp_path_factory.mktemp("kiln-all"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def kiln_noauth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnServer]:
    server = start_server(tmp_path_factory.mktemp("kiln-noauth"), "--no-auth")
    yield server
    server.stop()
