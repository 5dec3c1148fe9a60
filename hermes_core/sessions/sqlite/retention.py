"""Retention for the SQLite store: archive old sessions in place (mixin of the store class).

Uses the store's private ``_pool`` (transactions) and ``_clock``. An archived session keeps its
``sessions`` row (``archived_at`` set) and every ``messages`` row:

* ``compress``: each row's text columns are packed into ``body_z`` (:mod:`.packing`) when that
  is smaller; the full-text index keeps the words (packing does not touch it), reads unpack.
* ``drop``: the rows a summary replaced (``compacted = 1`` after an in-place compaction; of a
  session continued in a child, the active rows the child did not copy) read
  :data:`~hermes_core.sessions.retention.DROPPED_NOTICE` from then on (held in ``extra``:
  :data:`~hermes_core.sessions.retention.DROPPED_EXTRA`) and leave the index; the rest is
  packed as under ``compress``.

Sessions are archived a batch at a time, each batch its own write transaction, so a host
writing meanwhile waits milliseconds, not the whole run; a crash keeps the batches done.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from hermes_core.sessions import retention
from hermes_core.sessions.retention import (
    DROPPED_EXTRA,
    Bodies,
    RetentionReport,
    keeps_statistics,
)
from hermes_core.sessions.sqlite.maintenance import SQLiteMaintenance
from hermes_core.sessions.sqlite.packing import PACKED_COLUMNS, pack, unpacked

__all__ = ["SQLiteRetention", "keeps_statistics"]

_BATCH = 50
_PACKED = ", ".join(PACKED_COLUMNS)
_LAST = (
    "coalesce((SELECT m.timestamp FROM messages AS m WHERE m.session_id = s.id "
    "ORDER BY m.seq DESC LIMIT 1), s.started_at)"
)
#: sessions idle since before :cutoff and not archived since their last message
_DUE = (
    f"SELECT s.id FROM sessions AS s WHERE {_LAST} < :cutoff "
    f"AND (s.archived_at IS NULL OR s.archived_at <= {_LAST})"
)


#: the live sessions that continue :id (a child of a compaction, not undone)
_CHILDREN = (
    "SELECT c.id FROM sessions AS c WHERE c.parent_session_id = :id "
    "AND coalesce(c.end_reason, '') != 'undone'"
)
_SAME = " AND ".join(
    f"{unpacked(c, 'k.')} IS {unpacked(c, 'messages.')}"
    if c in PACKED_COLUMNS
    else f"k.{c} IS messages.{c}"
    for c in ("role", "content", "tool_calls", "tool_call_id", "name", "extra")
)
#: the rows a summary replaced, not yet dropped: those an in-place compaction archived, and,
#: of a session a compaction continued in a child (ended as ``compression``), the active rows
#: the child did not copy
_DROP = (
    "UPDATE messages SET content = NULL, tool_calls = NULL, extra = :marker, "
    "api_content = NULL, tool_args = NULL, tool_names = NULL, body_z = NULL "
    "WHERE session_id = :id AND extra IS NOT :marker AND ((compacted = 1 AND active = 0) "
    "OR (active = 1 AND EXISTS (SELECT 1 FROM sessions AS p WHERE p.id = :id "
    f"AND p.end_reason = 'compression') AND EXISTS ({_CHILDREN}) "
    f"AND NOT EXISTS (SELECT 1 FROM messages AS k WHERE k.session_id IN ({_CHILDREN}) "
    f"AND {_SAME})))"
)


class SQLiteRetention(SQLiteMaintenance):
    """``retain`` and ``last_retention`` (and, inherited, the upkeep of
    :class:`.maintenance.SQLiteMaintenance`) for the SQLite store."""

    _clock: Any

    def retain(
        self,
        *,
        days: int,
        bodies: Bodies = "compress",
        now: float | None = None,
        dry_run: bool = False,
    ) -> RetentionReport:
        """Archive the sessions idle for ``days`` (see the module docstring)."""
        when = float(self._clock() if now is None else now)
        limit = retention.cutoff(when, days, bodies)
        due: list[str] = [
            row[0]
            for row in self._pool.read(
                lambda c: c.execute(
                    f"{_DUE} ORDER BY s.started_at, s.id", {"cutoff": limit}
                ).fetchall()
            )
        ]
        if dry_run:
            return RetentionReport(tuple(due), dry_run=True, cutoff=limit)
        packed = dropped = 0
        for start in range(0, len(due), _BATCH):
            batch = due[start : start + _BATCH]
            done = self._pool.write(
                functools.partial(_archive, batch=batch, bodies=bodies, now=when, limit=limit)
            )
            packed, dropped = packed + done[0], dropped + done[1]
        self._pool.write(lambda c: _set_meta(c, "retention_at", repr(when)))
        if due:
            self.refresh_statistics()
        return RetentionReport(tuple(due), packed, dropped, cutoff=limit)

    def last_retention(self) -> float | None:
        """When retention last ran on this file (``None``: never)."""
        row = self._pool.read(
            lambda c: c.execute("SELECT value FROM meta WHERE key = 'retention_at'").fetchone()
        )
        return float(row[0]) if row else None


def _archive(
    conn: sqlite3.Connection, *, batch: list[str], bodies: Bodies, now: float, limit: float
) -> tuple[int, int]:
    """Archive ``batch`` (re-checked inside the transaction: a session written meanwhile is
    left for the next run); returns (rows packed, rows dropped)."""
    packed = dropped = 0
    for session_id in batch:
        still = conn.execute(f"{_DUE} AND s.id = :id", {"cutoff": limit, "id": session_id})
        if still.fetchone() is None:
            continue
        if bodies == "drop":
            dropped += conn.execute(_DROP, {"marker": DROPPED_EXTRA, "id": session_id}).rowcount
        packed += _pack_rows(conn, session_id)
        conn.execute("UPDATE sessions SET archived_at = ? WHERE id = ?", (now, session_id))
    return packed, dropped


def _pack_rows(conn: sqlite3.Connection, session_id: str) -> int:
    """Pack the session's unpacked rows where the blob is smaller than the text."""
    rows = conn.execute(
        f"SELECT id, {_PACKED} FROM messages WHERE session_id = ? AND body_z IS NULL "
        "AND extra IS NOT ?",
        (session_id, DROPPED_EXTRA),
    ).fetchall()
    updates = []
    for row_id, *values in rows:
        columns = dict(zip(PACKED_COLUMNS, values, strict=True))
        size = sum(len(v.encode("utf-8", "surrogatepass")) for v in values if v is not None)
        blob = pack(columns)
        if len(blob) < size:
            updates.append((blob, row_id))
    nulls = ", ".join(f"{c} = NULL" for c in PACKED_COLUMNS)
    conn.executemany(f"UPDATE messages SET body_z = ?, {nulls} WHERE id = ?", updates)
    return len(updates)


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
