"""Shared test settings: where the read-only project material lives."""

from __future__ import annotations

import pathlib

import pytest

from tests_support import SHARED


@pytest.fixture(scope="session")
def shared_dir() -> pathlib.Path:
    if not SHARED.is_dir():
        pytest.fail(f"the shared material is missing at {SHARED}")
    return SHARED
