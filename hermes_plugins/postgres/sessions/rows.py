"""Python values <-> PostgreSQL rows, losslessly, and the lookups the transactions share.

Why an escape: PostgreSQL ``text`` cannot hold U+0000, and psycopg cannot send a lone
surrogate, yet a transcript may contain both (a NUL pasted from a binary file, a broken
emoji half). Every string this backend writes to a text column goes through
:func:`text_in` and every one it reads through :func:`text_out`:

* U+0001 (the escape character, itself rare) becomes U+0001 U+0001,
* U+0000 becomes U+0001 U+0002,
* a lone surrogate U+D800..U+DFFF becomes U+0001 ``u`` and four hex digits.

Strings without those characters (nearly all) are stored as they are; the mapping is
one-to-one, so equality (ids, user ids) is kept and the reader restores every string exactly.
The escape characters are separators for the full-text index, so search sees the words on
either side. JSON columns need no escape: ``json.dumps`` writes control characters as
``\\u`` escapes, and the message encoder falls back to ASCII JSON for lone surrogates.

The message <-> columns mapping itself is the SQLite store's
(:mod:`hermes_core.sessions.sqlite.rows`), reused as is: both backends keep the same columns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hermes_core.sessions import records
from hermes_core.sessions.checks import check_not_undone, dump_json, no_such_session
from hermes_core.sessions.sqlite.rows import EncodedMessage, decode_message
from hermes_core.sessions.store import SessionRecord, StoredMessage
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS

__all__ = [
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "counters_value",
    "last_seq",
    "lineage",
    "message_values",
    "record",
    "record_counters",
    "session",
    "session_for_update",
    "state_text",
    "stored_message",
    "text_in",
    "text_out",
    "writable_for_update",
]

_SPECIAL = re.compile("[\x00\x01\ud800-\udfff]")
_ESCAPED = re.compile("\x01(?:(\x01)|(\x02)|u([0-9a-f]{4}))")

SESSION_COLUMNS = (
    "id, user_id, parent_session_id, title, model, started_at, ended_at, end_reason, "
    "counters, state"
)
MESSAGE_COLUMNS = (
    "session_id, seq, role, content, tool_calls, tool_call_id, name, extra, active, "
    'compacted, api_content, "timestamp", token_count'
)


def _escape(found: re.Match[str]) -> str:
    char = found.group(0)
    if char == "\x01":
        return "\x01\x01"
    if char == "\x00":
        return "\x01\x02"
    return f"\x01u{ord(char):04x}"


def _unescape(found: re.Match[str]) -> str:
    if found.group(1):
        return "\x01"
    if found.group(2):
        return "\x00"
    return chr(int(found.group(3), 16))


def text_in(text: str | None) -> str | None:
    """``text`` as a PostgreSQL text column can hold it (see the module docstring)."""
    if text is None or _SPECIAL.search(text) is None:
        return text
    return _SPECIAL.sub(_escape, text)


def text_out(text: str | None) -> str | None:
    """The string :func:`text_in` was given."""
    if text is None or "\x01" not in text:
        return text
    return _ESCAPED.sub(_unescape, text)


def state_text(state: Mapping[str, Any]) -> str:
    """The session state as JSON text (``text``, not ``jsonb``: jsonb cannot hold ``\\u0000``,
    NaN or a key order, and the state must come back as it was saved)."""
    text = dump_json(dict(state), "state")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: ASCII JSON escapes it
        text = json.dumps(dict(state))
    return text


def counters_value(counters: Mapping[str, int]) -> Jsonb:
    """Counters as ``jsonb`` (names escaped: jsonb cannot hold ``\\u0000`` either)."""
    return Jsonb({text_in(name): value for name, value in counters.items()})


def message_values(enc: EncodedMessage) -> tuple[str | None, ...]:
    """``role, content, tool_calls, tool_call_id, name, extra, tool_names, tool_args``."""
    return tuple(text_in(value) for value in (*enc.columns(), *enc.search_columns()))


def record(row: Sequence[Any]) -> SessionRecord:
    return records.session_record(row, counters=record_counters, text=text_out)


def record_counters(value: Mapping[str, Any] | None) -> dict[str, int]:
    """The counters a ``jsonb`` column holds, names unescaped."""
    return {text_out(name) or "": int(count) for name, count in (value or {}).items()}


def stored_message(row: Sequence[Any]) -> StoredMessage:
    return records.stored_message(row, decode_message, text_out)


def session(conn: psycopg.Connection[Any], stored_id: str | None) -> SessionRecord | None:
    """The session whose (escaped) id is ``stored_id``, or ``None``."""
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM {SESSIONS} WHERE id = %s", (stored_id,)
    ).fetchone()
    return record(row) if row is not None else None


def session_for_update(
    conn: psycopg.Connection[Any], stored_id: str | None, session_id: str
) -> tuple[str | None, str | None, str | None]:
    """Lock the session's row until the transaction ends, so two hosts writing one session
    take turns (the second sees the first's rows once it has the lock); returns the stored
    ``(user_id, model, title)``. :class:`SessionError` when there is no such session."""
    row = conn.execute(
        f"SELECT user_id, model, title FROM {SESSIONS} WHERE id = %s FOR UPDATE", (stored_id,)
    ).fetchone()
    if row is None:
        raise no_such_session(session_id)
    return row[0], row[1], row[2]


def writable_for_update(
    conn: psycopg.Connection[Any], stored_id: str | None, session_id: str
) -> tuple[str | None, str | None, str | None]:
    """:func:`session_for_update` for a write that changes the session's rows:
    :class:`StaleSessionError` when an undo abandoned it (checked under the lock)."""
    row = conn.execute(
        f"SELECT user_id, model, title, end_reason FROM {SESSIONS} WHERE id = %s FOR UPDATE",
        (stored_id,),
    ).fetchone()
    if row is None:
        raise no_such_session(session_id)
    check_not_undone(session_id, text_out(row[3]))
    return row[0], row[1], row[2]


def has_child(conn: psycopg.Connection[Any], stored_id: str | None) -> bool:
    """Whether a compaction continued the session in a child (its rows are then frozen) that
    an undo did not abandon."""
    row = conn.execute(
        f"SELECT 1 FROM {SESSIONS} WHERE parent_session_id = %s "
        "AND coalesce(end_reason, '') <> 'undone' LIMIT 1",
        (stored_id,),
    ).fetchone()
    return row is not None


def last_seq(conn: psycopg.Connection[Any], stored_id: str | None) -> int:
    row = conn.execute(
        f"SELECT coalesce(max(seq), 0) FROM {MESSAGES} WHERE session_id = %s", (stored_id,)
    ).fetchone()
    return int(row[0]) if row else 0


_LINEAGE = f"""
WITH RECURSIVE
    up(id, parent, depth) AS (
        SELECT id, parent_session_id, 0 FROM {SESSIONS} WHERE id = %(id)s
        UNION ALL
        SELECT s.id, s.parent_session_id, up.depth + 1 FROM {SESSIONS} AS s
        JOIN up ON s.id = up.parent WHERE up.depth < 10000),
    down(id, depth, started, ordinal) AS (
        SELECT id, 0, started_at, ordinal FROM {SESSIONS} WHERE id = %(id)s
        UNION ALL
        SELECT s.id, down.depth + 1, s.started_at, s.ordinal FROM {SESSIONS} AS s
        JOIN down ON s.parent_session_id = down.id WHERE down.depth < 10000)
SELECT id FROM (
    SELECT id, -depth AS rank, 0::float8 AS started, 0::bigint AS ordinal FROM up
    WHERE depth > 0
    UNION ALL SELECT id, depth, started, ordinal FROM down) AS family
ORDER BY rank, started, ordinal
"""


def lineage(conn: psycopg.Connection[Any], session_id: str) -> list[str]:
    """Ancestors (oldest first), the session, then descendants (generation by generation)."""
    ids: list[str] = []
    for (found,) in conn.execute(_LINEAGE, {"id": text_in(session_id)}):
        name = text_out(found) or ""
        if name not in ids:
            ids.append(name)
    return ids or [session_id]
