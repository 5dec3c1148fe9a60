"""The compaction commit and row inserts, inside the caller's transaction.

Same rules as the SQLite store (:mod:`hermes_core.sessions.sqlite.compaction`): everything is
checked before the first row changes and the transaction makes the rest all or nothing, so
old and new rows are never both active.

* ``in_place``: the active rows not named in ``origins`` become ``active=false,
  compacted=true`` (``pos`` cleared, still indexed), the named rows get ``pos`` 1..n in the new
  order, new messages are inserted with the next seqs.
* a child: the parent is ended (``end_reason="compression"``; an ended parent keeps its
  reason), the child is created under the same user with ``parent_session_id`` set and
  ``messages`` as its rows (seq and pos 1..n); the parent's rows are left as they were.

The rules (which origins are allowed, what is kept, where each message lands) are every
backend's, in :mod:`hermes_core.sessions.commit_plan`. The caller holds the session row's lock
(:func:`~.rows.session_for_update`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from hermes_core.sessions import checks, commit_plan
from hermes_core.sessions.sqlite.rows import EncodedMessage, owner_token
from hermes_core.sessions.store import CompactionCommit
from hermes_plugins.postgres.sessions.rows import (
    has_child,
    last_seq,
    message_values,
    text_in,
    text_out,
)
from hermes_plugins.postgres.sessions.schema import MESSAGES, SESSIONS

__all__ = ["Row", "commit_compaction", "insert_rows", "restore_view"]

#: ``(seq, pos, message, api_content, token_count)`` of a row to insert
Row = tuple[int, int, EncodedMessage, str | None, int | None]
_ROW_COLUMNS = "role, content, tool_calls, tool_call_id, name, extra"
_INSERT = (
    f"INSERT INTO {MESSAGES} (session_id, seq, pos, {_ROW_COLUMNS}, tool_names, tool_args, "
    'owner, api_content, token_count, "timestamp", active, compacted) '
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, true, false)"
)


def insert_rows(
    conn: psycopg.Connection[Any],
    stored_id: str | None,
    rows: Sequence[Row],
    *,
    user_id: str | None,
    now: float,
) -> None:
    """Insert ``rows`` as active rows of the session whose stored id is ``stored_id``;
    ``user_id`` is the session's user as stored (escaped)."""
    if not rows:
        return
    owner = owner_token(text_out(user_id))
    with conn.cursor() as cursor:
        cursor.executemany(
            _INSERT,
            [
                (stored_id, seq, pos, *message_values(enc), owner, text_in(api), tokens, now)
                for seq, pos, enc, api, tokens in rows
            ],
        )


def commit_compaction(
    conn: psycopg.Connection[Any],
    session_id: str,
    session: tuple[str | None, str | None, str | None],
    encoded: Sequence[EncodedMessage],
    origins: Sequence[int | None],
    *,
    in_place: bool,
    child_session_id: str | None,
    now: float,
) -> CompactionCommit:
    """Do the commit; ``session`` is the locked row's stored ``(user_id, model, title)``."""
    active = _active(conn, text_in(session_id))
    kept = commit_plan.kept_origins(session_id, encoded, origins, active)
    if not in_place:
        rows = commit_plan.child_rows(encoded, kept, active)
        return _to_child(
            conn, session_id, session, rows, child_session_id=child_session_id, now=now
        )
    return _in_place(
        conn, session_id, encoded, kept, active, user_id=session[0], api_contents=None, now=now
    )


