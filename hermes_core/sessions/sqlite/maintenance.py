"""Upkeep of the SQLite store: planner statistics, reclaiming space, online backup (mixin).

Uses the store's private ``_pool`` (its ``write``, ``read`` and ``call``) and ``path``.

* Statistics: ``ANALYZE`` fills ``sqlite_stat1``, which the planner reads to choose indexes;
  :meth:`maybe_refresh_statistics` runs it when there are none or the table has grown by half
  since, else lets ``PRAGMA optimize`` decide.
* Vacuum: archiving and deleting free pages but do not give them back. :meth:`vacuum`
  checkpoints the WAL into the file, merges the full-text index's segments (``optimize``),
  rewrites the file (``VACUUM``) and truncates the WAL, and reports the bytes before and
  after (file and WAL together).
* Backup: SQLite's online backup API copies the database page by page from one read
  snapshot, so the copy is consistent while hosts keep writing (WAL mode: they are not
  blocked); it is written beside the target and renamed into place, never over a file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import fts as fts_index
from hermes_core.sessions.sqlite.connection import ConnectionPool

__all__ = ["SQLiteMaintenance", "SpaceReport"]

_TABLES = ("messages", "sessions")


@dataclass(frozen=True)
class SpaceReport:
    """Bytes the store took before and after a vacuum (file and WAL)."""

    before: int
    after: int


class SQLiteMaintenance:
    """``refresh_statistics``, ``vacuum``, ``backup`` of the SQLite store."""

    _pool: ConnectionPool
    path: Path
    fts: bool

    def refresh_statistics(self) -> None:
        """``ANALYZE`` the store's tables and indexes, then ``PRAGMA optimize``."""
        self._pool.write(_analyze)

    def has_statistics(self) -> bool:
        """Whether the planner has statistics for ``messages`` (``sqlite_stat1``)."""
        return self._pool.read(lambda c: _stat_rows(c) is not None)

    def maybe_refresh_statistics(self) -> bool:
        """Analyse when the planner has no statistics or ``messages`` has grown by half since
        they were taken; returns whether it did."""

        def stale(conn: sqlite3.Connection) -> bool:
            counted = _stat_rows(conn)
            if counted is None:
                return bool(conn.execute("SELECT 1 FROM messages LIMIT 1").fetchone())
            (rows,) = conn.execute("SELECT max(id) FROM messages").fetchone()
            return int(rows or 0) > counted * 1.5 + 100  # the rowid: a cheap upper bound

        if self._pool.read(stale):
            self.refresh_statistics()
            return True
        return False

    def size_bytes(self) -> int:
        """The bytes of the store's file and its WAL."""
        return _size(self.path)

    def vacuum(self) -> SpaceReport:
        """Give the free pages back to the file system (see the module docstring)."""
        before = _size(self.path)
        self._pool.call(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
        if self.fts:
            self._pool.write(_optimize_index)
        self._pool.call(lambda c: c.execute("VACUUM"))
        self._pool.call(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
        return SpaceReport(before, _size(self.path))

    def backup(self, out: str | Path) -> int:
        """A consistent copy of the store at ``out`` (which must not exist); returns its
        size in bytes."""
        target = Path(out).expanduser()
        if target.exists() or target.is_symlink():
            raise SessionError(f"{target} exists; choose a new file (nothing was written)")
        if not target.parent.is_dir():
            raise SessionError(f"{target.parent} is not a folder (nothing was written)")
        partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
        try:
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(descriptor)
            copy = sqlite3.connect(partial)
            try:
                self._pool.call(lambda c: c.backup(copy))
                copy.execute("PRAGMA journal_mode = DELETE")  # one file, no -wal beside it
            finally:
                copy.close()
            os.link(partial, target)  # fails if the target appeared meanwhile: never replaced
        except FileExistsError:
            raise SessionError(
                f"{target} exists; choose a new file (nothing was written)"
            ) from None
        except (OSError, sqlite3.Error) as exc:
            raise SessionError(f"cannot back up to {target}: {exc} (nothing was written)") from None
        finally:
            with contextlib.suppress(OSError):
                partial.unlink()
        return target.stat().st_size


def _stat_rows(conn: sqlite3.Connection) -> int | None:
    """The row count ``sqlite_stat1`` holds for ``messages`` (``None``: no statistics)."""
    has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone()
    if not has_table:
        return None
    row = conn.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = 'messages' LIMIT 1").fetchone()
    if row is None or not row[0]:
        return None
    return int(str(row[0]).split()[0])


def _analyze(conn: sqlite3.Connection) -> None:
    for table in _TABLES:
        conn.execute(f"ANALYZE {table}")
    conn.execute("PRAGMA optimize")


def _optimize_index(conn: sqlite3.Connection) -> None:
    if fts_index.index_ready(conn):
        for table in fts_index.TABLES:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")


def _size(path: Path) -> int:
    total = 0
    for name in (path, path.with_name(path.name + "-wal")):
        with contextlib.suppress(OSError):
            total += name.stat().st_size
    return total
