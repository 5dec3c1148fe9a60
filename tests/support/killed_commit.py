"""A process that dies inside a compaction commit (for the PostgreSQL crash test)."""

from __future__ import annotations

from typing import Any

PAUSE = "PAUSE-HERE"


def commit_and_hang(dsn: str, session_id: str, user_id: str, ready: Any) -> None:
    """Open the store and commit a compaction whose new summary row makes the insert wait
    (the test's trigger holds it); the test kills this process while it waits."""
    from hermes_plugins.postgres.database import Database
    from hermes_plugins.postgres.sessions import PostgresSessionStore

    store = PostgresSessionStore(Database(dsn, pool_size=1, timeout=600))
    rows = store.messages(session_id)
    keep = rows[-2:]
    messages = [
        {"role": "user", "content": f"[summary] {PAUSE} of the first turns"},
        *(dict(r.message) for r in keep),
    ]
    ready.put("committing")
    store.commit_compaction(
        session_id,
        messages,
        [None, *(r.seq for r in keep)],
        in_place=True,
        after_seq=store.last_seq(session_id),
    )
    ready.put("committed")  # never reached: the test kills the process first
