"""Retention and upkeep for the PostgreSQL store (mixin of the store class).

Uses the store's private ``_run`` (one transaction, errors made safe), ``_database`` (a
connection outside a transaction, for ``VACUUM``) and ``_now``.

* ``retain``: as the SQLite store's, in place: ``archived_at`` is set and, under ``drop``, the
  rows a summary replaced read :data:`~hermes_core.sessions.retention.DROPPED_NOTICE`, held in
  ``extra`` with ``content`` emptied (their generated ``search`` vector follows, so their words
  leave the index and the notice's never enter it). ``compress`` changes
  no row: PostgreSQL already compresses every long value (TOAST), and leaving the row whole
  keeps its words found exactly.
* ``refresh_statistics``: ``ANALYZE`` of the session tables. Without it (autovacuum off, or
  not yet run after a bulk load) the planner guesses row counts and picks slow plans for a
  user with many messages; :meth:`maybe_refresh_statistics` runs it when the tables were
  never analysed or a fifth of their rows changed since.
* ``vacuum``: ``VACUUM (ANALYZE)`` makes dead rows' space reusable; ``full=True`` rewrites
  the tables (``VACUUM FULL``: gives the space back to the file system, but locks the tables
  while it runs). Sizes are ``pg_total_relation_size`` (indexes and TOAST included).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg

from hermes_core.errors import SessionError
from hermes_core.sessions import retention
from hermes_core.sessions.retention import (
    DROPPED_EXTRA,
    Bodies,
    RetentionReport,
    keeps_statistics,
)
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions.rows import text_out
from hermes_plugins.postgres.sessions.schema import MESSAGES, META, SCHEMA, SESSIONS

__all__ = ["PostgresRetention", "SpaceReport", "keeps_statistics"]

T = TypeVar("T")
Conn = psycopg.Connection[Any]
_BATCH = 50
_TABLES = (SESSIONS, MESSAGES)
_LAST = (
    f'coalesce((SELECT m."timestamp" FROM {MESSAGES} AS m WHERE m.session_id = s.id '
    "ORDER BY m.seq DESC LIMIT 1), s.started_at)"
)
_DUE = (
    f"SELECT s.id FROM {SESSIONS} AS s WHERE {_LAST} < %(cutoff)s "
    f"AND (s.archived_at IS NULL OR s.archived_at <= {_LAST})"
)

#: the live sessions that continue %(id)s (a child of a compaction, not undone)
_CHILDREN = (
    f"SELECT c.id FROM {SESSIONS} AS c WHERE c.parent_session_id = %(id)s "
    "AND c.end_reason IS DISTINCT FROM 'undone'"
)
_SAME = " AND ".join(
    f"k.{c} IS NOT DISTINCT FROM m.{c}"
    for c in ("role", "content", "tool_calls", "tool_call_id", "name", "extra")
)
#: as the SQLite store's: the rows an in-place compaction archived, and the active rows of a
#: session continued in a child that the child did not copy; the notice goes into ``extra``
_DROP = (
    f"UPDATE {MESSAGES} AS m SET content = NULL, tool_calls = NULL, extra = %(marker)s, "
    "api_content = NULL, tool_args = NULL, tool_names = NULL "
    "WHERE m.session_id = %(id)s AND m.extra IS DISTINCT FROM %(marker)s "
    "AND ((m.compacted AND NOT m.active) OR (m.active AND EXISTS (SELECT 1 FROM "
    f"{SESSIONS} AS p WHERE p.id = %(id)s AND p.end_reason = 'compression') "
    f"AND EXISTS ({_CHILDREN}) AND NOT EXISTS (SELECT 1 FROM {MESSAGES} AS k "
    f"WHERE k.session_id IN ({_CHILDREN}) AND {_SAME})))"
)


@dataclass(frozen=True)
class SpaceReport:
    """Bytes of the session tables (indexes and TOAST included) before and after a vacuum."""

    before: int
    after: int


class PostgresRetention:
    """``retain``, ``last_retention``, ``refresh_statistics``, ``vacuum`` (see the module)."""

    _database: Database

    def _run(self, work: Callable[[Conn], T], *, idempotent: bool) -> T:  # pragma: no cover
        raise NotImplementedError  # the store's

    def _now(self, conn: Conn) -> float:  # pragma: no cover
        raise NotImplementedError  # the store's

    def retain(
        self,
        *,
        days: int,
        bodies: Bodies = "compress",
        now: float | None = None,
        dry_run: bool = False,
    ) -> RetentionReport:
        """Archive the sessions idle for ``days``; a batch of sessions per transaction."""
        when = float(now) if now is not None else self._run(self._now, idempotent=True)
        limit = retention.cutoff(when, days, bodies)
        query = f"{_DUE} ORDER BY s.started_at, s.ordinal"
        due: list[str] = [
            row[0]
            for row in self._run(
                lambda c: c.execute(query, {"cutoff": limit}).fetchall(), idempotent=True
            )
        ]
        names = tuple(text_out(d) or "" for d in due)
        if dry_run:
            return RetentionReport(names, dry_run=True, cutoff=limit)
        dropped = 0
        for start in range(0, len(due), _BATCH):
            work = functools.partial(
                _archive, batch=due[start : start + _BATCH], bodies=bodies, now=when, limit=limit
            )
            dropped += self._run(work, idempotent=True)
        self._run(lambda c: _set_meta(c, "retention_at", repr(when)), idempotent=True)
        if due:
            self.refresh_statistics()
        return RetentionReport(names, 0, dropped, cutoff=limit)

    def last_retention(self) -> float | None:
        """When retention last ran on this database (``None``: never)."""
        row = self._run(
            lambda c: c.execute(f"SELECT value FROM {META} WHERE key = 'retention_at'").fetchone(),
            idempotent=True,
        )
        return float(row[0]) if row else None

    # --- statistics ---------------------------------------------------------------------

    def refresh_statistics(self) -> None:
        """``ANALYZE`` the session tables."""
        self._run(lambda c: c.execute(f"ANALYZE {', '.join(_TABLES)}"), idempotent=True)

    def has_statistics(self) -> bool:
        """Whether the planner has statistics for ``messages`` (an empty table needs none)."""
        return self._run(lambda c: _analysed(c)[0], idempotent=True)

    def maybe_refresh_statistics(self) -> bool:
        """Analyse when never analysed (and not empty) or a fifth of the rows changed since;
        returns whether it did."""
        analysed, counted, changed = self._run(_analysed, idempotent=True)
        stale = not analysed or changed > max(1_000, counted // 5)
        if stale:
            self.refresh_statistics()
        return stale

    # --- space --------------------------------------------------------------------------

    def size_bytes(self) -> int:
        """Bytes of the session tables, indexes and TOAST included."""
        return self._run(_size, idempotent=True)

    def vacuum(self, *, full: bool = False) -> SpaceReport:
        """``VACUUM (ANALYZE)`` the session tables (``full``: ``VACUUM FULL``)."""
        before = self.size_bytes()
        options = "(FULL, ANALYZE)" if full else "(ANALYZE)"
        try:
            with self._database.connection() as conn:
                conn.commit()  # VACUUM runs outside a transaction
                conn.autocommit = True
                try:
                    conn.execute("SET statement_timeout = 0")  # a big table takes a while
                    for table in _TABLES:
                        conn.execute(f"VACUUM {options} {table}")
                finally:
                    conn.execute("RESET statement_timeout")
                    conn.autocommit = False
        except psycopg.Error as exc:
            raise SessionError(f"VACUUM of the session tables failed: {exc}") from None
        return SpaceReport(before, self.size_bytes())


def _analysed(conn: Conn) -> tuple[bool, int, int]:
    """(the planner has statistics for ``messages``, its rows as last counted, rows changed
    since the last analyse). The first is read from ``pg_stats`` and the table itself, both
    transactional; the change count comes from the cumulative statistics, which a backend
    reports up to a second late (fine for "a fifth changed", not for "never analysed")."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_stats WHERE schemaname = %s "
        "AND tablename = 'messages'), "
        f"NOT EXISTS (SELECT 1 FROM {MESSAGES}), "
        "greatest(c.reltuples, 0)::bigint, coalesce(t.n_mod_since_analyze, 0) "
        "FROM pg_catalog.pg_class AS c "
        "LEFT JOIN pg_catalog.pg_stat_user_tables AS t ON t.relid = c.oid "
        "WHERE c.oid = %s::regclass",
        (SCHEMA, MESSAGES),
    ).fetchone()
    if row is None:
        return (False, 0, 0)
    analysed, empty, counted, changed = row
    return (bool(analysed) or bool(empty), int(counted), int(changed))


def _size(conn: Conn) -> int:
    row = conn.execute(
        " + ".join(f"pg_total_relation_size('{t}')" for t in _TABLES).join(("SELECT ", ""))
    ).fetchone()
    return int(row[0]) if row else 0


def _archive(conn: Conn, *, batch: list[str], bodies: Bodies, now: float, limit: float) -> int:
    """Archive ``batch`` (re-checked under the rows' locks); returns the rows dropped."""
    dropped = 0
    for stored in batch:
        still = conn.execute(
            f"{_DUE} AND s.id = %(id)s FOR UPDATE OF s", {"cutoff": limit, "id": stored}
        ).fetchone()
        if still is None:
            continue  # written meanwhile: the next run sees it
        if bodies == "drop":
            dropped += conn.execute(_DROP, {"marker": DROPPED_EXTRA, "id": stored}).rowcount
        conn.execute(f"UPDATE {SESSIONS} SET archived_at = %s WHERE id = %s", (now, stored))
    return dropped


def _set_meta(conn: Conn, key: str, value: str) -> None:
    conn.execute(
        f"INSERT INTO {META} (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
