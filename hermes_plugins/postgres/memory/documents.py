"""MEMORY.md / USER.md as rows of ``hermes.memory_blocks``, shared by every host.

Why optimistic concurrency: a write is decided on the text it read (matching, limits, threat
scans: the costly part) outside any lock, then stored with ``UPDATE ... WHERE version = n``.
When another host stored first the update finds no row at version *n*; the write is rolled
back, the text read again and the write decided again, so concurrent writers all land and
none overwrites another. A row changed by other means (an operator's ``UPDATE``) bumps the
version too (a trigger), and text that no longer parses back as entries is drift, as for a
hand-edited file: never rewritten wholesale, a copy kept in ``hermes.memory_history``.

An approval deletes its staged row in the transaction that stores the write: the row lock
makes every other approver of it find nothing to apply.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.dated import decide_dated
from hermes_core.memory.documents import (
    Claim,
    Decision,
    Removed,
    Scope,
    StorageUnavailable,
    Updated,
)
from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.files import MAX_FILE_BYTES
from hermes_core.memory.layout import describe
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory.access import Retry, run
from hermes_plugins.postgres.memory.audit import PostgresAuditLog
from hermes_plugins.postgres.memory.dates import change_meta, read_meta, store_meta
from hermes_plugins.postgres.memory.pending import PostgresPendingWrites, take_record
from hermes_plugins.postgres.memory.schema import BLOCKS, HISTORY, PENDING, migrate

__all__ = ["MAX_ATTEMPTS", "PostgresMemoryDocuments"]

T = TypeVar("T")
#: Times a write is decided again because other writers stored first, before it gives up.
MAX_ATTEMPTS: Final = 64
#: At most one drift copy of a row per this many seconds (the file store's rule).
BACKUP_INTERVAL: Final = 60
#: first key of the advisory lock that keeps drift copies to one a minute per row
_COPY_LOCK: Final = 0x686D656D


class _Lost(Exception):
    """The claimed record was no longer staged as read."""


def _key(scope: Scope) -> str:
    """The row key of a scope: the user id, or ``''`` for the shared text."""
    if scope is None:
        return ""
    if "\x00" in scope or not _encodable(scope):
        raise MemoryStoreError(
            f"the user id {describe(scope)} cannot be kept in PostgreSQL (it holds a NUL "
            "character or an unpaired surrogate); nothing was read or changed"
        )
    return scope


def _json(meta: object) -> Jsonb | None:
    return Jsonb(meta) if meta is not None else None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class PostgresMemoryDocuments:
    """The memory rows of one database; opening creates or upgrades the tables.

    Owns one reference to ``database`` (released by :meth:`close`, once).
    """

    kind = "postgres"

    def __init__(self, database: Database) -> None:
        self.database = database
        self._closed = False
        self._lock = threading.Lock()
        try:
            run(database, lambda conn: migrate(conn, database.where), idempotent=True)
        except BaseException:
            database.release()
            raise
        self._pending = PostgresPendingWrites(database)

    @property
    def pending(self) -> PostgresPendingWrites:
        return self._pending

    @property
    def audit_log(self) -> PostgresAuditLog:
        """Where ``memory audit`` lines go for this backend (``hermes.memory_audit``)."""
        return PostgresAuditLog(self.database)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.database.release()

    # --- reading ----------------------------------------------------------------------------

    def where(self, target: str, scope: Scope) -> str:
        if scope is not None:
            owner = f"of user {describe(scope)}"
        else:  # MEMORY.md every user shares, or the profile of a home without user ids
            owner = "(shared)" if target == "memory" else "(no user id)"
        return f"{TARGET_FILES[target]} {owner} in {BLOCKS} at {self.database.where}"

    def _row(
        self, conn: psycopg.Connection[Any], target: str, key: str
    ) -> tuple[int | None, str | None, object]:
        """(version, text, dates) of the row, (None, None, None) when there is none; refuses
        a text larger than any memory could be (as the file store refuses such a file)."""
        row = conn.execute(
            f"SELECT version, octet_length(text), "
            f"CASE WHEN octet_length(text) <= %s THEN text END, meta "
            f"FROM {BLOCKS} WHERE scope = %s AND target = %s",
            (MAX_FILE_BYTES, key, target),
        ).fetchone()
        if row is None:
            return None, None, None
        if row[2] is None:
            raise MemoryStoreError(
                f"{self.where(target, key or None)} is larger than "
                f"{MAX_FILE_BYTES // (1024 * 1024)} MiB ({row[1]:,} bytes), far over any memory "
                "limit. Nothing was read or changed; trim it with SQL (the row keeps its key)."
            )
        return int(row[0]), str(row[2]), row[3]

    def read(self, target: str, scope: Scope) -> str | None:
        key = _key(scope)
        return run(self.database, lambda conn: self._row(conn, target, key)[1], idempotent=True)

    def read_meta(self, target: str, scope: Scope) -> object:
        key = _key(scope)
        return run(self.database, lambda conn: read_meta(conn, target, key), idempotent=True)

    def update_meta(
        self, target: str, scope: Scope, change: Callable[[str | None, object], object]
    ) -> None:
        key = _key(scope)
        run(self.database, lambda conn: change_meta(conn, target, key, change), idempotent=False)

    # --- writing ----------------------------------------------------------------------------

    def update(
        self,
        target: str,
        scope: Scope,
        decide: Callable[[str | None], Decision[T]],
        *,
        claim: Claim | None = None,
    ) -> Updated[T] | None:
        key = _key(scope)
        if claim is not None and claim.staged is not self._pending:
            raise MemoryStoreError(
                f"pending write {claim.record.id} is not kept in {self.database.where}, so it "
                "cannot be approved into it; approve it where it was staged"
            )
        for attempt in range(1, MAX_ATTEMPTS + 1):
            version, text, meta, staged = run(
                self.database, lambda conn: self._state(conn, target, key, claim), idempotent=True
            )
            if not staged:
                return None
            dated = decide_dated(text, meta, decide)
            decision = dated.decision
            consume = claim if claim is not None and decision.succeeded else None
            if decision.text is None and consume is None and dated.meta is None:
                note = self._drift_copy(target, key) if decision.keep_copy else ""
                return Updated(decision.value, False, note)
            appended_note = ""
            if dated.appended or dated.copy_first:  # keep the text as it was before it changes
                appended_note = self._drift_copy(target, key, same_text=True)
            store = functools.partial(
                self._store, target=target, key=key, version=version, text=decision.text
            )
            try:
                run(
                    self.database,
                    functools.partial(store, claim=consume, meta=dated.meta),
                    idempotent=False,
                )
            except Retry:
                time.sleep(random.uniform(0, 0.002 * min(attempt, 25)))  # let the winner finish
                continue
            except _Lost:
                return None
            written = decision.text is not None
            return Updated(decision.value, written, "", dated.appended, appended_note)
        raise StorageUnavailable(
            f"{self.where(target, scope)} was changed by other writers {MAX_ATTEMPTS} times "
            "while this write was being decided; nothing was changed. Try again."
        )

    def _state(
        self, conn: psycopg.Connection[Any], target: str, key: str, claim: Claim | None
    ) -> tuple[int | None, str | None, object, bool]:
        """(version, text, dates, whether the claimed record is still staged)."""
        version, text, meta = self._row(conn, target, key)
        if claim is None:
            return version, text, meta, True
        row = conn.execute(f"SELECT 1 FROM {PENDING} WHERE id = %s", (claim.record.id,)).fetchone()
        return version, text, meta, row is not None

    def _store(
        self,
        conn: psycopg.Connection[Any],
        *,
        target: str,
        key: str,
        version: int | None,
        text: str | None,
        claim: Claim | None,
        meta: object = None,
    ) -> None:
        """Store ``text`` and its dates ``meta`` if the row is still at ``version`` (None:
        still missing), and consume ``claim``; :class:`Retry` when another writer stored
        first. ``meta`` alone (a duplicate add used an entry) is stored the same way."""
        if claim is not None and not take_record(conn, claim.record):
            raise _Lost
        if text is None and meta is not None and version is not None:
            store_meta(conn, target, key, version, meta)  # checks the version itself
            return
        if text is None:  # a no-op that consumes a claim: the text must still be as judged
            row = conn.execute(
                f"SELECT version FROM {BLOCKS} WHERE scope = %s AND target = %s FOR SHARE",
                (key, target),
            ).fetchone()
            if (int(row[0]) if row else None) != version:
                raise Retry
            return
        if version is None:
            stored = conn.execute(
                f"INSERT INTO {BLOCKS} (scope, target, text, meta) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (scope, target) DO NOTHING RETURNING version",
                (key, target, text, _json(meta)),
            ).fetchone()
        else:
            stored = conn.execute(
                f"UPDATE {BLOCKS} SET text = %s, meta = coalesce(%s, meta) "
                "WHERE scope = %s AND target = %s AND version = %s RETURNING version",
                (text, _json(meta), key, target, version),
            ).fetchone()
        if stored is None:
            raise Retry

    def _drift_copy(self, target: str, key: str, *, same_text: bool = False) -> str:
        """Keep a copy of a drifted row (at most one a minute; ``same_text``: unless the
        recent copy is of another text); what to add to the answer."""
        also = f" AND text = (SELECT text FROM {BLOCKS} WHERE scope = %s AND target = %s)"
        recent_query = (
            f"SELECT id FROM {HISTORY} WHERE scope = %s AND target = %s AND reason = 'drift' "
            "AND kept_at > now() - make_interval(secs => %s)"
            + (also if same_text else "")
            + " ORDER BY id DESC LIMIT 1"
        )
        recent_args = (key, target, BACKUP_INTERVAL) + ((key, target) if same_text else ())

        def work(conn: psycopg.Connection[Any]) -> int | None:
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_COPY_LOCK, f"{target}:{key}")
            )
            recent = conn.execute(recent_query, recent_args).fetchone()
            if recent is not None:
                return int(recent[0])
            row = conn.execute(
                f"INSERT INTO {HISTORY} (scope, target, version, text, reason) "
                f"SELECT scope, target, version, text, 'drift' FROM {BLOCKS} "
                "WHERE scope = %s AND target = %s RETURNING id",
                (key, target),
            ).fetchone()
            return int(row[0]) if row else None

        try:
            copy = run(self.database, work, idempotent=True)
        except MemoryStoreError as exc:
            return f" No copy could be saved ({exc}); the stored text itself is unchanged."
        return f" A copy is in {HISTORY} (id {copy})." if copy is not None else ""

    # --- reset ------------------------------------------------------------------------------

    def reset_preview(self, target: str, scope: Scope) -> str | None:
        key = _key(scope)
        query = f"SELECT char_length(text) FROM {BLOCKS} WHERE scope = %s AND target = %s"
        row = run(
            self.database,
            lambda conn: conn.execute(query, (key, target)).fetchone(),
            idempotent=True,
        )
        if row is None:
            return None
        return f"{self.where(target, scope)} ({row[0]:,} chars; a copy is kept in {HISTORY})"

    def reset(self, target: str, scope: Scope) -> Removed | None:
        """Delete the row and keep it in the history, in one statement (one transaction)."""
        key = _key(scope)

        def work(conn: psycopg.Connection[Any]) -> int | None:
            row = conn.execute(
                f"WITH gone AS (DELETE FROM {BLOCKS} WHERE scope = %s AND target = %s "
                "RETURNING scope, target, version, text) "
                f"INSERT INTO {HISTORY} (scope, target, version, text, reason) "
                "SELECT scope, target, version, text, 'reset' FROM gone RETURNING id",
                (key, target),
            ).fetchone()
            return int(row[0]) if row else None

        copy = run(self.database, work, idempotent=False)
        if copy is None:
            return None
        label = f"{HISTORY} id {copy}"
        return Removed(self.where(target, scope), label, label)
