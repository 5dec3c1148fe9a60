"""``PostgresSessionStore``: the :class:`~hermes_core.sessions.SessionStore` of many hosts.

Every host process with the same ``sessions.dsn`` sees one store: a user's next turn may land
on any of them. The semantics are the SQLite store's, method for method; what differs is how
they are kept across machines:

* Writes to a session lock its row (``SELECT ... FOR UPDATE``), so two hosts writing one
  session take turns; the next seq and the ``after_seq`` check are read after the lock, in
  the same transaction as the insert, so a stale writer gets
  :class:`~hermes_core.errors.StaleSessionError` and changes nothing.
* Each call is one transaction through :meth:`Database.run
  <hermes_plugins.postgres.database.Database.run>`. Work whose repeat could double something
  (an append or compaction without ``after_seq``, adding counters) is marked
  ``idempotent=False``, so a connection lost during it is reported, never retried blindly;
  reads and guarded or repeatable writes are retried.
* Times (``started_at``, ``ended_at``, message timestamps) come from the database server's
  clock unless a ``clock`` is given, so hosts whose clocks disagree still list sessions in
  the order they were created.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

import psycopg

from hermes_core.errors import SessionError
from hermes_core.redact import redact
from hermes_core.sessions import checks
from hermes_core.sessions.records import appended_rows
from hermes_core.sessions.sqlite.rows import encode_message
from hermes_core.sessions.store import (
    CompactionCommit,
    SearchHit,
    SessionRecord,
    StoredMessage,
)
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import compaction, rows, schema
from hermes_plugins.postgres.sessions.bundle_rows import PostgresBundleRows
from hermes_plugins.postgres.sessions.forget_rows import PostgresForgetRows
from hermes_plugins.postgres.sessions.retention import PostgresRetention, keeps_statistics
from hermes_plugins.postgres.sessions.rows import text_in
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS
from hermes_plugins.postgres.sessions.search import run_search

__all__ = ["PostgresSessionStore"]

T = TypeVar("T")
Conn = psycopg.Connection[Any]
_MAX_LIMIT = 1_000_000_000


@keeps_statistics
class PostgresSessionStore(PostgresBundleRows, PostgresForgetRows, PostgresRetention):
    """The session store in a PostgreSQL database (schema ``hermes``).

    :param database: the pool to use; the store holds this one reference and
        :meth:`close` releases it (also when opening fails).
    :param clock: the time source for stored times; ``None``: the server's clock.

    Opening checks the server (PostgreSQL 13+, a UTF-8 database) and the schema (a newer
    version or another program's tables is a :class:`SessionError`, before anything is
    written), runs the missing migrations under the migration lock and creates the CJK
    trigram index when ``pg_trgm`` can be had. :attr:`migrated_from` is the version this
    instance migrated from (``None`` when it found the schema current) and :attr:`trigram`
    whether the trigram index is there.
    """

    backend = "postgres"

    def __init__(self, database: Database, *, clock: Callable[[], float] | None = None) -> None:
        self._database = database
        self._clock = clock
        self._closed = False
        self._lock = threading.Lock()
        self.where = database.where
        try:
            self.migrated_from = self._open()
            self.trigram = self._run(schema.trigram_ready, idempotent=True) or self._run(
                lambda c: schema.ensure_trigram(c, self.where), idempotent=True
            )
        except BaseException:
            self.close()
            raise

    def _open(self) -> int | None:
        def check(conn: Conn) -> int:
            schema.check_server(conn, self.where)
            return schema.read_version(conn, self.where)

        if self._run(check, idempotent=True) == schema.SCHEMA_VERSION:
            return None
        return self._run(lambda c: schema.migrate(c, self.where), idempotent=True)

    def _run(self, work: Callable[[Conn], T], *, idempotent: bool) -> T:
        """``work`` in one transaction; a database error becomes a :class:`SessionError`."""
        if self._closed:
            raise SessionError(f"session store {self.where} is closed")
        try:
            return self._database.run(work, idempotent=idempotent)
        except psycopg.Error as exc:
            why = redact(" ".join(str(exc).split()) or type(exc).__name__)[:300]
            raise SessionError(f"session store {self.where}: {why} (nothing was changed)") from None

    def _now(self, conn: Conn) -> float:
        if self._clock is not None:
            return float(self._clock())
        row = conn.execute("SELECT extract(epoch FROM clock_timestamp())::float8").fetchone()
        assert row is not None
        return float(row[0])

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
        stored = text_in(session_id)
        existing = self._run(lambda c: rows.session(c, stored), idempotent=True)
        if existing is not None:
            return checks.owned(existing, user_id)

        def create(conn: Conn) -> SessionRecord:
            if parent_session_id is not None:
                parent = rows.session(conn, text_in(parent_session_id))
                checks.check_parent(parent, parent_session_id, user_id)
            conn.execute(
                f"INSERT INTO {SESSIONS} (id, parent_session_id, user_id, title, model, "
                "started_at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (
                    stored,
                    text_in(parent_session_id),
                    text_in(user_id),
                    text_in(title),
                    text_in(model),
                    self._now(conn),
                ),
            )
            created = rows.session(conn, stored)  # ours, or another host's made meanwhile
            assert created is not None
            return created

        return checks.owned(self._run(create, idempotent=True), user_id)

    def get_session(self, session_id: str, *, user_id: str | None) -> SessionRecord | None:
        found = self._run(lambda c: rows.session(c, text_in(session_id)), idempotent=True)
        return found if found is not None and found.user_id == user_id else None

    def list_sessions(self, *, user_id: str | None, limit: int = 50) -> list[SessionRecord]:
        owner = "user_id IS NULL" if user_id is None else "user_id = %(user)s"
        query = (
            f"SELECT {rows.SESSION_COLUMNS} FROM {SESSIONS} WHERE {owner} "
            "ORDER BY started_at DESC, ordinal DESC LIMIT %(limit)s"
        )
        params = {"user": text_in(user_id), "limit": min(max(0, int(limit)), _MAX_LIMIT)}
        found = self._run(lambda c: c.execute(query, params).fetchall(), idempotent=True)
        return [rows.record(row) for row in found]

    def end_session(self, session_id: str, reason: str) -> None:
        stored = text_in(session_id)

        def end(conn: Conn) -> None:
            rows.session_for_update(conn, stored, session_id)
            conn.execute(
                f"UPDATE {SESSIONS} SET ended_at = %s, end_reason = %s "
                "WHERE id = %s AND ended_at IS NULL",
                (self._now(conn), text_in(reason), stored),
            )

        self._run(end, idempotent=True)

    def save_state(self, session_id: str, state: Mapping[str, Any]) -> None:
        text = rows.state_text(state)
        stored = text_in(session_id)

        def save(conn: Conn) -> None:
            updated = conn.execute(
                f"UPDATE {SESSIONS} SET state = %s WHERE id = %s", (text, stored)
            ).rowcount
            if updated == 0:
                raise checks.no_such_session(session_id)

        self._run(save, idempotent=True)

    def add_counters(self, session_id: str, deltas: Mapping[str, int]) -> None:
        checks.check_counters(deltas)
        stored = text_in(session_id)

        def add(conn: Conn) -> None:
            row = conn.execute(
                f"SELECT counters FROM {SESSIONS} WHERE id = %s FOR UPDATE", (stored,)
            ).fetchone()
            if row is None:
                raise checks.no_such_session(session_id)
            counters = rows.record_counters(row[0])
            for name, delta in deltas.items():
                counters[name] = counters.get(name, 0) + delta
            conn.execute(
                f"UPDATE {SESSIONS} SET counters = %s WHERE id = %s",
                (rows.counters_value(counters), stored),
            )

        self._run(add, idempotent=False)  # a repeat would add twice

    def lineage(self, session_id: str) -> list[str]:
        return self._run(lambda c: rows.lineage(c, session_id), idempotent=True)

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
        state_text = None if state is None else rows.state_text(state)
        apis, tokens = checks.append_arguments(len(encoded), api_contents, token_counts)
        stored = text_in(session_id)

        def append(conn: Conn) -> list[int]:
            user_id, _, _ = rows.writable_for_update(conn, stored, session_id)
            seq = rows.last_seq(conn, stored)
            checks.check_fresh(session_id, seq, after_seq)
            checks.check_not_continued(session_id, rows.has_child(conn, stored))
            found = conn.execute(
                f"SELECT coalesce(max(pos), 0) FROM {MESSAGES} WHERE session_id = %s AND active",
                (stored,),
            ).fetchone()
            pos = int(found[0]) if found else 0
            new_rows = appended_rows(encoded, apis, tokens, seq=seq, pos=pos)
            compaction.insert_rows(conn, stored, new_rows, user_id=user_id, now=self._now(conn))
            if state_text is not None:
                conn.execute(
                    f"UPDATE {SESSIONS} SET state = %s WHERE id = %s", (state_text, stored)
                )
            return [row[0] for row in new_rows]

        # with after_seq a repeat of a write that landed is refused as stale: never doubled
        return self._run(append, idempotent=after_seq is not None)

    def set_api_content(self, session_id: str, seq: int, api_content: str | None) -> None:
        def update(conn: Conn) -> None:
            cursor = conn.execute(
                f"UPDATE {MESSAGES} SET api_content = %s WHERE session_id = %s AND seq = %s",
                (text_in(api_content), text_in(session_id), seq),
            )
            if cursor.rowcount == 0:
                raise checks.no_such_row(session_id, seq)

        self._run(update, idempotent=True)

    def messages(self, session_id: str, *, include_archived: bool = False) -> list[StoredMessage]:
        where = "" if include_archived else "AND active"
        order = "seq" if include_archived else "pos, seq"
        query = (
            f"SELECT {rows.MESSAGE_COLUMNS} FROM {MESSAGES} "
            f"WHERE session_id = %s {where} ORDER BY {order}"
        )
        stored = text_in(session_id)
        found = self._run(lambda c: c.execute(query, (stored,)).fetchall(), idempotent=True)
        return [rows.stored_message(row) for row in found]

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
        stored = text_in(session_id)

        def commit(conn: Conn) -> CompactionCommit:
            session = rows.writable_for_update(conn, stored, session_id)
            if after_seq is not None:
                checks.check_fresh(session_id, rows.last_seq(conn, stored), after_seq)
            checks.check_not_continued(session_id, rows.has_child(conn, stored))
            return compaction.commit_compaction(
                conn,
                session_id,
                session,
                encoded,
                list(origins),
                in_place=in_place,
                child_session_id=child_session_id,
                now=self._now(conn),
            )

        return self._run(commit, idempotent=after_seq is not None)

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
        state_text = None if state is None else rows.state_text(state)
        stored = text_in(session_id)
        gone, expected = list(abandon), dict(abandon_after_seq or {})

        def restore(conn: Conn) -> CompactionCommit:
            session = rows.writable_for_update(conn, stored, session_id)
            if after_seq is not None:
                checks.check_fresh(session_id, rows.last_seq(conn, stored), after_seq)
            done = compaction.restore_view(
                conn,
                session_id,
                session,
                encoded,
                list(origins),
                api_contents=apis,
                abandon=gone,
                expected=expected,
                now=self._now(conn),
            )
            if state_text is not None:
                conn.execute(
                    f"UPDATE {SESSIONS} SET state = %s WHERE id = %s", (state_text, stored)
                )
            return done

        return self._run(restore, idempotent=after_seq is not None)

    def last_seq(self, session_id: str) -> int:
        return self._run(lambda c: rows.last_seq(c, text_in(session_id)), idempotent=True)

    # --- search -------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        user_id: str | None,
        limit: int = 3,
        exclude_sessions: Collection[str] = (),
    ) -> list[SearchHit]:
        return self._run(
            lambda c: run_search(
                c, query, user_id=user_id, limit=limit, exclude_sessions=exclude_sessions
            ),
            idempotent=True,
        )

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._database.release()

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self.where!r}, trigram={getattr(self, 'trigram', None)})"
