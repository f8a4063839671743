"""Constants for tests (importable because pytest puts tests/ on sys.path)."""

from __future__ import annotations

import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]
SHARED = (REPO.parent / "shared").resolve()
CORPUS = SHARED / "corpus"
