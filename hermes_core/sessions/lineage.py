"""A session's ancestors, as the user who owns them sees them.

Why its own module: a compaction with ``in_place: false`` continues in a child, so one
conversation's rows live in a chain of sessions. A stand-in names a row by its seq and the
depth (number of ancestors) of the session that holds it; the compaction that writes the
reference and the ``session_recall`` tool that reads it must count that depth the same way.
"""

from __future__ import annotations

from typing import Final

from hermes_core.sessions.store import SessionStore

__all__ = ["MAX_DEPTH", "ancestry"]

#: a parent chain longer than this is broken (a cycle written by hand), not a conversation
MAX_DEPTH: Final = 10_000


def ancestry(store: SessionStore, session_id: str, *, user_id: str | None) -> list[str]:
    """``[root, ..., session_id]``: the parent chain of a session ``user_id`` owns, oldest
    first (so a session's depth is its index); ``[]`` when the session is not theirs. A parent
    of another user ends the chain there: it is not part of this user's conversation."""
    chain: list[str] = []
    seen: set[str] = set()
    current: str | None = session_id
    while current is not None and current not in seen and len(chain) <= MAX_DEPTH:
        record = store.get_session(current, user_id=user_id)
        if record is None:
            break
        chain.append(current)
        seen.add(current)
        current = record.parent_session_id
    return chain[::-1]
