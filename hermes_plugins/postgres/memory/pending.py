"""Staged memory writes as rows of ``hermes.memory_pending``: one JSON record per row.

Why rows: every host of a gateway stages and approves into one place, and an approval
consumes its row in the transaction that stores the write
(:meth:`~hermes_plugins.postgres.memory.documents.PostgresMemoryDocuments.update`), so that
of many hosts approving one record at once exactly one applies it. A record is checked when
read back exactly as a file record is (an operator may have edited it).
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from typing import Any, Final

import psycopg

from hermes_core.memory.staged import PendingWrite, record_from_json, record_json
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory.access import run
from hermes_plugins.postgres.memory.schema import PENDING

__all__ = ["PostgresPendingWrites", "take_record"]

_ID: Final = re.compile(r"[0-9a-f]{8}")


def _checked(pending_id: object) -> str:
    if not isinstance(pending_id, str) or not _ID.fullmatch(pending_id):
        raise KeyError(f"{pending_id!r} is not a pending id (8 hex digits, see `memory pending`)")
    return pending_id


def take_record(conn: psycopg.Connection[Any], record: PendingWrite) -> bool:
    """Inside the caller's transaction: delete ``record``'s row if it is still staged as
    read; whether it was (the row stays locked, and gone for others, until the commit)."""
    row = conn.execute(f"DELETE FROM {PENDING} WHERE id = %s RETURNING record", (record.id,))
    found = row.fetchone()
    if found is None:
        return False
    try:
        return record_from_json(found[0], record.id) == record
    except KeyError:
        return False


class PostgresPendingWrites:
    """The staged memory writes of every host sharing the database."""

    command = "memory"

    def __init__(self, database: Database, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.clock = clock

    def new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(4)

            def taken(conn: psycopg.Connection[Any], pending_id: str = candidate) -> bool:
                query = f"SELECT 1 FROM {PENDING} WHERE id = %s"
                return conn.execute(query, (pending_id,)).fetchone() is not None

            if not run(self.database, taken, idempotent=True):
                return candidate

    def add(self, record: PendingWrite) -> None:
        text = record_json(record, ascii_only=True)  # a lone surrogate survives as an escape
        query = f"INSERT INTO {PENDING} (id, created, record) VALUES (%s, %s, %s)"
        run(
            self.database,
            lambda conn: conn.execute(query, (_checked(record.id), record.created, text)),
            idempotent=False,
        )

    def get(self, pending_id: str) -> PendingWrite:
        """The record; KeyError (with what to do) when it is missing or unreadable."""
        checked = _checked(pending_id)
        query = f"SELECT record FROM {PENDING} WHERE id = %s"
        row = run(
            self.database,
            lambda conn: conn.execute(query, (checked,)).fetchone(),
            idempotent=True,
        )
        return record_from_json(row[0] if row else None, checked)

    def all(self) -> tuple[list[PendingWrite], list[str]]:
        """Every readable record, oldest first, and the ids of unreadable ones."""
        query = f"SELECT id, record FROM {PENDING} ORDER BY created, id"
        rows = run(self.database, lambda conn: conn.execute(query).fetchall(), idempotent=True)
        records: list[PendingWrite] = []
        broken: list[str] = []
        for pending_id, text in rows:
            try:
                records.append(record_from_json(text, pending_id))
            except KeyError:
                broken.append(pending_id)
        records.sort(key=lambda r: (r.created, r.id))
        return records, broken

    def delete(self, pending_id: str) -> bool:
        checked = _checked(pending_id)
        query = f"DELETE FROM {PENDING} WHERE id = %s RETURNING id"
        row = run(
            self.database,
            lambda conn: conn.execute(query, (checked,)).fetchone(),
            idempotent=False,  # a retry after a lost answer would say "no such write"
        )
        return row is not None
