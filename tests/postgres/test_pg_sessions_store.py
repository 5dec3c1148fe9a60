"""The PostgreSQL session store keeps the SQLite store's promises on the real server:
sessions per user, lossless messages (NUL included), seqs, state, counters, lineage, and
clear errors that change nothing."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator

import psycopg
import pytest

from hermes_core.errors import SessionError
from hermes_core.sessions import SessionStore
from hermes_core.testing.store_kit import (
    ROUND_TRIP_MESSAGES,
    assistant,
    canonical,
    snapshot,
    user,
)
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore
from hermes_plugins.postgres.sessions.rows import text_in, text_out


@pytest.fixture
def store(pg_dsn: str) -> Iterator[PostgresSessionStore]:
    opened = PostgresSessionStore(Database(pg_dsn))
    yield opened
    opened.close()


def raw(dsn: str, query: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Rows straight from the server, through a connection of the test's own."""
    with psycopg.connect(dsn) as conn:
        return conn.execute(query, params).fetchall()


def test_it_is_a_session_store_named_postgres(store: PostgresSessionStore) -> None:
    assert isinstance(store, SessionStore)
    assert store.backend == "postgres"
    assert store.trigram is True  # this server has pg_trgm


def test_every_message_shape_round_trips_exactly(pg_dsn: str, store: PostgresSessionStore) -> None:
    store.open_session("s", user_id=None)
    shapes = list(ROUND_TRIP_MESSAGES)
    assert store.append_messages("s", shapes) == list(range(1, len(shapes) + 1))
    again = PostgresSessionStore(Database(pg_dsn))
    for reader in (store, again):
        stored = [m.message for m in reader.messages("s")]
        assert [canonical(m) for m in stored] == [canonical(m) for m in shapes]
        for original, row in zip(shapes, stored, strict=True):
            assert list(row) == list(original)  # key order too
    again.close()


@pytest.mark.parametrize(
    "text",
    ["nul \x00 inside", "\x00", "\x00\x00\x01\x01", "the escape \x01 itself", "\x01\x02", "\ud800"],
)
def test_nul_and_other_unstorable_text_round_trips_everywhere(
    store: PostgresSessionStore, text: str
) -> None:
    """PostgreSQL text cannot hold U+0000: ids, user ids, titles, models, content, tool
    fields, api content, counter names, state and the end reason all come back exactly."""
    session_id, owner = f"s{text}", f"u{text}"
    message = {"role": f"user{text}", "content": text, "name": text, "tool_call_id": text}
    created = store.open_session(session_id, user_id=owner, title=text, model=text)
    assert (created.id, created.user_id, created.title, created.model) == (
        session_id,
        owner,
        text,
        text,
    )
    store.append_messages(session_id, [message], api_contents=[text], state={"k": text})
    store.add_counters(session_id, {f"c{text}": 2})
    store.end_session(session_id, text)
    (row,) = store.messages(session_id)
    assert (dict(row.message), row.api_content, row.session_id) == (message, text, session_id)
    record = store.get_session(session_id, user_id=owner)
    assert record is not None
    assert (record.end_reason, dict(record.state), dict(record.counters)) == (
        text,
        {"k": text},
        {f"c{text}": 2},
    )
    assert store.list_sessions(user_id=owner) == [record]
    assert store.get_session(session_id, user_id=f"u{text}x") is None


def test_the_escape_is_one_to_one() -> None:
    samples = ["", "plain", "\x00", "\x01", "\x01\x02", "\x01u0041", "a\x00b\x01c\ud800d", "\udfff"]
    escaped = [text_in(s) for s in samples]
    assert len(set(escaped)) == len(samples)
    assert [text_out(e) for e in escaped] == samples
    assert all("\x00" not in (e or "") for e in escaped)
    assert text_in("plain") == "plain"  # the common case is stored as it is


def test_nul_text_is_stored_escaped_and_searchable(
    pg_dsn: str, store: PostgresSessionStore
) -> None:
    store.open_session("s", user_id=None)
    store.append_messages("s", [user("binary\x00junk then words")])
    assert raw(pg_dsn, "SELECT content FROM hermes.messages") == [
        ("binary\x01\x02junk then words",)
    ]
    (hit,) = store.search("junk", user_id=None)
    assert hit.seq == 1 and ">>junk<<" in hit.snippet


def test_what_json_cannot_hold_is_refused_and_nothing_is_written(
    store: PostgresSessionStore,
) -> None:
    store.open_session("s", user_id=None)
    with pytest.raises(SessionError, match="message 1"):
        store.append_messages("s", [user("fine"), user("bad", when=object())])
    with pytest.raises(SessionError, match="not a dict"):
        store.append_messages("s", ["just a string"])  # type: ignore[list-item]
    with pytest.raises(SessionError, match="key that is not a string"):
        store.append_messages("s", [{1: "x"}])  # type: ignore[dict-item]
    assert store.messages("s") == []


