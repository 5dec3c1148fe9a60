"""Compaction commits on PostgreSQL: one transaction, so a failure inside it, or a connection
lost inside it, leaves nothing half done, and a retried commit is never doubled; and the cases
both built-in stores share (tests/support/store_cases.py). In place and as a child, archived
rows kept and stale commits refused are the conformance kit's checks
(test_pg_sessions_conformance.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from pg import wait_for
from store_cases import SUMMARY, CompactionCases

from hermes_core.errors import SessionError
from hermes_core.sessions.store import CompactionCommit
from hermes_core.testing.store_kit import seeded, snapshot
from hermes_plugins.postgres.database import DatabaseUnavailable
from hermes_plugins.postgres.sessions import PostgresSessionStore

GATE = 515_151


class TestPostgresCompactionCases(CompactionCases):
    """The shared cases, on the ``store`` fixture of conftest.py."""


def _install_gate(dsn: str, fail: bool = False) -> None:
    """A trigger on the summary's insert: it waits for the test's advisory lock (``GATE``) or,
    with ``fail``, raises: either way the commit's archive UPDATE has already run."""
    body = (
        "RAISE EXCEPTION 'the disk is full (simulated)'"
        if fail
        else f"PERFORM pg_advisory_xact_lock({GATE})"
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION public.summary_gate() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {body}; RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER summary_gate BEFORE INSERT ON hermes.messages FOR EACH ROW "
            "WHEN (NEW.content LIKE '[summary]%') EXECUTE FUNCTION public.summary_gate()"
        )


def test_a_failure_inside_the_commit_rolls_all_of_it_back(
    pg_dsn: str, store: PostgresSessionStore
) -> None:
    messages = seeded(store)
    before = snapshot(store, "s")
    _install_gate(pg_dsn, fail=True)
    for in_place in (True, False):
        with pytest.raises(SessionError, match="disk is full"):
            store.commit_compaction(
                "s", [SUMMARY, messages[5]], [None, 6], in_place=in_place, child_session_id="c"
            )
        assert snapshot(store, "s") == before  # the archive UPDATE was undone too
        parent = store.get_session("s", user_id="u")
        assert parent is not None and parent.ended_at is None
        assert store.get_session("c", user_id="u") is None


def _blocked_backend(dsn: str) -> Callable[[], int | None]:
    def find() -> int | None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND objid = %s",
                (GATE,),
            ).fetchone()
        return int(row[0]) if row else None

    return find


@pytest.mark.parametrize("guarded", [True, False], ids=["after_seq", "unguarded"])
def test_a_connection_lost_inside_the_commit_never_doubles_it(
    pg_dsn: str, store: PostgresSessionStore, guarded: bool
) -> None:
    """The server drops the connection while the commit waits inside its transaction. With
    ``after_seq`` the store retries (the repeat cannot double: it is checked again) and the
    compaction lands once; without, it reports the loss and the store is as it was."""
    messages = seeded(store)
    before = snapshot(store, "s")
    _install_gate(pg_dsn)
    outcome: dict[str, Any] = {}

    def commit() -> None:
        try:
            outcome["result"] = store.commit_compaction(
                "s",
                [SUMMARY, messages[5]],
                [None, 6],
                in_place=True,
                after_seq=6 if guarded else None,
            )
        except Exception as exc:  # asserted below
            outcome["error"] = exc

    with psycopg.connect(pg_dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (GATE,))
        worker = threading.Thread(target=commit)
        worker.start()
        find = _blocked_backend(pg_dsn)
        wait_for(lambda: find() is not None, "the commit waiting inside its transaction")
        holder.execute("SELECT pg_terminate_backend(%s)", (find(),))
        holder.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
        worker.join(60)
    assert not worker.is_alive()
    if guarded:
        assert isinstance(outcome.get("result"), CompactionCommit), outcome
        assert [m.message for m in store.messages("s")] == [SUMMARY, messages[5]]
        every = store.messages("s", include_archived=True)
        assert [m.seq for m in every] == [1, 2, 3, 4, 5, 6, 7]  # one summary row, not two
        assert sum(m.compacted for m in every) == 5
    else:
        assert isinstance(outcome.get("error"), DatabaseUnavailable), outcome
        assert "landed whole or not at all" in str(outcome["error"])
        assert snapshot(store, "s") == before
