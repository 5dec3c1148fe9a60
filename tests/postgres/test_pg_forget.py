"""Forget on PostgreSQL (``sessions.backend`` and ``memory.backend``: postgres): plant a token
per place for two users, forget one, then read every table of the database as text and every
file of the home as bytes: none of the forgotten user's tokens, all of the other's."""

from __future__ import annotations

from pathlib import Path

import pytest
from forget_plant import home_bytes, plant, plant_shared, where
from pg import sql

from hermes_core.host import Hermes

TABLES = ("hermes.messages", "hermes.sessions")


def _host(home: Path, dsn: str) -> Hermes:
    (home / "config.yaml").write_text(
        "memory:\n  backend: postgres\n  per_user_memory: true\n"
        f"sessions:\n  backend: postgres\n  dsn: {dsn}\n",
        encoding="utf-8",
    )
    return Hermes.from_config(home / "config.yaml", home=home)


def _tables_as_text(dsn: str) -> str:
    tables = sql(
        dsn,
        "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) "
        "FROM information_schema.tables WHERE table_schema NOT IN "
        "('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
    )
    return "\n".join(
        str(row) for (name,) in tables for row in sql(dsn, f"SELECT t::text FROM {name} AS t")
    )


def _file_and_vacuumed(dsn: str, table: str) -> tuple[object, object]:
    """The table's data file (``VACUUM FULL`` writes a new one) and its last plain vacuum."""
    rows = sql(
        dsn,
        "SELECT c.relfilenode, s.last_vacuum FROM pg_class AS c JOIN pg_stat_user_tables "
        "AS s ON s.relid = c.oid WHERE c.oid = %s::regclass",
        table,
    )
    return rows[0]


@pytest.mark.parametrize("vacuum_full", [False, True])
def test_no_row_of_the_forgotten_user_is_left(
    isolated_home: Path, pg_dsn: str, vacuum_full: bool
) -> None:
    with _host(isolated_home, pg_dsn) as hermes:
        alice = plant(hermes, "alice")
        bob = plant(hermes, "bob")
        anon = plant(hermes, None)
        shared = plant_shared(hermes, "alice")
        before = _tables_as_text(pg_dsn)
        files_before = {t: _file_and_vacuumed(pg_dsn, t)[0] for t in TABLES}
        assert all(t in before for t in alice.values() if "backup" not in t)
        report = hermes.forget_user("alice", vacuum_full=vacuum_full)
    after = _tables_as_text(pg_dsn)
    files = home_bytes(isolated_home)
    assert [t for t in alice.values() if t in after or where(files, t)] == []
    kept = [t for t in (*bob.values(), *anon.values()) if "backup" not in t]
    assert [t for t in kept if t not in after] == []
    assert shared in after and [e["preview"] for e in report.shared_entries] == [f"shared {shared}"]
    assert report.deleted["sessions"] == 1 and report.deleted["messages"] == 5
    assert report.providers["postgres"] == {
        "memory blocks": 2,
        "memory copies": 0,
        "staged writes": 1,
        "audit rows": 2,
    }
    assert report.complete, report.not_deleted
    for table in TABLES:  # the dead rows were vacuumed away (FULL: the files rewritten)
        data_file, vacuumed = _file_and_vacuumed(pg_dsn, table)
        if vacuum_full:
            assert data_file != files_before[table]
        else:
            assert data_file == files_before[table] and vacuumed is not None


def _live_tuples_with(dsn: str, table: str, needle: str) -> int:
    """Tuples on ``table``'s pages (dead or alive, not yet removed) holding ``needle``."""
    sql(dsn, "CREATE EXTENSION IF NOT EXISTS pageinspect")
    rows = sql(
        dsn,
        "SELECT count(*) FROM generate_series(0, pg_relation_size(%s::regclass) / "
        "current_setting('block_size')::int - 1) AS b, heap_page_items(get_raw_page(%s, "
        "b::int)) AS i WHERE i.lp_flags = 1 AND position(%s::bytea IN i.t_data) > 0",
        table,
        table,
        needle.encode(),
    )
    return int(rows[0][0])


def test_an_older_snapshot_is_reported_and_a_second_run_finishes(
    isolated_home: Path, pg_dsn: str
) -> None:
    import psycopg

    with _host(isolated_home, pg_dsn) as hermes:
        alice = plant(hermes, "alice")
        plant(hermes, "bob")
        reader = psycopg.connect(pg_dsn)
        try:  # another host's open REPEATABLE READ transaction, from before the delete
            reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            reader.execute("SELECT count(*) FROM hermes.messages").fetchone()
            report = hermes.forget_user("alice")
            still = reader.execute("SELECT count(*) FROM hermes.sessions WHERE user_id = 'alice'")
            assert still.fetchone() == (1,)  # that snapshot still reads her rows
            assert _live_tuples_with(pg_dsn, "hermes.messages", alice["active"]) >= 1
        finally:
            reader.rollback()
            reader.close()
        again = hermes.forget_user("alice")
    assert not report.complete
    problems = "\n".join(report.not_deleted)
    assert "hermes.messages, hermes.sessions: the user's deleted rows could not be removed" in (
        problems
    )
    assert "run forget again" in problems
    # the memory tables: deleted too, and the same snapshot keeps their dead rows
    assert "plugin 'postgres' could not forget the user: deleted 2 memory blocks" in problems
    assert report.deleted["sessions"] == 1
    assert again.complete, again.not_deleted
    assert _live_tuples_with(pg_dsn, "hermes.messages", alice["active"]) == 0


def test_the_anonymous_principal_keeps_the_operators_audit_rows(
    isolated_home: Path, pg_dsn: str
) -> None:
    from hermes_core.provenance.audit_log import AuditRecorder

    with _host(isolated_home, pg_dsn) as hermes:
        anon = plant(hermes, None)
        bob = plant(hermes, "bob")
        log = hermes.memory_documents().audit_log
        recorder = AuditRecorder(log, store="memory")
        recorder.record("landed", actor="cli:op", contents=["zqopshared"], target="memory")
        recorder.record("landed", actor="cli:op", contents=["zqopprofile"], target="user")
        report = hermes.forget_user(None)
    after = _tables_as_text(pg_dsn)
    assert [t for t in anon.values() if t in after] == []
    assert "zqopshared" in after and "zqopprofile" not in after
    assert [t for t in bob.values() if "backup" not in t and t not in after] == []
    assert report.providers["postgres"]["audit rows"] == 2
    assert report.complete, report.not_deleted
