"""The SQLite write-behind queue: turns survive outages, restarts and ``kill -9``.

``enqueue`` commits a row and returns at once. One writer thread delivers rows per user in
insertion order (a user's later rows wait behind a failing head, so order holds), deletes a
row only after the server confirmed it, and retries failures with exponential backoff. A row
that keeps failing, or that the server refuses outright (a 4xx other than 408/429), is
*parked*: kept for an operator, skipped by the writer. Pending rows left by an earlier
process are simply the first rows the writer finds. Delivery is at-least-once (a crash
between the server's answer and the delete resends); each row carries an idempotency key
so the server can drop the repeat.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.memory.calls import redacted

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending',
    last_error TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_pending ON turns (status, user_id, id);
"""


@dataclass(frozen=True)
class QueuedTurn:
    """One row as the sender sees it."""

    id: int
    user_id: str
    session_id: str
    payload: dict[str, Any]
    idempotency_key: str
    attempts: int


class DeliveryFailed(Exception):
    """Raised by a sender; ``retryable=False`` parks the row at once."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


Sender = Callable[[QueuedTurn], None]


class WriteBehindQueue:
    """The queue file plus its writer thread (started by :meth:`start`)."""

    def __init__(
        self,
        path: Path,
        send: Sender,
        *,
        max_attempts: int,
        backoff_base: float,
        backoff_cap: float,
        clock: Callable[[], float] = time.time,
        logger: logging.Logger | None = None,
    ) -> None:
        self.path = path
        self._send = send
        self._max_attempts = max_attempts
        self._base = backoff_base
        self._cap = backoff_cap
        self._clock = clock
        self._log = logger or logging.getLogger("hermes_context.plugins.retaindb")
        self._lock = threading.Lock()  # guards the connection
        self._sending = threading.Lock()  # held while a row is in flight (see forget)
        self._wake = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._failing = False
        self._db = _open(path)

    # --- producer side -----------------------------------------------------------------------

    def enqueue(self, user_id: str, session_id: str, payload: dict[str, Any]) -> int:
        """Commit one turn and wake the writer; returns the row id.

        The payload is redacted here, at the disk boundary, whoever the caller: the host's
        memory manager redacts what it hands out, but a queue file outlives the process and
        must not depend on every producer having done so."""
        payload = redacted(payload)
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO turns (user_id, session_id, payload, idempotency_key, "
                "next_attempt_at, created_at) VALUES (?, ?, ?, ?, 0, ?)",
                (user_id, session_id, json.dumps(payload), uuid.uuid4().hex, self._clock()),
            )
            row_id = cursor.lastrowid
        with self._wake:
            self._wake.notify_all()
        assert row_id is not None
        return row_id

    def counts(self) -> dict[str, int]:
        """Rows per status (``pending``, ``parked``)."""
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM turns GROUP BY status")
            found = {str(status): int(count) for status, count in rows}
        return {"pending": found.get("pending", 0), "parked": found.get("parked", 0)}

    def rows(self) -> list[dict[str, Any]]:
        """Every row, oldest first (for tests and operators)."""
        with self._lock:
            cursor = self._db.execute("SELECT * FROM turns ORDER BY id")
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor]

    def forget(self, user_id: str) -> int:
        """Delete every queued row of ``user_id`` (pending and parked) once no row is in
        flight, then rewrite the file so none of its bytes remain (``secure_delete``,
        ``VACUUM``, the ``-wal`` truncated); how many rows were deleted. A delivery that was
        under way has finished when this returns, so a delete on the server afterwards
        covers it."""
        with self._sending, self._lock:
            self._db.execute("PRAGMA secure_delete = ON")
            cursor = self._db.execute("DELETE FROM turns WHERE user_id = ?", (user_id,))
            deleted = max(cursor.rowcount, 0)
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted

    # --- writer side -------------------------------------------------------------------------

    def run_once(self) -> float | None:
        """Try every user's due head row once; returns when the next head is due (or None)."""
        now = self._clock()
        for row in self._heads():
            if row[6] <= now:
                self._deliver(row)
        with self._lock:
            (next_due,) = self._db.execute(
                "SELECT MIN(next_attempt_at) FROM turns t WHERE status = 'pending' AND id = "
                "(SELECT MIN(id) FROM turns WHERE user_id = t.user_id AND status = 'pending')"
            ).fetchone()
        return None if next_due is None else float(next_due)

    def _heads(self) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(
                self._db.execute(
                    "SELECT id, user_id, session_id, payload, idempotency_key, attempts, "
                    "next_attempt_at FROM turns t WHERE status = 'pending' AND id = "
                    "(SELECT MIN(id) FROM turns WHERE user_id = t.user_id AND status = 'pending')"
                    " ORDER BY id"
                )
            )

    def _deliver(self, row: tuple[Any, ...]) -> None:
        with self._sending:
            self._deliver_row(row)

    def _deliver_row(self, row: tuple[Any, ...]) -> None:
        row_id, user_id, session_id, payload, key, attempts, _ = row
        with self._lock:  # forget may have deleted it since it was read
            if self._db.execute("SELECT 1 FROM turns WHERE id = ?", (row_id,)).fetchone() is None:
                return
        turn = QueuedTurn(row_id, user_id, session_id, json.loads(payload), key, attempts)
        try:
            self._send(turn)
        except DeliveryFailed as exc:
            self._failed(turn, str(exc), retryable=exc.retryable)
            return
        except Exception as exc:  # noqa: BLE001 - a sender bug must not kill the writer
            self._failed(turn, f"{type(exc).__name__}: {exc}", retryable=True)
            return
        with self._lock:
            self._db.execute("DELETE FROM turns WHERE id = ?", (row_id,))
        if self._failing:
            self._failing = False
            self._log.info("RetainDB reachable again; delivering queued turns")

    def backoff(self, attempts: int) -> float:
        """Delay after the ``attempts``-th failure: base, 2*base, 4*base, ... up to the cap."""
        return float(min(self._cap, self._base * 2.0 ** min(attempts - 1, 60)))

    def _failed(self, turn: QueuedTurn, error: str, *, retryable: bool) -> None:
        """Back off and retry. Only a turn the server keeps rejecting (a 4xx about the turn)
        is parked after ``max_attempts``; an outage is waited out however long it lasts, so
        nothing synced while the service is down is ever dropped."""
        attempts = turn.attempts + 1
        if not retryable and attempts >= self._max_attempts:
            with self._lock:
                self._db.execute(
                    "UPDATE turns SET status = 'parked', attempts = ?, last_error = ? WHERE id = ?",
                    (attempts, error, turn.id),
                )
            self._log.warning(
                "RetainDB: parked queued turn %d after %d attempt(s): %s",
                turn.id,
                attempts,
                error,
            )
            return
        due = self._clock() + self.backoff(attempts)
        with self._lock:
            self._db.execute(
                "UPDATE turns SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?",
                (attempts, due, error, turn.id),
            )
        if not self._failing:
            self._failing = True
            self._log.warning("RetainDB delivery failed (%s); turns stay queued and retry", error)

    # --- thread ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the writer; it first replays whatever an earlier process left pending."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="retaindb-writer", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stopping:
            try:
                next_due = self.run_once()
            except sqlite3.Error as exc:
                self._log.warning("RetainDB queue error: %s", exc)
                next_due = self._clock() + 1.0
            wait = 5.0 if next_due is None else max(0.0, next_due - self._clock())
            if wait > 0:
                with self._wake:
                    if not self._stopping:
                        self._wake.wait(min(wait, 5.0))
                    self._wake.notify_all()  # tell flush() waiters the state moved

    def flush(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for every pending row to go; False when some remain.

        Returns early when the next retry is due only after the deadline.
        """
        deadline = time.monotonic() + timeout
        while True:
            if self.counts()["pending"] == 0:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            with self._lock:
                (next_due,) = self._db.execute(
                    "SELECT MIN(next_attempt_at) FROM turns WHERE status = 'pending'"
                ).fetchone()
            if next_due is not None and next_due - self._clock() > remaining:
                return False
            with self._wake:
                self._wake.wait(min(remaining, 0.05))

    def close(self, drain_timeout: float) -> dict[str, int]:
        """Drain for a bounded time, stop the writer, close the file; returns what is left."""
        if self._thread is not None:
            self.flush(drain_timeout)
            self._stopping = True
            with self._wake:
                self._wake.notify_all()
            self._thread.join(timeout=max(drain_timeout, 0.1))
        else:
            self._stopping = True
        left = self.counts()
        if self._thread is None or not self._thread.is_alive():
            with self._lock:
                self._db.close()
        return left


def _open(path: Path) -> sqlite3.Connection:
    """Open (creating with mode 0600) the queue file in WAL mode, autocommit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)
    db = sqlite3.connect(path, timeout=10.0, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(_SCHEMA)
    return db
