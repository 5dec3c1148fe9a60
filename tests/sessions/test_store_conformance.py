"""The SQLite store passes the public session-store conformance kit, with its FTS5 index and
forced onto the LIKE fallback; the kit's documented example runs as written."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from subpytest import run_pytest

from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.sessions.store import SessionStore
from hermes_core.testing import SessionStoreConformance


class TestSQLiteStoreConformance(SessionStoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], SessionStore]:
        return lambda: SQLiteSessionStore(tmp_path / "state.db", fts=True)


class TestSQLiteLikeFallbackConformance(SessionStoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], SessionStore]:
        def open_store() -> SessionStore:
            store = SQLiteSessionStore(tmp_path / "state.db", fts=False)
            assert store.fts is False
            return store

        return open_store


def test_the_docs_example_runs_the_kit(tmp_path: Path) -> None:
    """The example of "Writing a session-store backend" in docs/plugins.md, with the SQLite
    store as ``MyStore``, collects the whole kit and passes under a real pytest run."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
    section = docs.read_text(encoding="utf-8").split("## Writing a session-store backend")[1]
    (example,) = re.findall(r"```py\n(.*?)```", section, re.DOTALL)
    (tmp_path / "my_store.py").write_text(
        "from hermes_core.sessions.sqlite import SQLiteSessionStore as MyStore\n"
    )
    (tmp_path / "test_my_store_conformance.py").write_text(example)
    proc = run_pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kit = [name for name in dir(SessionStoreConformance) if name.startswith("test_")]
    passed = re.search(r"(\d+) passed", proc.stdout)
    assert passed is not None and int(passed.group(1)) > len(kit), proc.stdout
