"""Retention, statistics, vacuum and backup of the SQLite store (docs/sessions.md, issue 28)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.config.loader import load_config
from hermes_core.errors import ConfigError, SessionError
from hermes_core.sessions.retention import DAY, DROPPED_NOTICE, STATISTICS_EVERY
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.sessions.sqlite.fts import integrity_check

WORDS = "retention keeps every archived word findable " * 30


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _home(tmp_path: Path, clock: Clock) -> SQLiteSessionStore:
    store = SQLiteSessionStore(tmp_path / "state.db", clock=clock)
    store.open_session("old", user_id="alice", title="old one")
    store.append_messages(
        "old",
        [
            {"role": "user", "content": f"zebra {WORDS}"},
            {"role": "assistant", "content": f"okapi {WORDS}", "extra_key": [1, 2]},
            {"role": "user", "content": "short"},
        ],
    )
    store.commit_compaction(
        "old", [{"role": "user", "content": "[summary] zebra and okapi"}], [None], in_place=True
    )
    store.open_session("bob-old", user_id="bob")
    store.append_messages("bob-old", [{"role": "user", "content": f"zebra {WORDS}"}])
    clock.now += 40 * DAY
    store.open_session("new", user_id="alice")
    store.append_messages("new", [{"role": "user", "content": f"zebra {WORDS}"}])
    return store


def test_compress_archives_only_idle_sessions_and_keeps_every_word(tmp_path: Path) -> None:
    clock = Clock()
    store = _home(tmp_path, clock)
    before = {s: store.messages(s, include_archived=True) for s in ("old", "bob-old", "new")}
    plan = store.retain(days=30, dry_run=True)
    assert set(plan.sessions) == {"old", "bob-old"} and plan.packed == 0
    assert store.last_retention() is None  # a dry run changes nothing
    report = store.retain(days=30, bodies="compress")
    assert set(report.sessions) == {"old", "bob-old"} and report.packed == 3
    after = {s: store.messages(s, include_archived=True) for s in ("old", "bob-old", "new")}
    assert after == before  # read back exactly, archived rows included
    raw = sqlite3.connect(store.path)
    packed = raw.execute("SELECT session_id FROM messages WHERE body_z IS NOT NULL").fetchall()
    assert {row[0] for row in packed} == {"old", "bob-old"}
    hits = store.search("okapi", user_id="alice")
    assert [h.session_id for h in hits] == ["old"] and ">>okapi<<" in hits[0].snippet
    assert store.search("okapi", user_id="bob") == []
    assert {h.session_id for h in store.search("zebra", user_id="alice")} == {"old", "new"}
    integrity_check(raw)
    raw.close()
    assert store.retain(days=30).sessions == ()  # nothing idle is left unarchived
    assert store.last_retention() == clock.now


def test_drop_replaces_summarised_bodies_and_their_words_go(tmp_path: Path) -> None:
    store = _home(tmp_path, Clock())
    report = store.retain(days=30, bodies="drop")
    assert report.dropped == 3  # the rows the compaction archived
    rows = store.messages("old", include_archived=True)
    assert [r.message["content"] for r in rows if r.compacted] == [DROPPED_NOTICE] * 3
    assert [r.message["content"] for r in rows if r.active] == ["[summary] zebra and okapi"]
    assert store.search("okapi", user_id="alice")[0].seq == 4  # only the summary has it
    assert [h.session_id for h in store.search("findable", user_id="alice")] == ["new"]
    assert store.search("findable", user_id="bob")[0].session_id == "bob-old"  # compressed
    raw = sqlite3.connect(store.path)
    integrity_check(raw)
    raw.close()
    # a dropped row written again (an imported bundle) keeps the notice out of the index too
    store.open_session("copy", user_id="alice")
    store.append_messages("copy", [rows[0].message])
    assert store.messages("copy")[0].message == rows[0].message
    assert store.search("replaced", user_id="alice") == []


def test_a_session_written_after_archiving_is_archived_again(tmp_path: Path) -> None:
    clock = Clock()
    store = _home(tmp_path, clock)
    store.retain(days=30)
    store.append_messages("bob-old", [{"role": "user", "content": f"giraffe {WORDS}"}])
    assert store.retain(days=30).sessions == ()  # active again
    clock.now += 31 * DAY
    assert "bob-old" in store.retain(days=30).sessions
    assert store.search("giraffe", user_id="bob")[0].session_id == "bob-old"


def test_packed_rows_are_deleted_cleanly_and_the_shell_cannot_break_the_index(
    tmp_path: Path,
) -> None:
    store = _home(tmp_path, Clock())
    store.retain(days=30)
    shell = sqlite3.connect(store.path, isolation_level=None)  # no hermes_unpack here
    with pytest.raises(sqlite3.DatabaseError, match="archived"):
        shell.execute("DELETE FROM messages WHERE session_id = 'old'")
    shell.close()
    store._pool.write(lambda c: c.execute("DELETE FROM messages WHERE session_id = 'old'"))
    assert store.search("okapi", user_id="alice") == []
    check = sqlite3.connect(store.path)
    integrity_check(check)
    check.close()


def test_vacuum_shrinks_the_file_and_backup_is_a_readable_copy(tmp_path: Path) -> None:
    store = _home(tmp_path, Clock())
    store.retain(days=30, bodies="drop")
    space = store.vacuum()
    assert space.after < space.before
    copy = tmp_path / "copy.db"
    store.backup(copy)
    with pytest.raises(SessionError, match="exists"):
        store.backup(copy)
    again = SQLiteSessionStore(copy)
    assert again.messages("old", include_archived=True) == store.messages(
        "old", include_archived=True
    )
    assert again.search("findable", user_id="bob")[0].session_id == "bob-old"
    again.close()


def test_statistics_exist_after_a_large_append_and_after_retention(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    store.open_session("s", user_id=None)
    store.append_messages("s", [{"role": "user", "content": "a"}] * (STATISTICS_EVERY - 1))
    assert not store.has_statistics()
    store.append_messages("s", [{"role": "user", "content": "b"}])
    assert store.has_statistics()
    plan = store._pool.read(
        lambda c: c.execute(
            "EXPLAIN QUERY PLAN SELECT seq FROM messages WHERE session_id = 's' AND seq = 3"
        ).fetchall()
    )
    assert any("messages_session_seq" in str(row) for row in plan)


def test_backup_is_consistent_while_another_process_writes(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    store.open_session("w", user_id=None)
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from hermes_core.sessions.sqlite import SQLiteSessionStore as S\n"
            "s = S(sys.argv[1]); print('ready', flush=True)\n"
            "for i in range(400): s.append_messages('w', [{'role': 'user', 'content': f'm{i}'}])\n",
            str(store.path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    copies = []
    for n in range(3):
        target = tmp_path / f"copy{n}.db"
        store.backup(target)
        copies.append(target)
    assert writer.wait(timeout=120) == 0
    for target in copies:
        conn = sqlite3.connect(target)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        seqs = [row[0] for row in conn.execute("SELECT seq FROM messages ORDER BY seq")]
        assert seqs == list(range(1, len(seqs) + 1))  # a prefix: one committed snapshot
        integrity_check(conn)
        conn.close()


def test_retention_settings_come_from_config_yaml(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "sessions:\n  retention:\n    archive_after_days: 30\n    bodies: drop\n    auto: false\n"
    )
    settings = load_config(home=tmp_path).settings.sessions.retention
    assert (settings.archive_after_days, settings.bodies, settings.auto) == (30, "drop", False)
    for bad in ("bodies: zip", "archive_after_days: -1", "auto: maybe", "keep_days: 3"):
        (tmp_path / "config.yaml").write_text(f"sessions:\n  retention:\n    {bad}\n")
        with pytest.raises(ConfigError):
            load_config(home=tmp_path)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from hermes_core.cli import main; raise SystemExit(main())",
            "--home",
            str(home),
            "sessions",
            *args,
        ],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        check=False,
    )


def test_the_host_runs_retention_as_configured_at_most_once_a_day(tmp_path: Path) -> None:
    from hermes_core.host.hermes import Hermes

    clock = Clock()
    _home(tmp_path, clock).close()
    (tmp_path / "config.yaml").write_text(
        "sessions:\n  retention:\n    archive_after_days: 30\n    bodies: drop\n"
    )
    host = Hermes(load_config(home=tmp_path))
    assert host.session_store is not None  # opened: its wall clock finds every session idle
    host.close()
    store = SQLiteSessionStore(tmp_path / "state.db")
    first = store.last_retention()
    assert first is not None and store.has_statistics()
    rows = store.messages("old", include_archived=True)
    assert DROPPED_NOTICE in [r.message["content"] for r in rows]  # `bodies: drop` was read
    store.close()
    (tmp_path / "config.yaml").write_text(
        "sessions:\n  retention:\n    archive_after_days: 30\n    auto: false\n"
    )
    host = Hermes(load_config(home=tmp_path))
    assert host.session_store is not None
    host.close()
    store = SQLiteSessionStore(tmp_path / "state.db")
    assert store.last_retention() == first
    store.close()


def test_the_commands_retain_vacuum_and_back_up(tmp_path: Path) -> None:
    _home(tmp_path, Clock()).close()
    assert _cli(tmp_path, "retain").returncode == 2  # off in the config, no --days
    dry = _cli(tmp_path, "retain", "--days", "30", "--dry-run", "--json")
    # the wall clock: the fixture's 1970 sessions are all idle
    assert dry.returncode == 0 and sorted(json.loads(dry.stdout)["sessions"]) == [
        "bob-old",
        "new",
        "old",
    ]
    (tmp_path / "config.yaml").write_text("sessions:\n  retention:\n    archive_after_days: 30\n")
    done = _cli(tmp_path, "retain", "--bodies", "drop", "--json")
    assert json.loads(done.stdout)["rows_dropped"] == 3
    shown = _cli(tmp_path, "show", "old", "--all", "--user", "alice")
    assert DROPPED_NOTICE in shown.stdout and "[summary]" in shown.stdout
    for word in ("dropped", "replaced", "retention"):  # the notice is shown, never found
        found = _cli(tmp_path, "search", word, "--user", "alice", "--json")
        assert found.returncode == 0 and "dropped by retention" not in found.stdout
    exported = _cli(tmp_path, "export", "bob-old", "--user", "bob")
    assert "findable" in json.loads(exported.stdout)["messages"][0]["content"]
    vacuum = json.loads(_cli(tmp_path, "vacuum", "--json").stdout)
    assert vacuum["bytes_after"] < vacuum["bytes_before"]
    assert _cli(tmp_path, "backup", "--out", str(tmp_path / "b.db")).returncode == 0
    assert _cli(tmp_path, "backup", "--out", str(tmp_path / "b.db")).returncode == 1


def test_the_search_plan_reads_the_word_index_and_rows_by_key(tmp_path: Path) -> None:
    """The statement a search runs (captured as executed) is planned through the FTS5 index
    and primary keys: no scan of ``messages`` or ``sessions``, before and after ANALYZE."""
    store = _home(tmp_path, Clock())
    conn = store._pool.get()
    for analysed in (False, True):
        if analysed:
            store.refresh_statistics()
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        store.search("findable", user_id="alice")
        conn.set_trace_callback(None)
        statement = next(s for s in seen if "GROUP BY m.session_id" in s)
        plan = " | ".join(
            str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}").fetchall()
        )
        assert "VIRTUAL TABLE INDEX" in plan and "messages_fts" in plan, plan
        assert re.search(r"SCAN (m|s|messages|sessions)\b", plan) is None, plan


@pytest.mark.parametrize(
    ("days", "bodies", "said"), [(0, "drop", "at least 1 day"), (30, "zip", "compress or drop")]
)
def test_a_bad_retention_call_is_refused_and_changes_nothing(
    tmp_path: Path, days: int, bodies: str, said: str
) -> None:
    store = SQLiteSessionStore(tmp_path / "state.db")
    store.open_session("s", user_id=None)
    store.append_messages("s", [{"role": "user", "content": "kept"}])
    with pytest.raises(ValueError, match=said):
        store.retain(days=days, bodies=bodies, now=10 * 365 * DAY)  # type: ignore[arg-type]
    assert store.last_retention() is None
    assert [m.message["content"] for m in store.messages("s")] == ["kept"]
    store.close()
