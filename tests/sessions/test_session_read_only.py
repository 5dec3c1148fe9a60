"""The read-only store (the ``sessions`` read commands) reads what is committed in the WAL.

A host that crashed leaves its last commits in ``state.db-wal``: they are read from a private
snapshot, so nothing beside ``state.db`` is created or changed (not even ``state.db-shm``),
and the snapshot is gone after ``close``. A live host's WAL is read in place, as it grows."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import SQLiteSessionStore

ROOT = Path(__file__).resolve().parents[2]

_WRITER = """
import os, sys
from hermes_core.sessions.sqlite import SQLiteSessionStore
store = SQLiteSessionStore(sys.argv[1])
def add(name):
    store.open_session(name, user_id=None)
    store.append_messages(name, [{"role": "user", "content": f"kiwi in {name}"}])
add("w1")
add("w2")
if sys.argv[2] == "crash":
    os._exit(0)  # no close, so no checkpoint: w1 and w2 are in state.db-wal only
print("ready", flush=True)
sys.stdin.readline()
add("w3")
print("added", flush=True)
sys.stdin.readline()
os._exit(0)
"""


def _tree(root: Path) -> dict[str, tuple[int, int, str]]:
    found: dict[str, tuple[int, int, str]] = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        found[str(path.relative_to(root))] = (stat.S_IMODE(info.st_mode), info.st_mtime_ns, digest)
    return found


def _writer(db: Path, how: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db), how],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where snapshots go, watched by the tests."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    db = tmp_path / "home" / "state.db"
    db.parent.mkdir()
    writer = _writer(db, "crash")
    assert writer.wait() == 0
    assert (db.parent / "state.db-wal").stat().st_size > 0
    return db


def test_a_crashed_hosts_wal_is_read_from_a_snapshot_that_close_removes(
    crashed: Path, temp: Path
) -> None:
    before = _tree(crashed.parent)
    store = SQLiteSessionStore(crashed, read_only=True)
    try:
        assert sorted(r.id for r in store.list_sessions(user_id=None)) == ["w1", "w2"]
        [snapshot] = list(temp.iterdir())
        assert stat.S_IMODE(snapshot.stat().st_mode) == 0o700
        with pytest.raises(SessionError, match=r"(?i)read.?only"):
            store.open_session("w9", user_id=None)  # the copy is read-only too
    finally:
        store.close()
    assert list(temp.iterdir()) == []
    assert _tree(crashed.parent) == before


def test_an_unreadable_wal_is_a_clear_error_that_changes_nothing(crashed: Path, temp: Path) -> None:
    wal = crashed.parent / "state.db-wal"
    wal.unlink()
    wal.mkdir()  # unreadable as a file, whoever runs the suite
    (wal / "x").write_text("x")
    before = _tree(crashed.parent)
    with pytest.raises(SessionError, match=r"state\.db-wal are readable; nothing was changed"):
        SQLiteSessionStore(crashed, read_only=True)
    assert list(temp.iterdir()) == []
    assert _tree(crashed.parent) == before


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    db = tmp_path / "home" / "state.db"
    db.parent.mkdir()
    writer = _writer(db, "live")
    assert writer.stdout is not None
    assert writer.stdout.readline() == "ready\n"
    yield db, writer
    writer.kill()
    writer.wait()


def test_a_live_hosts_wal_is_read_in_place_and_new_commits_are_seen(
    live: tuple[Path, subprocess.Popen[str]], temp: Path
) -> None:
    db, writer = live
    assert writer.stdin is not None and writer.stdout is not None
    names = {"state.db", "state.db-wal", "state.db-shm"}
    assert {p.name for p in db.parent.iterdir()} == names
    store = SQLiteSessionStore(db, read_only=True)
    try:
        assert sorted(r.id for r in store.list_sessions(user_id=None)) == ["w1", "w2"]
        writer.stdin.write("\n")
        writer.stdin.flush()
        assert writer.stdout.readline() == "added\n"
        assert sorted(r.id for r in store.list_sessions(user_id=None)) == ["w1", "w2", "w3"]
        assert list(temp.iterdir()) == []  # no snapshot: the live WAL itself
    finally:
        store.close()
    assert {p.name for p in db.parent.iterdir()} == names
