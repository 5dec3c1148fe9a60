"""Opening a session row, and finding where a resumed conversation continues.

A compaction with ``compression.in_place: false`` ends the session and goes on in a child;
a host that resumes the id it knows must land in the newest live descendant, not in the
ended parent (whose rows are the original transcript, kept for search and restore). A child
that an undo abandoned (ended ``"undone"``) is not followed: the conversation went back, so
a host that holds (or resumes) such a child goes back with it, to the nearest ancestor the
undo did not abandon, and on from there to its newest live descendant.
"""

from __future__ import annotations

from typing import Final

from hermes_core.sessions.store import SessionRecord, SessionStore

__all__ = ["UNDONE", "open_record"]

UNDONE: Final = "undone"  # the end reason of a child session an undo abandoned
MAX_CHAIN: Final = 10_000  # a loop in parent links (a damaged store) must not hang a host


def open_record(
    store: SessionStore | None, session_id: str, *, user_id: str | None, model: str | None
) -> SessionRecord:
    """The row the conversation continues in (created when new; in memory without a store)."""
    if store is None:
        return SessionRecord(id=session_id, user_id=user_id)
    record = store.open_session(session_id, user_id=user_id, model=model)
    for _ in range(MAX_CHAIN):
        if record.end_reason != UNDONE or record.parent_session_id is None:
            break
        parent = store.get_session(record.parent_session_id, user_id=record.user_id)
        if parent is None:
            break
        record = parent
    for _ in range(MAX_CHAIN):
        # only a compaction makes children, whatever the parent's end_reason says (a session
        # closed on day 1, resumed and compacted on day 2, still ends "closed")
        child = _newest_child(store, record)
        if child is None:
            break
        record = child
    return record


def _newest_child(store: SessionStore, record: SessionRecord) -> SessionRecord | None:
    children = []
    for sid in store.lineage(record.id):
        found = store.get_session(sid, user_id=record.user_id)
        if found is None or found.parent_session_id != record.id:
            continue
        if found.end_reason != UNDONE:  # abandoned by an undo: the conversation went back
            children.append(found)
    return max(children, key=lambda r: (r.started_at, r.id), default=None)
