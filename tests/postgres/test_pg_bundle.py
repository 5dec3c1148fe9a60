"""Export and import across backends: SQLite -> PostgreSQL -> SQLite, equal at every step,
searchable after each import, through the command line and the home's configured stores."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from bundle_homes import BOB_TOKEN, file_parts, seed_files, seed_sessions, snapshot

from hermes_core.cli import main
from hermes_core.cli.export_cmd import bundle_parts
from hermes_core.lifecycle.bundle_export import export_bundle
from hermes_core.sessions.sqlite import SQLiteSessionStore


def _args(home: Path) -> argparse.Namespace:
    return argparse.Namespace(home=str(home), config=None, verbose=False)


def test_sqlite_to_postgres_to_sqlite(
    tmp_path: Path, pg_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    store = SQLiteSessionStore(source / "state.db")
    seed_sessions(store)
    seed_files(source)
    first = tmp_path / "first.zip"
    parts = file_parts(source, store)
    export_bundle(first, parts, user_id="alice")
    expected = snapshot(parts, "alice")
    store.close()

    pg_home = tmp_path / "pg"
    pg_home.mkdir()
    (pg_home / "config.yaml").write_text(
        f"sessions:\n  backend: postgres\n  dsn: {pg_dsn}\nmemory:\n  backend: postgres\n"
    )
    assert main(["import", "--home", str(pg_home), str(first)]) == 0
    assert "3 session(s)" in capsys.readouterr().out
    with bundle_parts(_args(pg_home)) as pg_parts:
        assert pg_parts.store.backend == "postgres" and pg_parts.documents.kind == "postgres"
        assert snapshot(pg_parts, "alice") == expected
        hits = pg_parts.store.search("pelican", user_id="alice")
        assert [h.session_id for h in hits] == ["a-1"]
        assert pg_parts.store.search("数据库迁移", user_id="alice")[0].session_id == "a-2"
        assert pg_parts.store.list_sessions(user_id="bob") == []
    # importing again collides, names what and changes nothing
    assert main(["import", "--home", str(pg_home), str(first)]) == 1
    assert "--skip-existing" in capsys.readouterr().err

    second = tmp_path / "second.zip"
    assert main(["export", "--home", str(pg_home), "--user", "alice", "--out", str(second)]) == 0
    capsys.readouterr()
    assert BOB_TOKEN.encode() not in second.read_bytes()
    back = tmp_path / "back"
    back.mkdir()
    assert main(["import", "--home", str(back), str(second)]) == 0
    with bundle_parts(_args(back)) as sqlite_parts:
        assert sqlite_parts.store.backend == "sqlite"
        assert snapshot(sqlite_parts, "alice") == expected
        assert sqlite_parts.store.search("lighthouse", user_id="alice")[0].session_id == "a-2"
