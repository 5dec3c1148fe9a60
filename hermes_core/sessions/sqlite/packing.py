"""Archived message bodies, packed: the row's text columns in one zlib blob (``body_z``).

Why a SQL function: the full-text index keeps an archived row's words, and SQLite needs the
row's text whenever it touches that row in the index (the delete trigger, a rebuild, an
integrity check) and whenever a read returns it. :func:`register` gives every connection the
store opens ``hermes_unpack(body_z, column)``; the triggers, the index's content views and the
read queries say ``coalesce(column, hermes_unpack(body_z, 'column'))``, so a packed row reads
back exactly as it was written, and its words stay found. A connection without the function
(the ``sqlite3`` shell) can read the rows but cannot delete them: the trigger fails and nothing
changes, rather than the index going wrong.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Mapping, Sequence

__all__ = [
    "PACKED_COLUMNS",
    "UNPACK",
    "pack",
    "register",
    "unpack",
    "unpack_row",
    "unpacked",
    "unpacked_list",
]

#: the columns a packed row moves into ``body_z`` (set to NULL in the row)
PACKED_COLUMNS = ("content", "tool_calls", "extra", "api_content", "tool_args")
UNPACK = "hermes_unpack"
_LEVEL = 6


def pack(values: Mapping[str, str | None]) -> bytes:
    """The blob of a row's :data:`PACKED_COLUMNS` (``None`` values left out)."""
    kept = {name: values[name] for name in PACKED_COLUMNS if values.get(name) is not None}
    text = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a column: ASCII JSON escapes it
        data = json.dumps(kept, separators=(",", ":")).encode("ascii")
    return zlib.compress(data, _LEVEL)


class _Unpacker:
    """``hermes_unpack(blob, column)``; remembers the last blob, since a row's columns are
    read one after another."""

    def __init__(self) -> None:
        self._blob: bytes | None = None
        self._values: dict[str, str] = {}

    def __call__(self, blob: bytes | None, column: str) -> str | None:
        if blob is None:
            return None
        if blob != self._blob:
            self._values = json.loads(zlib.decompress(blob).decode("utf-8"))
            self._blob = bytes(blob)
        return self._values.get(column)


def unpack(blob: bytes | None, column: str) -> str | None:
    """One column of a packed row (``None`` for a row that is not packed)."""
    return _Unpacker()(blob, column)


def register(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the function the triggers and reads of packed rows call."""
    conn.create_function(UNPACK, 2, _Unpacker(), deterministic=True)


def unpacked(column: str, prefix: str = "") -> str:
    """SQL: ``column`` of a row, packed or not (``prefix`` qualifies: ``"m."``)."""
    return f"coalesce({prefix}{column}, {UNPACK}({prefix}body_z, '{column}'))"


def unpack_row(conn: sqlite3.Connection, session_id: str, seq: int) -> None:
    """Write a packed row's columns back and clear ``body_z`` (a no-op for a row that is not
    packed), so a write that sets one of them to ``NULL`` is not undone by the fallback to the
    blob; the index keeps the row's words (the TEMP update trigger re-adds them)."""
    values = ", ".join(f"{c} = {unpacked(c)}" for c in PACKED_COLUMNS)
    conn.execute(
        f"UPDATE messages SET {values}, body_z = NULL "
        "WHERE session_id = ? AND seq = ? AND body_z IS NOT NULL",
        (session_id, seq),
    )


def unpacked_list(columns: Sequence[str], prefix: str = "") -> str:
    """SQL: a comma list of :func:`unpacked` for the packed columns, the others as they are."""
    return ", ".join(
        f"{unpacked(c, prefix)} AS {c}" if c in PACKED_COLUMNS else f"{prefix}{c}" for c in columns
    )