def test_seqs_grow_and_are_never_reused(store: PostgresSessionStore) -> None:
    store.open_session("s", user_id=None)
    assert store.last_seq("s") == 0
    assert store.append_messages("s", [user("a"), assistant("b")]) == [1, 2]
    assert store.append_messages("s", []) == []
    assert store.append_messages("s", [user("c")]) == [3]
    store.commit_compaction("s", [user("summary")], [None], in_place=True)
    assert store.append_messages("s", [user("d")]) == [5]
    assert [m.seq for m in store.messages("s")] == [4, 5]
    assert [m.seq for m in store.messages("s", include_archived=True)] == [1, 2, 3, 4, 5]
    assert store.last_seq("s") == 5


def test_api_contents_token_counts_timestamps_and_state(pg_dsn: str) -> None:
    ticks = iter(range(100, 200))
    store = PostgresSessionStore(Database(pg_dsn), clock=lambda: float(next(ticks)))
    record = store.open_session("s", user_id="u1", model="m1", title="first")
    assert record.started_at == 100.0
    store.append_messages(
        "s",
        [user("q"), assistant("a")],
        api_contents=["q + recall", None],
        token_counts=[3, 2**40],
        state={"after": "append"},
    )
    rows = store.messages("s")
    assert [(r.api_content, r.token_count, r.timestamp) for r in rows] == [
        ("q + recall", 3, 101.0),
        (None, 2**40, 101.0),
    ]
    saved = store.get_session("s", user_id="u1")
    assert saved is not None and dict(saved.state) == {"after": "append"}
    store.set_api_content("s", 2, "a, as sent")
    store.set_api_content("s", 1, None)
    assert [r.api_content for r in store.messages("s")] == [None, "a, as sent"]
    with pytest.raises(SessionError, match="no message with seq 9"):
        store.set_api_content("s", 9, "x")
    with pytest.raises(SessionError, match="2 messages but 1 api_contents"):
        store.append_messages("s", [user("x"), user("y")], api_contents=["x"])
    assert len(store.messages("s")) == 2
    store.close()


def test_times_come_from_the_server_clock_by_default(pg_dsn: str) -> None:
    store = PostgresSessionStore(Database(pg_dsn))
    record = store.open_session("s", user_id=None)
    ((server_now,),) = raw(pg_dsn, "SELECT extract(epoch FROM clock_timestamp())::float8")
    assert 0 < record.started_at <= float(server_now)  # type: ignore[arg-type]
    store.close()


def test_sessions_belong_to_one_user(store: PostgresSessionStore) -> None:
    first = store.open_session("s", user_id="alice", model="m", title="t")
    assert store.open_session("s", user_id="alice", model="other") == first  # resumed
    for other in ("bob", None, "", "Alice"):
        with pytest.raises(SessionError, match="another user"):
            store.open_session("s", user_id=other)
        assert store.get_session("s", user_id=other) is None
    assert store.get_session("s", user_id="alice") == first
    assert store.get_session("missing", user_id="alice") is None
    store.open_session("anon", user_id=None)
    with pytest.raises(SessionError, match="another user"):
        store.open_session("anon", user_id="alice")


def test_list_sessions_is_per_user_and_newest_first(pg_dsn: str) -> None:
    ticks = iter([5.0, 1.0, 5.0, 2.0, 3.0, 5.0, 4.0])  # equal times: creation order decides
    store = PostgresSessionStore(Database(pg_dsn), clock=lambda: next(ticks))
    for n, owner in enumerate(["alice", None, "alice", "bob", None, "alice", ""]):
        store.open_session(f"s{n}", user_id=owner)
    assert [r.id for r in store.list_sessions(user_id="alice")] == ["s5", "s2", "s0"]
    assert [r.id for r in store.list_sessions(user_id=None)] == ["s4", "s1"]
    assert [r.id for r in store.list_sessions(user_id="")] == ["s6"]
    assert [r.id for r in store.list_sessions(user_id="bob")] == ["s3"]
    assert [r.id for r in store.list_sessions(user_id="carol")] == []
    assert [r.id for r in store.list_sessions(user_id="alice", limit=2)] == ["s5", "s2"]
    assert store.list_sessions(user_id="alice", limit=-1) == []
    assert len(store.list_sessions(user_id="alice", limit=10**30)) == 3
    store.close()


