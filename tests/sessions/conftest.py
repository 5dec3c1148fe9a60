"""Fixtures for the session-store tests: a real SQLite file in a temp directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.sessions.sqlite import SQLiteSessionStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SQLiteSessionStore]:
    opened = SQLiteSessionStore(db_path)
    yield opened
    opened.close()


@pytest.fixture(params=[True, False], ids=["fts", "like"])
def any_store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[SQLiteSessionStore]:
    """The store with its FTS5 index, and the same store forced onto the LIKE fallback."""
    opened = SQLiteSessionStore(db_path, fts=request.param)
    yield opened
    opened.close()
