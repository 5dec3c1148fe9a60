"""Retention, statistics and vacuum of the PostgreSQL store (docs/sessions.md, issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pg import sql

from hermes_core.cli import main
from hermes_core.sessions.retention import DAY, DROPPED_NOTICE, STATISTICS_EVERY
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore
from hermes_plugins.postgres.sessions.search import search_plan

WORDS = "retention keeps every archived word findable " * 30


def _seed(store: PostgresSessionStore, start: float) -> None:
    store.open_session("old", user_id="alice")
    store.append_messages(
        "old",
        [
            {"role": "user", "content": f"zebra {WORDS}"},
            {"role": "assistant", "content": f"okapi {WORDS}"},
        ],
    )
    store.commit_compaction(
        "old", [{"role": "user", "content": "[summary] zebra and okapi"}], [None], in_place=True
    )
    store.open_session("bob-old", user_id="bob")
    store.append_messages("bob-old", [{"role": "user", "content": f"zebra {WORDS}"}])


def test_retention_archives_idle_sessions_and_search_follows(pg_dsn: str) -> None:
    clock = [1_000_000.0]
    store = PostgresSessionStore(Database(pg_dsn, timeout=30), clock=lambda: clock[0])
    _seed(store, clock[0])
    clock[0] += 40 * DAY
    store.open_session("new", user_id="alice")
    store.append_messages("new", [{"role": "user", "content": f"zebra {WORDS}"}])
    before = store.messages("bob-old", include_archived=True)
    assert set(store.retain(days=30, dry_run=True).sessions) == {"old", "bob-old"}
    assert store.last_retention() is None
    report = store.retain(days=30, bodies="drop")
    assert set(report.sessions) == {"old", "bob-old"} and report.dropped == 2
    assert store.messages("bob-old", include_archived=True) == before  # compressed by TOAST
    rows = store.messages("old", include_archived=True)
    assert [r.message["content"] for r in rows if r.compacted] == [DROPPED_NOTICE] * 2
    assert store.search("okapi", user_id="alice")[0].seq == 3  # the summary only
    assert [h.session_id for h in store.search("findable", user_id="alice")] == ["new"]
    assert store.search("findable", user_id="bob")[0].session_id == "bob-old"
    assert store.retain(days=30).sessions == ()
    assert store.last_retention() == clock[0]
    assert store.has_statistics()  # retention analysed the tables
    store.close()


def test_statistics_after_a_large_append_and_the_plan_uses_the_index(pg_dsn: str) -> None:
    store = PostgresSessionStore(Database(pg_dsn, timeout=30))
    sql(pg_dsn, "ALTER TABLE hermes.messages SET (autovacuum_enabled = false)")
    store.open_session("s", user_id="u")
    store.append_messages("s", [{"role": "user", "content": "common"}] * (STATISTICS_EVERY - 1))
    assert not store.has_statistics()
    store.append_messages("s", [{"role": "user", "content": "rare"}])
    assert store.has_statistics()
    for word in ("common", "rare"):
        plan = store._run(lambda c, w=word: search_plan(c, w, user_id="u"), idempotent=True)
        assert "messages_search" in plan and "Seq Scan on messages" not in plan
    store.close()


def test_vacuum_reports_sizes_and_backup_points_to_export(
    pg_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = PostgresSessionStore(Database(pg_dsn, timeout=30))
    _seed(store, 0.0)
    store.retain(days=1, bodies="drop")
    space = store.vacuum(full=True)
    assert space.after < space.before
    store.close()
    (tmp_path / "config.yaml").write_text(f"sessions:\n  backend: postgres\n  dsn: {pg_dsn}\n")
    code = main(["--home", str(tmp_path), "sessions", "backup", "--out", str(tmp_path / "b")])
    assert code == 2 and "hermes-context export" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
    assert main(["--home", str(tmp_path), "sessions", "vacuum", "--json"]) == 0
