"""Forget finds the person in every SQLite session store of the home, not only the one in use:
the configuration may have changed after the sessions were written (the store turned off,
moved), and ``sessions backup`` copies are named in the report (reviewer's f3 and f1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from forget_plant import home_bytes, plant, where

from hermes_core.host import Hermes
from hermes_core.sessions.sqlite.schema import SCHEMA_VERSION

BASE = "memory:\n  per_user_memory: true\n"


def _host(home: Path, extra: str = "") -> Hermes:
    (home / "config.yaml").write_text(BASE + extra, encoding="utf-8")
    return Hermes.from_config(home / "config.yaml", home=home)


def _sessions_left(after: dict[Path, bytes], tokens: dict[str, str]) -> dict[str, list[str]]:
    places = ("active", "compacted", "summary", "toolargs")
    return {p: where(after, tokens[p]) for p in places if where(after, tokens[p])}


@pytest.mark.parametrize(
    "later",
    [
        "sessions:\n  enabled: false\n",
        "sessions:\n  db_path: other.db\n",
        "sessions:\n  enabled: false\n  db_path: /nonexistent-fixf/elsewhere.db\n",
    ],
)
def test_sessions_in_a_store_the_config_no_longer_names_are_forgotten(
    tmp_path: Path, later: str
) -> None:
    with _host(tmp_path) as hermes:
        alice = plant(hermes, "alice")
        bob = plant(hermes, "bob")
    with _host(tmp_path, later) as hermes:
        report = hermes.forget_user("alice")
    after = home_bytes(tmp_path)
    assert _sessions_left(after, alice) == {}
    assert report.deleted["sessions"] == 1 and report.deleted["messages"] == 5
    assert report.complete, report.not_deleted
    assert _sessions_left(after, bob) == {
        p: [str(tmp_path / "state.db")] for p in ("active", "compacted", "summary", "toolargs")
    }


def test_the_configured_file_outside_the_home_and_a_nested_old_store(tmp_path: Path) -> None:
    home, outside = tmp_path / "home", tmp_path / "outside"
    home.mkdir()
    outside.mkdir()
    with _host(home, f"sessions:\n  db_path: {outside / 's.db'}\n") as hermes:
        out_tokens = plant(hermes, "alice")
    with _host(home, "sessions:\n  db_path: old/nested.db\n") as hermes:
        (home / "old").mkdir()
        nested = plant(hermes, "alice")
    with _host(home, f"sessions:\n  enabled: false\n  db_path: {outside / 's.db'}\n") as hermes:
        report = hermes.forget_user("alice")
    assert _sessions_left(home_bytes(outside), out_tokens) == {}
    assert _sessions_left(home_bytes(home), nested) == {}
    assert report.deleted["sessions"] == 2 and report.complete, report.not_deleted


def test_a_store_that_cannot_be_opened_is_reported(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        plant(hermes, "alice")
    with sqlite3.connect(tmp_path / "state.db") as conn:  # as if a newer version wrote it
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with _host(tmp_path, "sessions:\n  enabled: false\n") as hermes:
        report = hermes.forget_user("alice")
    assert not report.complete
    assert any(str(tmp_path / "state.db") in p and "may remain" in p for p in report.not_deleted)


def test_a_backup_holding_the_user_is_named_not_rewritten(tmp_path: Path) -> None:
    with _host(tmp_path) as hermes:
        alice = plant(hermes, "alice")
        store = hermes.session_store
        assert store is not None
        (tmp_path / "backups").mkdir()
        backup = tmp_path / "backups" / "sessions-1.db"
        store.backup(backup)  # what `hermes-context sessions backup --out FILE` does
        before = backup.read_bytes()
        report = hermes.forget_user("alice")
        nobody = hermes.forget_user("carol")  # not in the backup: nothing to say
    after = home_bytes(tmp_path)
    assert {p: where(after, t) for p, t in alice.items() if where(after, t)} == {
        p: [str(backup)] for p in ("active", "compacted", "summary", "toolargs")
    }
    assert backup.read_bytes() == before
    assert not report.complete
    [problem] = report.not_deleted
    assert str(backup) in problem and "backup" in problem and "delete it" in problem
    assert nobody.complete, nobody.not_deleted
