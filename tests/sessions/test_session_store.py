"""The SQLite store keeps what the ``SessionStore`` protocol promises: sessions per user,
lossless messages, seqs, state, counters, lineage, and clear errors that change nothing."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from sessions_support import SHAPES, assistant, raw, snapshot, user

from hermes_core.errors import SessionError
from hermes_core.sessions import SessionStore
from hermes_core.sessions.sqlite import SQLiteSessionStore


def test_it_is_a_session_store_named_sqlite(store: SQLiteSessionStore) -> None:
    assert isinstance(store, SessionStore)
    assert store.backend == "sqlite"
    assert store.fts is True  # this SQLite (3.40) has FTS5 and the trigram tokenizer


def test_the_file_is_created_0600_with_its_parents(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.db"
    store = SQLiteSessionStore(path)
    store.open_session("s", user_id=None)
    store.append_messages("s", [user("hi")])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for sidecar in (path.with_name("state.db-wal"), path.with_name("state.db-shm")):
        if sidecar.exists():
            assert stat.S_IMODE(sidecar.stat().st_mode) & 0o077 == 0
    assert raw(path, "PRAGMA journal_mode") == [("wal",)]
    store.close()


def test_every_message_shape_round_trips_exactly(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    seqs = store.append_messages("s", SHAPES)
    assert seqs == list(range(1, len(SHAPES) + 1))
    stored = store.messages("s")
    assert [m.message for m in stored] == SHAPES
    for original, row in zip(SHAPES, stored, strict=True):
        assert list(row.message) == list(original)  # key order too
    store.close()
    reopened = SQLiteSessionStore(store.path)
    assert [m.message for m in reopened.messages("s")] == SHAPES
    reopened.close()


def test_the_content_column_stays_searchable_text(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.append_messages("s", SHAPES[5:6])  # list content: text parts and an image
    assert raw(store.path, "SELECT content FROM messages") == [("look at this\nand this",)]


def test_what_json_cannot_hold_is_refused_and_nothing_is_written(
    store: SQLiteSessionStore,
) -> None:
    store.open_session("s", user_id=None)
    with pytest.raises(SessionError, match="message 1"):
        store.append_messages("s", [user("fine"), user("bad", when=object())])
    with pytest.raises(SessionError, match="not a dict"):
        store.append_messages("s", ["just a string"])  # type: ignore[list-item]
    with pytest.raises(SessionError, match="key that is not a string"):
        store.append_messages("s", [{1: "x"}])  # type: ignore[dict-item]
    assert store.messages("s") == []


def test_seqs_grow_and_are_never_reused(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    assert store.append_messages("s", [user("a"), assistant("b")]) == [1, 2]
    assert store.append_messages("s", []) == []
    assert store.append_messages("s", [user("c")]) == [3]
    store.commit_compaction("s", [user("summary")], [None], in_place=True)
    assert store.append_messages("s", [user("d")]) == [5]
    assert [m.seq for m in store.messages("s")] == [4, 5]
    assert [m.seq for m in store.messages("s", include_archived=True)] == [1, 2, 3, 4, 5]


def test_api_contents_token_counts_and_timestamps(tmp_path: Path) -> None:
    ticks = iter(range(100, 200))
    store = SQLiteSessionStore(tmp_path / "state.db", clock=lambda: float(next(ticks)))
    record = store.open_session("s", user_id="u1", model="m1", title="first")
    assert record.started_at == 100.0
    store.append_messages(
        "s", [user("q"), assistant("a")], api_contents=["q + recall", None], token_counts=[3, 7]
    )
    rows = store.messages("s")
    assert [(r.api_content, r.token_count, r.timestamp) for r in rows] == [
        ("q + recall", 3, 101.0),
        (None, 7, 101.0),
    ]
    store.set_api_content("s", 2, "a, as sent")
    store.set_api_content("s", 1, None)
    assert [r.api_content for r in store.messages("s")] == [None, "a, as sent"]
    with pytest.raises(SessionError, match="no message with seq 9"):
        store.set_api_content("s", 9, "x")
    with pytest.raises(SessionError, match="2 messages but 1 api_contents"):
        store.append_messages("s", [user("x"), user("y")], api_contents=["x"])
    store.close()


def test_sessions_belong_to_one_user(store: SQLiteSessionStore) -> None:
    first = store.open_session("s", user_id="alice", model="m", title="t")
    assert store.open_session("s", user_id="alice") == first  # resumed, unchanged
    for other in ("bob", None):
        with pytest.raises(SessionError, match="another user"):
            store.open_session("s", user_id=other)
        assert store.get_session("s", user_id=other) is None
    assert store.get_session("s", user_id="alice") == first
    assert store.get_session("missing", user_id="alice") is None
    store.open_session("anon", user_id=None)
    with pytest.raises(SessionError, match="another user"):
        store.open_session("anon", user_id="alice")


def test_list_sessions_is_per_user_and_newest_first(tmp_path: Path) -> None:
    ticks = iter(range(1000))
    store = SQLiteSessionStore(tmp_path / "state.db", clock=lambda: float(next(ticks)))
    for n, owner in enumerate(["alice", None, "alice", "bob", None, "alice"]):
        store.open_session(f"s{n}", user_id=owner)
    assert [r.id for r in store.list_sessions(user_id="alice")] == ["s5", "s2", "s0"]
    assert [r.id for r in store.list_sessions(user_id=None)] == ["s4", "s1"]
    assert [r.id for r in store.list_sessions(user_id="bob")] == ["s3"]
    assert [r.id for r in store.list_sessions(user_id="carol")] == []
    assert [r.id for r in store.list_sessions(user_id="alice", limit=2)] == ["s5", "s2"]
    store.close()


def test_end_session_keeps_the_first_reason(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.end_session("s", "user_exit")
    first = store.get_session("s", user_id=None)
    store.end_session("s", "timeout")
    again = store.get_session("s", user_id=None)
    assert first is not None and again is not None
    assert (again.end_reason, again.ended_at) == ("user_exit", first.ended_at)
    with pytest.raises(SessionError, match="no such session"):
        store.end_session("missing", "x")


def test_state_is_replaced_whole_and_counters_add_up(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.save_state("s", {"guard": {"ineffective": 1}, "summary": "previous"})
    store.save_state("s", {"ratio": 3.9})
    store.add_counters("s", {"messages": 2, "compactions": 1})
    store.add_counters("s", {"messages": 3, "prompt_tokens": 1200})
    record = store.get_session("s", user_id=None)
    assert record is not None
    assert record.state == {"ratio": 3.9}
    assert record.counters == {"messages": 5, "compactions": 1, "prompt_tokens": 1200}
    with pytest.raises(SessionError, match="not an integer"):
        store.add_counters("s", {"messages": 1.5})  # type: ignore[dict-item]
    with pytest.raises(SessionError, match="JSON cannot store"):
        store.save_state("s", {"bad": object()})
    with pytest.raises(SessionError, match="no such session"):
        store.add_counters("missing", {"messages": 1})
    with pytest.raises(SessionError, match="no such session"):
        store.save_state("missing", {})
    assert store.get_session("s", user_id=None) == record


def test_lineage_walks_both_ways(store: SQLiteSessionStore) -> None:
    store.open_session("root", user_id="u")
    store.open_session("child", user_id="u", parent_session_id="root")
    store.open_session("grandchild", user_id="u", parent_session_id="child")
    store.open_session("sibling", user_id="u", parent_session_id="root")
    store.open_session("stranger", user_id="u")
    assert store.lineage("grandchild") == ["root", "child", "grandchild"]
    assert store.lineage("root") == ["root", "child", "sibling", "grandchild"]
    assert store.lineage("child") == ["root", "child", "grandchild"]
    assert store.lineage("stranger") == ["stranger"]
    assert store.lineage("unknown") == ["unknown"]


def test_a_parent_must_exist_for_the_same_user(store: SQLiteSessionStore) -> None:
    store.open_session("p", user_id="alice")
    for owner in ("bob", None):
        with pytest.raises(SessionError, match="parent session 'p' does not exist"):
            store.open_session("c", user_id=owner, parent_session_id="p")
    assert store.get_session("c", user_id="bob") is None


def test_writes_to_an_unknown_session_are_refused(store: SQLiteSessionStore) -> None:
    with pytest.raises(SessionError, match="no such session"):
        store.append_messages("missing", [user("x")])
    with pytest.raises(SessionError, match="no such session"):
        store.commit_compaction("missing", [user("x")], [None], in_place=True)
    assert store.messages("missing") == []


def test_close_is_idempotent_and_then_calls_fail_clearly(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.close()
    store.close()
    with pytest.raises(SessionError, match="is closed"):
        store.messages("s")


def test_threads_share_one_store(store: SQLiteSessionStore) -> None:
    store.open_session("s", user_id=None)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for n in range(25):
                store.append_messages("s", [user(f"thread {worker} message {n}")])
                store.search(f"thread {worker}", user_id=None)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    rows = store.messages("s")
    assert [r.seq for r in rows] == list(range(1, 151))
    assert {r.message["content"] for r in rows} == {
        f"thread {w} message {n}" for w in range(6) for n in range(25)
    }


def test_a_store_opened_before_fork_is_usable_in_the_parent_after(
    store: SQLiteSessionStore,
) -> None:
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    store.open_session("s", user_id=None)
    pid = os.fork()
    if pid == 0:  # the child: the inherited connection is dropped, a new one opened
        try:
            store.append_messages("s", [user("from the child")])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    store.append_messages("s", [user("from the parent")])
    assert [m.message["content"] for m in store.messages("s")] == [
        "from the child",
        "from the parent",
    ]
    assert snapshot(store, "s")[0][0] == 1
