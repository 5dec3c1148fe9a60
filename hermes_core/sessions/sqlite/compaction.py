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

The rules themselves (which origins are allowed, what is kept, where each message lands) are
every backend's, in :mod:`hermes_core.sessions.commit_plan`; this module reads and writes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

from hermes_core.sessions import checks, commit_plan
from hermes_core.sessions.sqlite import records
from hermes_core.sessions.sqlite.packing import unpacked_list
from hermes_core.sessions.sqlite.rows import EncodedMessage, owner_token
from hermes_core.sessions.store import CompactionCommit

__all__ = ["commit_compaction", "insert_rows", "restore_view"]

_ROW_COLUMNS = "role, content, tool_calls, tool_call_id, name, extra"
_READ_COLUMNS = unpacked_list([c.strip() for c in _ROW_COLUMNS.split(",")])


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
        "SELECT user_id, model, title FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if session is None:
        raise checks.no_such_session(session_id)
    active = _active(conn, session_id)
    kept = commit_plan.kept_origins(session_id, encoded, origins, active)
    if not in_place:
        rows = commit_plan.child_rows(encoded, kept, active)
        return _to_child(
            conn, session_id, session, rows, child_session_id=child_session_id, now=now
        )
    return _in_place(
        conn, session_id, encoded, kept, active, user_id=session[0], api_contents=None, now=now
    )


def _active(conn: sqlite3.Connection, session_id: str) -> commit_plan.Active:
    """The active rows as written (an archived session's packed rows unpacked), so a kept
    message matches its row whether retention packed it or not."""
    return {
        seq: ((*columns,), token_count)
        for seq, token_count, *columns in conn.execute(
            f"SELECT seq, token_count, {_READ_COLUMNS} FROM messages "
            "WHERE session_id = ? AND active = 1",
            (session_id,),
        )
    }


def _in_place(
    conn: sqlite3.Connection,
    session_id: str,
    encoded: Sequence[EncodedMessage],
    kept: Sequence[int | None],
    active: commit_plan.Active,
    *,
    user_id: str | None,
    api_contents: Sequence[str | None] | None,
    now: float,
) -> CompactionCommit:
    (next_seq,) = conn.execute(
        "SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
    ).fetchone()
    plan = commit_plan.in_place(encoded, kept, active, next_seq, api_contents)
    conn.execute(
        "UPDATE messages SET active = 0, compacted = 1, pos = NULL "
        "WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))",
        (session_id, json.dumps(plan.archive)),
    )
    conn.executemany(
        "UPDATE messages SET pos = ? WHERE session_id = ? AND seq = ?",
        [(pos, session_id, seq) for pos, seq in plan.moved],
    )
    insert_rows(conn, session_id, plan.new_rows, user_id=user_id, now=now)
    return plan.commit(session_id)


def restore_view(
    conn: sqlite3.Connection,
    session_id: str,
    encoded: Sequence[EncodedMessage],
    origins: Sequence[int | None],
    api_contents: Sequence[str | None],
    *,
    abandon: Sequence[str],
    expected: Mapping[str, int],
    now: float,
) -> CompactionCommit:
    """An undo's commit inside the caller's write transaction: ``abandon`` (live sessions,
    each at the seq ``expected`` names, where it names one) ended as ``"undone"`` (so the
    session takes writes again, and resume does not follow them; the session itself open
    again), then ``encoded`` made its active view in place. Any of them, or the session,
    still continued in a live child is stale."""
    user_id = records.session_user(conn, session_id)
    ids = list(abandon)
    found: dict[str, tuple[str | None, str | None]] = {}
    reasons: dict[str, str | None] = {}
    newest: dict[str, int] = {}
    for sid, parent, user, reason, last in conn.execute(
        "SELECT id, parent_session_id, user_id, end_reason, "
        "(SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = sessions.id) "
        "FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids),),
    ):
        found[sid], reasons[sid], newest[sid] = (parent, user), reason, int(last)
    ids = commit_plan.abandoned(session_id, ids, found, user_id)
    checks.check_abandoned_fresh(ids, reasons, newest, expected)
    active = _active(conn, session_id)
    kept = commit_plan.kept_origins(session_id, encoded, origins, active)
    if ids:
        conn.execute(
            "UPDATE sessions SET end_reason = 'undone', ended_at = coalesce(ended_at, ?) "
            "WHERE id IN (SELECT value FROM json_each(?))",
            (now, json.dumps(ids)),
        )
        conn.execute(
            "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", (session_id,)
        )
    for sid in (session_id, *ids):  # another process compacted one of them meanwhile
        live = conn.execute(
            "SELECT 1 FROM sessions WHERE parent_session_id = ? "
            "AND coalesce(end_reason, '') != 'undone' LIMIT 1",
            (sid,),
        ).fetchone()
        checks.check_not_continued(sid, live is not None)
    return _in_place(
        conn, session_id, encoded, kept, active, user_id=user_id, api_contents=api_contents, now=now
    )


def _to_child(
    conn: sqlite3.Connection,
    session_id: str,
    session: tuple[str | None, str | None, str | None],
    rows: Sequence[tuple[int, int, EncodedMessage, str | None, int | None]],
    *,
    child_session_id: str | None,
    now: float,
) -> CompactionCommit:
    """End ``session_id`` and start the child holding ``rows``."""
    child = checks.child_id(child_session_id)
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (child,)).fetchone():
        raise checks.child_taken(child)
    user_id, model, title = session
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = 'compression' "
        "WHERE id = ? AND ended_at IS NULL",
        (now, session_id),
    )
    conn.execute(
        "INSERT INTO sessions (id, parent_session_id, user_id, title, model, started_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (child, session_id, user_id, title, model, now),
    )
    insert_rows(conn, child, rows, user_id=user_id, now=now)
    return commit_plan.child_commit(child, len(rows))