def test_end_session_keeps_the_first_reason(store: PostgresSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.end_session("s", "user_exit")
    first = store.get_session("s", user_id=None)
    store.end_session("s", "timeout")
    again = store.get_session("s", user_id=None)
    assert first is not None and again is not None and first.ended_at is not None
    assert (again.end_reason, again.ended_at) == ("user_exit", first.ended_at)
    with pytest.raises(SessionError, match="no such session"):
        store.end_session("missing", "x")


def test_state_is_replaced_whole_and_counters_add_up(
    pg_dsn: str, store: PostgresSessionStore
) -> None:
    store.open_session("s", user_id=None)
    store.save_state("s", {"guard": {"ineffective": 1}, "summary": "previous"})
    state = {"ratio": 3.9, "n": float("inf"), "z": "last", "a": "\x00 first"}
    store.save_state("s", state)
    store.add_counters("s", {"messages": 2, "compactions": 1})
    store.add_counters("s", {"messages": 3, "prompt_tokens": 1200, "huge": 2**70})
    record = store.get_session("s", user_id=None)
    assert record is not None
    assert canonical(record.state) == canonical(state) and list(record.state) == list(state)
    assert record.counters == {
        "messages": 5,
        "compactions": 1,
        "prompt_tokens": 1200,
        "huge": 2**70,
    }
    assert raw(pg_dsn, "SELECT jsonb_typeof(counters) FROM hermes.sessions") == [("object",)]
    with pytest.raises(SessionError, match="not an integer"):
        store.add_counters("s", {"messages": 1.5})  # type: ignore[dict-item]
    with pytest.raises(SessionError, match="not an integer"):
        store.add_counters("s", {"messages": True})
    with pytest.raises(SessionError, match="JSON cannot store"):
        store.save_state("s", {"bad": object()})
    with pytest.raises(SessionError, match="no such session"):
        store.add_counters("missing", {"messages": 1})
    with pytest.raises(SessionError, match="no such session"):
        store.save_state("missing", {})
    assert store.get_session("s", user_id=None) == record


def test_lineage_walks_both_ways(store: PostgresSessionStore) -> None:
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


def test_a_parent_must_exist_for_the_same_user(store: PostgresSessionStore) -> None:
    store.open_session("p", user_id="alice")
    for owner in ("bob", None):
        with pytest.raises(SessionError, match="parent session 'p' does not exist"):
            store.open_session("c", user_id=owner, parent_session_id="p")
    with pytest.raises(SessionError, match="parent session 'nope' does not exist"):
        store.open_session("c", user_id="alice", parent_session_id="nope")
    assert store.get_session("c", user_id="bob") is None
    assert store.get_session("c", user_id="alice") is None


def test_writes_to_an_unknown_session_are_refused(store: PostgresSessionStore) -> None:
    with pytest.raises(SessionError, match="no such session"):
        store.append_messages("missing", [user("x")])
    with pytest.raises(SessionError, match="no such session"):
        store.commit_compaction("missing", [user("x")], [None], in_place=True)
    assert store.messages("missing") == []
    assert store.last_seq("missing") == 0


def test_close_releases_the_database_once_and_then_calls_fail_clearly(pg_dsn: str) -> None:
    database = Database(pg_dsn)
    database.acquire()  # another user of the pool (the plugin's own reference)
    store = PostgresSessionStore(database)
    store.open_session("s", user_id=None)
    store.close()
    store.close()
    with pytest.raises(SessionError, match="is closed"):
        store.messages("s")
    # the other user still has the pool: one release per store, not two
    other = PostgresSessionStore(database.acquire())
    assert other.get_session("s", user_id=None) is not None
    other.close()
    database.release()


def test_threads_share_one_store(store: PostgresSessionStore) -> None:
    store.open_session("s", user_id=None)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for n in range(20):
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
    assert [r.seq for r in rows] == list(range(1, 121))
    assert {r.message["content"] for r in rows} == {
        f"thread {w} message {n}" for w in range(6) for n in range(20)
    }
    assert snapshot(store, "s")[0][0] == 1


def test_huge_messages_are_stored_whole_and_their_start_indexed(
    store: PostgresSessionStore,
) -> None:
    """A tsvector cannot exceed 1 MB: the word index reads a bounded prefix of each column
    (50,000 distinct words of 12 bytes each in content and arguments would not fit), and the
    row keeps everything."""

    def distinct_words(first: int) -> str:  # 50,000 words of three 4-byte characters
        alphabet = [chr(first + n) for n in range(40)]
        return " ".join(
            map("".join, itertools.islice(itertools.product(alphabet, repeat=3), 50_000))
        )

    distinct, others = distinct_words(0x20000), distinct_words(0x21000)
    huge = "needle " + "x" * 10_000_000
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": others}}
    store.open_session("s", user_id=None)
    store.append_messages("s", [user(distinct, tool_calls=[call]), user(huge)])
    rows = store.messages("s")
    assert [r.message["content"] for r in rows] == [distinct, huge]
    assert [h.seq for h in store.search("needle", user_id=None)] == [2]
