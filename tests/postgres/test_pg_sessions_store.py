"""The PostgreSQL session store's own promises on the real server: NUL and lone surrogates
stored escaped and given back exactly, the server's clock, jsonb counters, limits past bigint,
the database reference, huge messages; and the cases both built-in stores share
(tests/support/store_cases.py). The protocol itself is held by the conformance kit
(test_pg_sessions_conformance.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from pg import sql
from store_cases import Clocked, RecordCases, closing

from hermes_core.errors import SessionError
from hermes_core.sessions import SessionStore
from hermes_core.testing.store_kit import user
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore
from hermes_plugins.postgres.sessions.rows import text_in, text_out


@pytest.fixture
def clocked(pg_dsn: str) -> Iterator[Clocked]:
    yield from closing(lambda clock: PostgresSessionStore(Database(pg_dsn), clock=clock))


class TestPostgresRecordCases(RecordCases):
    """The cases both built-in stores share, on PostgreSQL."""


def test_it_is_a_session_store_named_postgres(store: PostgresSessionStore) -> None:
    assert isinstance(store, SessionStore)
    assert store.backend == "postgres"
    assert store.trigram is True  # this server has pg_trgm


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
    assert sql(pg_dsn, "SELECT content FROM hermes.messages") == [
        ("binary\x01\x02junk then words",)
    ]
    (hit,) = store.search("junk", user_id=None)
    assert hit.seq == 1 and ">>junk<<" in hit.snippet


def test_times_come_from_the_server_clock_by_default(pg_dsn: str) -> None:
    store = PostgresSessionStore(Database(pg_dsn))
    record = store.open_session("s", user_id=None)
    ((server_now,),) = sql(pg_dsn, "SELECT extract(epoch FROM clock_timestamp())::float8")
    assert 0 < record.started_at <= float(server_now)  # type: ignore[arg-type]
    store.close()


def test_a_huge_list_limit_is_capped_not_an_overflow(store: PostgresSessionStore) -> None:
    for n in range(3):
        store.open_session(f"s{n}", user_id="alice")
    assert len(store.list_sessions(user_id="alice", limit=10**30)) == 3  # past bigint


def test_counters_are_a_jsonb_object(pg_dsn: str, store: PostgresSessionStore) -> None:
    store.open_session("s", user_id=None)
    store.add_counters("s", {"messages": 2})
    assert sql(pg_dsn, "SELECT jsonb_typeof(counters) FROM hermes.sessions") == [("object",)]


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
