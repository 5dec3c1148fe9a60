"""Dates of memory entries in PostgreSQL: a ``meta`` column of ``hermes.memory_blocks``.

Why a column of the same row: the text and its dates are stored by one ``UPDATE ... WHERE
version = n``, so they are always in step, whichever host wrote; an operator's ``UPDATE`` of
the text alone leaves the dates (and the mark of the text the store wrote) as they were, which
is how text appended by hand is told apart (see :mod:`hermes_core.memory.dates`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hermes_plugins.postgres.memory.access import Retry
from hermes_plugins.postgres.migrations import SCHEMA

__all__ = ["V3_DATES", "read_meta", "store_meta"]

_BLOCKS = f"{SCHEMA}.memory_blocks"

#: memory schema version 3: the dates of each block's entries (NULL: none kept yet)
V3_DATES: tuple[str, ...] = (f"ALTER TABLE {_BLOCKS} ADD COLUMN IF NOT EXISTS meta jsonb",)


def read_meta(conn: psycopg.Connection[Any], target: str, key: str) -> object:
    """The block's metadata object (None when there is no row or no dates)."""
    row = conn.execute(
        f"SELECT meta FROM {_BLOCKS} WHERE scope = %s AND target = %s", (key, target)
    ).fetchone()
    return row[0] if row else None


def store_meta(
    conn: psycopg.Connection[Any], target: str, key: str, version: int | None, meta: object
) -> None:
    """Store ``meta`` alone on the row still at ``version``; :class:`Retry` when another
    writer stored first. No row: nothing to date."""
    if version is None:
        return
    stored = conn.execute(
        f"UPDATE {_BLOCKS} SET meta = %s WHERE scope = %s AND target = %s AND version = %s "
        "RETURNING version",
        (Jsonb(meta), key, target, version),
    ).fetchone()
    if stored is None:
        raise Retry


def change_meta(
    conn: psycopg.Connection[Any],
    target: str,
    key: str,
    change: Callable[[str | None, object], object],
) -> None:
    """Store ``change(text, meta)`` (unless None), the row locked meanwhile."""
    row = conn.execute(
        f"SELECT text, meta FROM {_BLOCKS} WHERE scope = %s AND target = %s FOR UPDATE",
        (key, target),
    ).fetchone()
    if row is None:
        return
    meta = change(str(row[0]), row[1])
    if meta is not None:
        conn.execute(
            f"UPDATE {_BLOCKS} SET meta = %s WHERE scope = %s AND target = %s",
            (Jsonb(meta), key, target),
        )
