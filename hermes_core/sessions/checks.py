"""The argument checks and refusals every session-store backend gives, in the same words.

Why one module: a caller (the host, the command line, a test) must get the same error for the
same mistake whichever backend holds its sessions, and each check must run before the backend
changes anything. These are pure functions of their arguments and of what the backend has
already read inside its transaction; none of them touches a database.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.sessions.store import SessionRecord

__all__ = [
    "UNDONE",
    "append_arguments",
    "check_abandoned_fresh",
    "check_counters",
    "check_fresh",
    "check_not_undone",
    "check_origins",
    "check_parent",
    "child_id",
    "child_taken",
    "dump_json",
    "newer_schema",
    "no_such_row",
    "no_such_session",
    "origins_count",
    "owned",
]


def no_such_session(session_id: str) -> SessionError:
    """The error for a write to (or a read that needs) a session that does not exist."""
    return SessionError(f"no such session: {session_id!r}")


def no_such_row(session_id: str, seq: int) -> SessionError:
    """The error for a write to a message row that does not exist."""
    return SessionError(f"session {session_id!r} has no message with seq {seq}")


def owned(found: SessionRecord, user_id: str | None) -> SessionRecord:
    """``found`` when it belongs to ``user_id``; else the refusal of ``open_session``."""
    if found.user_id != user_id:
        raise SessionError(
            f"session id {found.id!r} is already used by another user; it is never resumed "
            "under a different one (start a new session id)"
        )
    return found


def check_parent(parent: SessionRecord | None, parent_session_id: str, user_id: str | None) -> None:
    """Refuse a parent that does not exist, or exists for another user (it would join that
    user's lineage)."""
    if parent is None or parent.user_id != user_id:
        raise SessionError(f"parent session {parent_session_id!r} does not exist for this user")


def check_fresh(session_id: str, newest: int, after_seq: int | None) -> None:
    """Raise :class:`StaleSessionError` when ``after_seq`` is given and is not ``newest``."""
    if after_seq is not None and newest != after_seq:
        raise StaleSessionError(
            f"session {session_id!r} was changed by another process (newest row {newest}, "
            f"expected {after_seq}); nothing was changed: reload it and try again"
        )


def check_not_continued(session_id: str, has_child: bool) -> None:
    """A write to a session that a compaction continued in a child session is stale: the
    writer holds an older view, and the conversation goes on in the child (whatever the
    parent's end reason says: a session closed first keeps "closed")."""
    if has_child:
        raise StaleSessionError(
            f"session {session_id!r} was compacted into a child session by another process; "
            "nothing was changed: reload it (follow its newest child) and try again"
        )


#: the end reason of a session an undo abandoned (the conversation went back to an ancestor)
UNDONE: Final = "undone"


def check_not_undone(session_id: str, end_reason: str | None) -> None:
    """A write to a session an undo abandoned is stale: the writer holds a transcript that is
    no longer the conversation's (it went back to an earlier session), and what it wrote there
    would never be resumed."""
    if end_reason == UNDONE:
        raise StaleSessionError(
            f"session {session_id!r} was abandoned by an undo (another process undid a "
            "compaction, and the conversation went back to an earlier session); nothing was "
            "changed: reload it (follow the conversation back) and try again"
        )


def check_abandoned_fresh(
    abandon: Collection[str],
    reasons: Mapping[str, str | None],
    newest: Mapping[str, int],
    expected: Mapping[str, int],
) -> None:
    """An undo abandons live sessions only, each as the undoing caller last knew it
    (``expected``: its newest seq); one that another undo abandoned already, or that took rows
    since, is :class:`StaleSessionError`. A session in ``expected`` that is not abandoned is a
    caller's mistake (:class:`SessionError`)."""
    for sid in expected:
        if sid not in abandon:
            raise SessionError(
                f"restore_view: abandon_after_seq names {sid!r}, which is not in abandon; "
                "nothing was changed"
            )
    for sid in abandon:
        check_not_undone(sid, reasons.get(sid))
        if sid in expected:
            check_fresh(sid, newest.get(sid, 0), expected[sid])


def check_counters(deltas: Mapping[str, int]) -> None:
    """Refuse a counter delta that is not an integer (``True`` included) or a name that is
    not a string."""
    for name, delta in deltas.items():
        if not isinstance(name, str) or isinstance(delta, bool) or not isinstance(delta, int):
            raise SessionError(f"add_counters: {name!r}: {delta!r} is not an integer")


def dump_json(value: Any, what: str) -> str:
    """``value`` as JSON text; :class:`SessionError` naming ``what`` when JSON cannot hold it."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise SessionError(f"{what} holds a value JSON cannot store ({exc})") from None


def append_arguments(
    count: int,
    api_contents: Sequence[str | None] | None,
    token_counts: Sequence[int | None] | None,
) -> tuple[list[str | None], list[int | None]]:
    """``api_contents`` and ``token_counts`` of ``append_messages``, one per message (``None``
    where not given); :class:`SessionError` when a list's length is not the messages'."""
    apis: list[str | None] = [None] * count if api_contents is None else list(api_contents)
    tokens: list[int | None] = [None] * count if token_counts is None else list(token_counts)
    if len(apis) != count or len(tokens) != count:
        raise SessionError(
            f"append_messages: {count} messages but {len(apis)} api_contents and "
            f"{len(tokens)} token_counts"
        )
    return apis, tokens


def origins_count(messages: int, origins: int) -> None:
    """Refuse a compaction whose ``origins`` are not one per message."""
    if origins != messages:
        raise SessionError(f"commit_compaction: {messages} messages but {origins} origins")


def check_origins(session_id: str, origins: Sequence[int | None], active: Collection[int]) -> None:
    """Refuse origins that are not distinct active seqs."""
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


def child_id(child_session_id: str | None) -> str:
    """The child of a compaction that is not in place; :class:`SessionError` when none is
    named."""
    if not child_session_id:
        raise SessionError("commit_compaction: in_place=False needs a child_session_id")
    return child_session_id


def child_taken(child_session_id: str) -> SessionError:
    """The error for a compaction child whose id is already a session's."""
    return SessionError(
        f"commit_compaction: session {child_session_id!r} already exists; nothing was changed"
    )


def newer_schema(store: str, version: int, known: int, kept: str = "database") -> str:
    """The refusal of a store written by a newer hermes-context (``store`` names it, ``kept``
    is what was left unchanged: the file, the database)."""
    return (
        f"{store} has schema version {version}, but this hermes-context knows only up to "
        f"{known}: upgrade hermes-context (the {kept} was not changed)"
    )
