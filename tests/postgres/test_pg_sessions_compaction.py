"""Compaction commits on PostgreSQL: in place and as a child, archived rows kept, and one
transaction: a failure inside it, or a connection lost inside it, leaves nothing half done,
and a retried commit is never doubled."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.sessions.store import CompactionCommit
from hermes_core.testing.store_kit import seeded, snapshot, user
from hermes_plugins.postgres.database import Database, DatabaseUnavailable
from hermes_plugins.postgres.sessions import PostgresSessionStore

SUMMARY = user("[summary] the user fixed the flaky test", _compressed_summary=True)
GATE = 515_151


@pytest.fixture
def store(pg_dsn: str) -> Iterator[PostgresSessionStore]:
    opened = PostgresSessionStore(Database(pg_dsn, timeout=30))
    yield opened
    opened.close()


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Poll a condition the server reports (not a guess at how long something takes)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.01)


def test_in_place_archives_the_replaced_rows_and_orders_the_new_view(
    store: PostgresSessionStore,
) -> None:
    messages = seeded(store)
    new_view = [messages[0], SUMMARY, messages[5], messages[4]]
    result = store.commit_compaction("s", new_view, [1, None, 6, 5], in_place=True)
    assert (result.session_id, result.seqs, result.archived) == ("s", (1, 7, 6, 5), 3)
    active = store.messages("s")
    assert [m.message for m in active] == new_view
    assert [m.seq for m in active] == [1, 7, 6, 5]
    assert [m.token_count for m in active] == [1, None, 6, 5]
    everything = store.messages("s", include_archived=True)
    assert [m.seq for m in everything] == [1, 2, 3, 4, 5, 6, 7]
    assert [(m.seq, m.active, m.compacted) for m in everything if not m.active] == [
        (2, False, True),
        (3, False, True),
        (4, False, True),
    ]
    assert [m.message for m in everything[:6]] == messages


def test_appends_after_a_compaction_land_at_the_end_of_the_view(
    store: PostgresSessionStore,
) -> None:
    messages = seeded(store)
    store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
    store.append_messages("s", [user("done")])
    assert [m.message["content"] for m in store.messages("s")] == [
        SUMMARY["content"],
        "fix it",
        "done",
    ]
    second = user("[summary 2]")
    store.commit_compaction("s", [second], [None], in_place=True)
    assert [m.message for m in store.messages("s")] == [second]
    archived = [m for m in store.messages("s", include_archived=True) if m.compacted]
    assert len(archived) == 8  # 5 + summary + "fix it" + "done"


def test_as_a_child_the_parent_ends_and_the_child_holds_the_new_view(
    store: PostgresSessionStore,
) -> None:
    messages = seeded(store)
    before = snapshot(store, "s")
    new_view = [messages[0], SUMMARY, messages[5]]
    result = store.commit_compaction(
        "s", new_view, [1, None, 6], in_place=False, child_session_id="s-2"
    )
    assert (result.session_id, result.seqs, result.archived) == ("s-2", (1, 2, 3), 0)
    parent = store.get_session("s", user_id="u")
    child = store.get_session("s-2", user_id="u")
    assert parent is not None and child is not None
    assert parent.end_reason == "compression" and parent.ended_at is not None
    assert (child.parent_session_id, child.user_id, child.model, child.title) == (
        "s",
        "u",
        "m",
        "flaky",
    )
    assert child.ended_at is None
    assert snapshot(store, "s") == before
    rows = store.messages("s-2")
    assert [m.message for m in rows] == new_view
    assert [m.token_count for m in rows] == [1, None, 6]
    assert store.lineage("s-2") == ["s", "s-2"]
    assert store.get_session("s-2", user_id=None) is None
    assert [h.session_id for h in store.search("clock", user_id="u", limit=10)] == ["s"]


def test_a_child_needs_a_new_id(store: PostgresSessionStore) -> None:
    messages = seeded(store)
    store.open_session("taken", user_id="u")
    for child in (None, "", "taken", "s"):
        with pytest.raises(SessionError):
            store.commit_compaction("s", [messages[5]], [6], in_place=False, child_session_id=child)
    parent = store.get_session("s", user_id="u")
    assert parent is not None and parent.ended_at is None
    assert store.messages("taken") == []


@pytest.mark.parametrize(
    ("origins", "error"),
    [
        ([1, None, 99], "origins\\[2\\] = 99 is not an active row"),
        ([1, None, 1], "names seq 1 twice"),
        ([1, None], "3 messages but 2 origins"),
        ([1, None, "6"], "is not an active row"),
        ([1, None, True], "is not an active row"),
    ],
)
@pytest.mark.parametrize("in_place", [True, False])
def test_a_refused_commit_leaves_the_store_unchanged(
    store: PostgresSessionStore, origins: list[object], error: str, in_place: bool
) -> None:
    messages = seeded(store)
    before = snapshot(store, "s")
    sessions_before = store.list_sessions(user_id="u")
    with pytest.raises(SessionError, match=error):
        store.commit_compaction(
            "s",
            [messages[0], SUMMARY, messages[5]],
            origins,  # type: ignore[arg-type]
            in_place=in_place,
            child_session_id="child",
        )
    assert snapshot(store, "s") == before
    assert store.list_sessions(user_id="u") == sessions_before


def test_an_archived_row_cannot_be_an_origin_and_a_changed_one_is_new(
    store: PostgresSessionStore,
) -> None:
    messages = seeded(store)
    store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
    before = snapshot(store, "s")
    with pytest.raises(SessionError, match="origins\\[0\\] = 2 is not an active row"):
        store.commit_compaction("s", [messages[1]], [2], in_place=True)
    assert snapshot(store, "s") == before
    edited = {**messages[5], "content": "fix it, please"}
    result = store.commit_compaction("s", [SUMMARY, edited], [7, 6], in_place=True)
    assert result.seqs == (7, 8)
    assert [m.message for m in store.messages("s")] == [SUMMARY, edited]


def test_a_stale_compaction_changes_nothing(pg_dsn: str, store: PostgresSessionStore) -> None:
    messages = seeded(store)
    other = PostgresSessionStore(Database(pg_dsn))  # another host
    other.append_messages("s", [user("written elsewhere")], after_seq=6)
    before = snapshot(store, "s")
    for in_place in (True, False):
        with pytest.raises(StaleSessionError, match="newest row 7, expected 6"):
            store.commit_compaction(
                "s", [SUMMARY], [None], in_place=in_place, child_session_id="c", after_seq=6
            )
    assert snapshot(store, "s") == before
    assert store.get_session("c", user_id="u") is None
    assert store.commit_compaction(
        "s", [SUMMARY, messages[5]], [None, 6], in_place=True, after_seq=7
    )
    other.close()


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
