"""The session store: every message of every session, searchable, per user (spec 40 §1).

:mod:`~hermes_core.sessions.store` is the seam (the :class:`SessionStore` protocol and its
records); :mod:`~hermes_core.sessions.sqlite` the built-in SQLite backend. What every backend
does the same way, without SQL, is in :mod:`~hermes_core.sessions.checks` (argument checks
and refusals), :mod:`~hermes_core.sessions.records` (records and search hits) and
:mod:`~hermes_core.sessions.commit_plan` (the compaction commit's rules). A host reaches its
store through :attr:`hermes_core.host.Hermes.session_store`.
"""

from __future__ import annotations

from hermes_core.sessions.store import (
    CompactionCommit,
    SearchHit,
    SessionRecord,
    SessionStore,
    SnippetLine,
    StoredMessage,
    UndoableSessionStore,
)

__all__ = [
    "CompactionCommit",
    "SearchHit",
    "SessionRecord",
    "SessionStore",
    "SnippetLine",
    "StoredMessage",
    "UndoableSessionStore",
]
