"""``SQLiteSessionStore``: the built-in :class:`~hermes_core.sessions.SessionStore` backend.

One SQLite file (``$HERMES_HOME/state.db``) in WAL mode, safe for several threads (a
connection each) and several processes (``BEGIN IMMEDIATE`` writes, bounded retries). See
``docs/sessions.md`` for the schema and the guarantees.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.errors import SessionError
from hermes_core.sessions import checks
from hermes_core.sessions.records import appended_rows
from hermes_core.sessions.sqlite import compaction, fts, packing, records, schema
from hermes_core.sessions.sqlite.bundle_rows import SQLiteBundleRows
from hermes_core.sessions.sqlite.connection import (
    ConnectionPool,
    OnConnect,
    RetryPolicy,
    create_file,
)
from hermes_core.sessions.sqlite.forget_rows import SQLiteForgetRows
from hermes_core.sessions.sqlite.retention import SQLiteRetention, keeps_statistics
from hermes_core.sessions.sqlite.rows import encode_message
from hermes_core.sessions.sqlite.search import run_search
from hermes_core.sessions.store import (
    CompactionCommit,
    SearchHit,
    SessionRecord,
    StoredMessage,
)

__all__ = ["SQLiteSessionStore"]


@keeps_statistics
class SQLiteSessionStore(SQLiteBundleRows, SQLiteForgetRows, SQLiteRetention):
    """The session store in one SQLite file.

    :param path: the database file; it and its parent directories are created as needed
        (the file with mode 0600).
    :param fts: use the FTS5 index (``True``: required, :class:`SessionError` when this
        SQLite lacks it), search with ``LIKE`` only (``False``), or detect (``None``).
    :param busy_timeout: seconds SQLite waits for another connection's lock per attempt.
    :param retry: how a transaction that stays busy is retried.
    :param clock: the time source for ``started_at``, ``ended_at`` and message timestamps.
    :param on_connect: called with each new connection (functions, handlers, tracing).
    :param read_only: read the file as it is (the read commands): nothing is created, migrated
        or switched to WAL; commits still in its ``-wal`` are read (see ``read_only.py``).

    Opening checks the file (a non-database, a damaged file or a schema from a newer
    version is a :class:`SessionError`, and the file is left as it was), switches it to WAL,
    runs the missing migrations and brings the full-text index up to date.
    """

    backend = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        fts: bool | None = None,
        busy_timeout: float = 5.0,
        retry: RetryPolicy | None = None,
        clock: Callable[[], float] = time.time,
        on_connect: OnConnect | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path).expanduser()
        self._clock = clock
        self.read_only = read_only
        if read_only and not self.path.is_file():
            raise SessionError(f"session store {self.path}: no such file (nothing was created)")
        if not self.path.exists():
            create_file(self.path)
        self._pool = ConnectionPool(
            self.path,
            busy_timeout=busy_timeout,
            retry=retry or RetryPolicy(),
            on_connect=on_connect,
            read_only=read_only,
        )
        try:
            self.fts: bool = self._open(fts)
        except BaseException:
            self._pool.close()
            raise

    def _open(self, want_fts: bool | None) -> bool:
        # reads only, so a damaged file, another program's or a newer schema stays untouched;
        # in one read transaction: read apart, the version and the table list could straddle
        # another process's first migration and look like another program's database
        version = self._pool.read(lambda c: schema.check_file(c, self.path))
        if self.read_only:  # read as it is: no WAL switch, no migration, no index build
            if version < schema.SCHEMA_VERSION:
                raise SessionError(
                    f"session store {self.path}: schema version {version} is older than this "
                    f"version's {schema.SCHEMA_VERSION}; open it once with a host (or a "
                    "writing command) to migrate it, then read it"
                )
            ready = bool(want_fts is not False and self._pool.call(fts.fts5_available))
            return ready and bool(self._pool.read(fts.index_ready))
        self._pool.call(_use_wal)
        if version < schema.SCHEMA_VERSION:
            self._pool.write(lambda c: schema.migrate(c, self.path))
        available = self._pool.call(fts.fts5_available)
        if want_fts and not available:
            raise SessionError(
                f"fts=True, but this SQLite ({sqlite3.sqlite_version}) has no FTS5 with the "
                "trigram tokenizer; pass fts=None to search with LIKE instead"
            )
        use = available if want_fts is None else want_fts
        if use and not self._pool.read(fts.index_ready):
            self._pool.write(lambda c: None if fts.index_ready(c) else fts.install(c))
        elif not available and self._pool.read(lambda c: fts.index_state(c)[1]):
            self._pool.write(fts.uninstall_triggers)  # they would fail every insert here
        return use

    # --- sessions -----------------------------------------------------------------------

    def open_session(
        self,
        session_id: str,
        *,
        user_id: str | None,
        model: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
    ) -> SessionRecord:
        existing = self._pool.read(lambda c: records.session(c, session_id))
        if existing is not None:
            return checks.owned(existing, user_id)

        def create(conn: sqlite3.Connection) -> SessionRecord:
            found = records.session(conn, session_id)
            if found is not None:  # another process created it meanwhile
                return checks.owned(found, user_id)
            if parent_session_id is not None:
                parent = records.session(conn, parent_session_id)
                checks.check_parent(parent, parent_session_id, user_id)
            conn.execute(
                "INSERT INTO sessions (id, parent_session_id, user_id, title, model, "
                "started_at) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, parent_session_id, user_id, title, model, self._clock()),
            )
            created = records.session(conn, session_id)
            assert created is not None
            return created

        return self._pool.write(create)

    def get_session(self, session_id: str, *, user_id: str | None) -> SessionRecord | None:
        found = self._pool.read(lambda c: records.session(c, session_id))
        return found if found is not None and found.user_id == user_id else None

    def list_sessions(self, *, user_id: str | None, limit: int = 50) -> list[SessionRecord]:
        sql = (
            f"SELECT {records.SESSION_COLUMNS} FROM sessions WHERE user_id IS ? "
            "ORDER BY started_at DESC, rowid DESC LIMIT ?"
        )
        rows = self._pool.read(lambda c: c.execute(sql, (user_id, max(0, limit))).fetchall())
        return [records.record(row) for row in rows]

    def end_session(self, session_id: str, reason: str) -> None:
        def end(conn: sqlite3.Connection) -> None:
            records.require_session(conn, session_id)
            conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? "
                "WHERE id = ? AND ended_at IS NULL",
                (self._clock(), reason, session_id),
            )

        self._pool.write(end)

    def save_state(self, session_id: str, state: Mapping[str, Any]) -> None:
        text = checks.dump_json(dict(state), "state")

        def save(conn: sqlite3.Connection) -> None:
            records.require_session(conn, session_id)
            conn.execute("UPDATE sessions SET state = ? WHERE id = ?", (text, session_id))

        self._pool.write(save)

    def add_counters(self, session_id: str, deltas: Mapping[str, int]) -> None:
        checks.check_counters(deltas)

        def add(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT counters FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise checks.no_such_session(session_id)
            counters = json.loads(row[0] or "{}")
            for name, delta in deltas.items():
                counters[name] = int(counters.get(name, 0)) + delta
            conn.execute(
                "UPDATE sessions SET counters = ? WHERE id = ?",
                (json.dumps(counters), session_id),
            )

        self._pool.write(add)

    def lineage(self, session_id: str) -> list[str]:
        return self._pool.read(lambda c: records.lineage(c, session_id))

    # --- messages -----------------------------------------------------------------------

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        api_contents: Sequence[str | None] | None = None,
        token_counts: Sequence[int | None] | None = None,
        state: Mapping[str, Any] | None = None,
        after_seq: int | None = None,
    ) -> list[int]:
        encoded = [encode_message(m, i) for i, m in enumerate(messages)]
        state_text = None if state is None else checks.dump_json(dict(state), "state")
        apis, tokens = checks.append_arguments(len(encoded), api_contents, token_counts)

        def append(conn: sqlite3.Connection) -> list[int]:
            user_id = records.writable_user(conn, session_id)
            (seq,) = conn.execute(
                "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()
            checks.check_fresh(session_id, seq, after_seq)
            checks.check_not_continued(session_id, _has_child(conn, session_id))
            (pos,) = conn.execute(
                "SELECT coalesce(max(pos), 0) FROM messages WHERE session_id = ? AND active = 1",
                (session_id,),
            ).fetchone()
            rows = appended_rows(encoded, apis, tokens, seq=seq, pos=pos)
            compaction.insert_rows(conn, session_id, rows, user_id=user_id, now=self._clock())
            if state_text is not None:
                conn.execute("UPDATE sessions SET state = ? WHERE id = ?", (state_text, session_id))
            return [row[0] for row in rows]

        return self._pool.write(append)

    def set_api_content(self, session_id: str, seq: int, api_content: str | None) -> None:
        def update(conn: sqlite3.Connection) -> None:
            packing.unpack_row(conn, session_id, seq)  # else NULL reads the packed value
            cursor = conn.execute(
                "UPDATE messages SET api_content = ? WHERE session_id = ? AND seq = ?",
                (api_content, session_id, seq),
            )
            if cursor.rowcount == 0:
                raise checks.no_such_row(session_id, seq)

        self._pool.write(update)

    def messages(self, session_id: str, *, include_archived: bool = False) -> list[StoredMessage]:
        where = "" if include_archived else "AND active = 1"
        order = "seq" if include_archived else "pos, seq"
        sql = (
            f"SELECT {records.MESSAGE_COLUMNS} FROM messages "
            f"WHERE session_id = ? {where} ORDER BY {order}"
        )
        rows = self._pool.read(lambda c: c.execute(sql, (session_id,)).fetchall())
        return [records.stored_message(row) for row in rows]

    def commit_compaction(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        origins: Sequence[int | None],
        *,
        in_place: bool,
        child_session_id: str | None = None,
        after_seq: int | None = None,
    ) -> CompactionCommit:
        encoded = [encode_message(m, i) for i, m in enumerate(messages)]

        def commit(conn: sqlite3.Connection) -> CompactionCommit:
            records.writable_user(conn, session_id)
            if after_seq is not None:
                checks.check_fresh(session_id, _last_seq(conn, session_id), after_seq)
            checks.check_not_continued(session_id, _has_child(conn, session_id))
            return compaction.commit_compaction(
                conn,
                session_id,
                encoded,
                list(origins),
                in_place=in_place,
                child_session_id=child_session_id,
                now=self._clock(),
            )

        return self._pool.write(commit)

    def restore_view(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        origins: Sequence[int | None],
        *,
        api_contents: Sequence[str | None] | None = None,
        state: Mapping[str, Any] | None = None,
        abandon: Sequence[str] = (),
        after_seq: int | None = None,
        abandon_after_seq: Mapping[str, int] | None = None,
    ) -> CompactionCommit:
        encoded = [encode_message(m, i) for i, m in enumerate(messages)]
        apis, _ = checks.append_arguments(len(encoded), api_contents, None)
        state_text = None if state is None else checks.dump_json(dict(state), "state")
        gone, expected = list(abandon), dict(abandon_after_seq or {})

        def restore(conn: sqlite3.Connection) -> CompactionCommit:
            records.writable_user(conn, session_id)
            if after_seq is not None:
                checks.check_fresh(session_id, _last_seq(conn, session_id), after_seq)
            done = compaction.restore_view(
                conn,
                session_id,
                encoded,
                list(origins),
                apis,
                abandon=gone,
                expected=expected,
                now=self._clock(),
            )
            if state_text is not None:
                conn.execute("UPDATE sessions SET state = ? WHERE id = ?", (state_text, session_id))
            return done

        return self._pool.write(restore)

    def last_seq(self, session_id: str) -> int:
        return self._pool.read(lambda conn: _last_seq(conn, session_id))

    # --- search -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        user_id: str | None,
        limit: int = 3,
        exclude_sessions: Collection[str] = (),
    ) -> list[SearchHit]:
        return self._pool.read(
            lambda c: run_search(
                c,
                query,
                user_id=user_id,
                limit=limit,
                exclude_sessions=exclude_sessions,
                fts=self.fts,
            )
        )

    def close(self) -> None:
        self._pool.close()

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({str(self.path)!r}, fts={self.fts})"


def _use_wal(conn: sqlite3.Connection) -> None:
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")


def _has_child(conn: sqlite3.Connection, session_id: str) -> bool:
    """Whether a compaction continued the session in a child that an undo did not abandon."""
    row = conn.execute(
        "SELECT 1 FROM sessions WHERE parent_session_id = ? "
        "AND coalesce(end_reason, '') != 'undone' LIMIT 1",
        (session_id,),
    ).fetchone()
    return row is not None


def _last_seq(conn: sqlite3.Connection, session_id: str) -> int:
    (seq,) = conn.execute(
        "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(seq)
