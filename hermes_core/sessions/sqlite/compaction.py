"""The compaction commit: replace a session's active view in one write transaction.

Everything is checked before the first row changes, and the caller's transaction makes the
rest all or nothing, so a failed or interrupted commit leaves the store as it was (never a
doubled transcript: old and new rows are never both active).

* ``in_place``: the active rows not named in ``origins`` become ``active=0, compacted=1``
  (their ``pos`` cleared, their text still indexed), the named rows get ``pos`` 1..n in the
  new order, new messages are inserted with the next seqs.
* a child: the parent is ended (``end_reason="compression"``; a parent that had already
  ended keeps its reason), the child is created under the same user with
  ``parent_session_id`` set and ``messages`` as its rows (seq and pos 1..n); the parent's
  rows are left as they were.

A message named by an origin is expected unchanged from that row. When its encoding differs
after all, the stored row cannot stand for it: it is treated as new (inserted; the old row
is archived in place), so the text the caller gave is what the active view holds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite.rows import EncodedMessage, owner_token
from hermes_core.sessions.store import CompactionCommit

__all__ = ["check_origins", "commit_compaction", "insert_rows"]

_ROW_COLUMNS = "role, content, tool_calls, tool_call_id, name, extra"


def insert_rows(
    conn: sqlite3.Connection,
    session_id: str,
    rows: Sequence[tuple[int, int, EncodedMessage, str | None, int | None]],
    *,
    user_id: str | None,
    now: float,
) -> None:
    """Insert ``(seq, pos, message, api_content, token_count)`` rows as active."""
    owner = owner_token(user_id)
    conn.executemany(
        f"INSERT INTO messages (session_id, seq, pos, {_ROW_COLUMNS}, tool_names, tool_args, "
        "owner, api_content, token_count, timestamp, active, compacted) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0)",
        [
            (session_id, seq, pos, *enc.columns(), *enc.search_columns(), owner, api, tokens, now)
            for seq, pos, enc, api, tokens in rows
        ],
    )


def commit_compaction(
    conn: sqlite3.Connection,
    session_id: str,
    encoded: Sequence[EncodedMessage],
    origins: Sequence[int | None],
    *,
    in_place: bool,
    child_session_id: str | None,
    now: float,
) -> CompactionCommit:
    """Do the commit inside the caller's write transaction."""
    session = conn.execute(
        "SELECT user_id, model, title, ended_at FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if session is None:
        raise SessionError(f"no such session: {session_id!r}")
    if len(origins) != len(encoded):
        raise SessionError(f"commit_compaction: {len(encoded)} messages but {len(origins)} origins")
    active = {
        seq: (row_id, (*columns,), token_count)
        for seq, row_id, token_count, *columns in conn.execute(
            f"SELECT seq, id, token_count, {_ROW_COLUMNS} FROM messages "
            "WHERE session_id = ? AND active = 1",
            (session_id,),
        )
    }
    check_origins(session_id, origins, active)
    # an origin whose message changed cannot stand for it: treat it as new
    kept = [
        origin if origin is not None and active[origin][1] == enc.columns() else None
        for enc, origin in zip(encoded, origins, strict=True)
    ]
    if not in_place:
        return _to_child(
            conn,
            session_id,
            session,
            rows=[
                (enc, active[origin][2] if origin is not None else None)
                for enc, origin in zip(encoded, kept, strict=True)
            ],
            child_session_id=child_session_id,
            now=now,
        )
    archive = sorted(set(active) - {seq for seq in kept if seq is not None})
    conn.execute(
        "UPDATE messages SET active = 0, compacted = 1, pos = NULL "
        "WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))",
        (session_id, json.dumps(archive)),
    )
    (next_seq,) = conn.execute(
        "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    seqs: list[int] = []
    new_rows = []
    for pos, (enc, origin) in enumerate(zip(encoded, kept, strict=True), start=1):
        if origin is None:
            new_rows.append((next_seq, pos, enc, None, None))
            seqs.append(next_seq)
            next_seq += 1
        else:
            conn.execute(
                "UPDATE messages SET pos = ? WHERE session_id = ? AND seq = ?",
                (pos, session_id, origin),
            )
            seqs.append(origin)
    insert_rows(conn, session_id, new_rows, user_id=session[0], now=now)
    return CompactionCommit(session_id=session_id, seqs=tuple(seqs), archived=len(archive))


def check_origins(session_id: str, origins: Sequence[int | None], active: Collection[int]) -> None:
    """Refuse origins that are not distinct active seqs (backend-neutral: the PostgreSQL
    store uses it too)."""
    seen: set[int] = set()
    for index, origin in enumerate(origins):
        if origin is None:
            continue
        if isinstance(origin, bool) or not isinstance(origin, int) or origin not in active:
            raise SessionError(
                f"commit_compaction: origins[{index}] = {origin!r} is not an active row of "
                f"session {session_id!r}; nothing was changed"
            )
        if origin in seen:
            raise SessionError(
                f"commit_compaction: origins[{index}] names seq {origin} twice; nothing was changed"
            )
        seen.add(origin)


def _to_child(
    conn: sqlite3.Connection,
    session_id: str,
    session: tuple[str | None, str | None, str | None, float | None],
    *,
    rows: Sequence[tuple[EncodedMessage, int | None]],
    child_session_id: str | None,
    now: float,
) -> CompactionCommit:
    """End ``session_id`` and start the child holding ``rows`` (message, token count)."""
    if not child_session_id:
        raise SessionError("commit_compaction: in_place=False needs a child_session_id")
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (child_session_id,)).fetchone():
        raise SessionError(
            f"commit_compaction: session {child_session_id!r} already exists; nothing was changed"
        )
    user_id, model, title, _ = session
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = 'compression' "
        "WHERE id = ? AND ended_at IS NULL",
        (now, session_id),
    )
    conn.execute(
        "INSERT INTO sessions (id, parent_session_id, user_id, title, model, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (child_session_id, session_id, user_id, title, model, now),
    )
    insert_rows(
        conn,
        child_session_id,
        [(n, n, enc, None, tokens) for n, (enc, tokens) in enumerate(rows, start=1)],
        user_id=user_id,
        now=now,
    )
    return CompactionCommit(
        session_id=child_session_id, seqs=tuple(range(1, len(rows) + 1)), archived=0
    )