def restore_view(
    conn: psycopg.Connection[Any],
    session_id: str,
    session: tuple[str | None, str | None, str | None],
    encoded: Sequence[EncodedMessage],
    origins: Sequence[int | None],
    *,
    api_contents: Sequence[str | None],
    abandon: Sequence[str],
    expected: Mapping[str, int],
    now: float,
) -> CompactionCommit:
    """An undo's commit (the caller holds the session row's lock): ``abandon`` (live
    sessions, each at the seq ``expected`` names, where it names one; their rows locked here,
    so no write to them lands meanwhile) ended as ``"undone"`` (so the session takes writes
    again, and resume does not follow them; the session itself open again), then ``encoded``
    made its active view in place. Any of them, or the session, still continued in a live
    child is stale."""
    stored_id = text_in(session_id)
    ids = list(abandon)
    found: dict[str, tuple[str | None, str | None]] = {}
    reasons: dict[str, str | None] = {}
    newest: dict[str, int] = {}
    for key in dict.fromkeys(ids):  # locked in the order given: a chain's, parents first
        row = conn.execute(
            f"SELECT parent_session_id, user_id, end_reason FROM {SESSIONS} "
            "WHERE id = %s FOR UPDATE",
            (text_in(key),),
        ).fetchone()
        if row is not None:
            found[key], reasons[key] = (text_out(row[0]), text_out(row[1])), text_out(row[2])
            newest[key] = last_seq(conn, text_in(key))
    ids = commit_plan.abandoned(session_id, ids, found, text_out(session[0]))
    checks.check_abandoned_fresh(ids, reasons, newest, expected)
    active = _active(conn, stored_id)
    kept = commit_plan.kept_origins(session_id, encoded, origins, active)
    if ids:
        conn.execute(
            f"UPDATE {SESSIONS} SET end_reason = 'undone', ended_at = coalesce(ended_at, %s) "
            "WHERE id = ANY(%s::text[])",
            (now, [text_in(i) for i in ids]),
        )
        conn.execute(
            f"UPDATE {SESSIONS} SET ended_at = NULL, end_reason = NULL WHERE id = %s",
            (stored_id,),
        )
    for sid in (session_id, *ids):  # another host compacted one of them meanwhile
        checks.check_not_continued(sid, has_child(conn, text_in(sid)))
    return _in_place(
        conn,
        session_id,
        encoded,
        kept,
        active,
        user_id=session[0],
        api_contents=api_contents,
        now=now,
    )


def _active(conn: psycopg.Connection[Any], stored_id: str | None) -> commit_plan.Active:
    return {
        int(seq): (tuple(text_out(c) for c in columns), tokens)
        for seq, tokens, *columns in conn.execute(
            f"SELECT seq, token_count, {_ROW_COLUMNS} FROM {MESSAGES} "
            "WHERE session_id = %s AND active",
            (stored_id,),
        )
    }


def _in_place(
    conn: psycopg.Connection[Any],
    session_id: str,
    encoded: Sequence[EncodedMessage],
    kept: Sequence[int | None],
    active: commit_plan.Active,
    *,
    user_id: str | None,
    api_contents: Sequence[str | None] | None,
    now: float,
) -> CompactionCommit:
    stored_id = text_in(session_id)
    next_row = conn.execute(
        f"SELECT coalesce(max(seq), 0) + 1 FROM {MESSAGES} WHERE session_id = %s", (stored_id,)
    ).fetchone()
    next_seq = int(next_row[0]) if next_row else 1
    plan = commit_plan.in_place(encoded, kept, active, next_seq, api_contents)
    conn.execute(
        f"UPDATE {MESSAGES} SET active = false, compacted = true, pos = NULL "
        "WHERE session_id = %s AND seq = ANY(%s::integer[])",
        (stored_id, plan.archive),
    )
    if plan.moved:
        with conn.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {MESSAGES} SET pos = %s WHERE session_id = %s AND seq = %s",
                [(pos, stored_id, seq) for pos, seq in plan.moved],
            )
    insert_rows(conn, stored_id, plan.new_rows, user_id=user_id, now=now)
    return plan.commit(session_id)


def _to_child(
    conn: psycopg.Connection[Any],
    session_id: str,
    session: tuple[str | None, str | None, str | None],
    rows: Sequence[Row],
    *,
    child_session_id: str | None,
    now: float,
) -> CompactionCommit:
    """End ``session_id`` and start the child holding ``rows``."""
    child = checks.child_id(child_session_id)
    child_id = text_in(child)
    user_id, model, title = session
    created = conn.execute(
        f"INSERT INTO {SESSIONS} (id, parent_session_id, user_id, title, model, started_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
        (child_id, text_in(session_id), user_id, title, model, now),
    ).fetchone()
    if created is None:
        raise checks.child_taken(child)
    conn.execute(
        f"UPDATE {SESSIONS} SET ended_at = %s, end_reason = 'compression' "
        "WHERE id = %s AND ended_at IS NULL",
        (now, text_in(session_id)),
    )
    insert_rows(conn, child_id, rows, user_id=user_id, now=now)
    return commit_plan.child_commit(child, len(rows))
