"""Every SQLite session store a home holds, so that forget finds the person wherever they are.

Why a search and not only the configured store: the configuration can change after the
sessions were written (``sessions.enabled: false``, another ``sessions.db_path``, the
PostgreSQL backend), and the old ``state.db`` keeps every row of the person. So forget
looks at every regular file of the home (links are not followed: what they point at is not
the home's) plus the configured path, and keeps those that are session stores: a SQLite
file whose schema version this code knows and which has the ``sessions`` and ``messages``
tables.

Two kinds are told apart by the file's journal mode, which SQLite keeps in its header:

* **a store** (write-ahead log mode: the store always switches a file to it) is opened
  through :class:`~hermes_core.sessions.sqlite.store.SQLiteSessionStore` and the person is
  deleted and scrubbed there, as in the live store;
* **a backup** (rollback journal mode: ``sessions backup`` writes its copy so, one file) is
  a copy the operator took on purpose; forget does not rewrite it. When the person has
  sessions in it, the report names it and says to delete it or take a new one.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = ["StateFile", "backup_holds", "state_files"]

_MAGIC: Final = b"SQLite format 3\x00"
_WAL_MODE: Final = 2  # header bytes 18 and 19: 1 rollback journal, 2 write-ahead log
_TIMEOUT: Final = 30.0


@dataclass(frozen=True)
class StateFile:
    """One session store file of the home: ``store`` (live) or ``backup``."""

    path: Path
    kind: Literal["store", "backup"]


def _header(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(20)
    except OSError:
        return b""


def _candidates(home: Path) -> Iterator[Path]:
    for directory, folders, files in os.walk(home, followlinks=False):
        folders.sort()
        for name in sorted(files):
            path = Path(directory, name)
            if not path.is_symlink() and _header(path).startswith(_MAGIC):
                yield path


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that never creates the file; closed (and the WAL left as it was)."""
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True, timeout=_TIMEOUT)
    try:
        yield conn
    finally:
        conn.close()


def _is_session_store(path: Path) -> bool:
    try:
        with _reading(path) as conn:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error:
        return False
    return int(version) >= 1 and {"sessions", "messages"} <= names


def state_files(home: Path, configured: Path | None = None) -> list[StateFile]:
    """The session stores and backups of ``home`` (the configured file first when it is
    one), each once."""
    found: list[StateFile] = []
    seen: set[Path] = set()
    first = [configured] if configured is not None and configured.is_file() else []
    for path in (*first, *_candidates(Path(home))):
        real = path.resolve()
        header = _header(path)
        if real in seen or not header.startswith(_MAGIC):
            continue
        seen.add(real)
        if _is_session_store(path):
            wal = len(header) == 20 and header[18] == _WAL_MODE
            found.append(StateFile(path, "store" if wal else "backup"))
    return found


def backup_holds(path: Path, user_id: str | None) -> bool | None:
    """Whether the backup at ``path`` has sessions of ``user_id`` (``None``: it cannot be
    read, so it may)."""
    try:
        with _reading(path) as conn:
            row = conn.execute(
                "SELECT 1 FROM sessions WHERE user_id IS ? LIMIT 1", (user_id,)
            ).fetchone()
    except sqlite3.Error:
        return None
    return row is not None
