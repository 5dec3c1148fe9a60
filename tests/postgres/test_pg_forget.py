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
