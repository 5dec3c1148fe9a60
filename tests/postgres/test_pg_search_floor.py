"""The search statement bounded by id (the floor widened until the caller's newest matches all
lie above it) answers exactly what the unbounded statement answers: the same hits, scores,
snippets and context, in the same order, for dense and sparse users, rare and common words,
excluded sessions and CJK; and the floor really is widened, more than once, on the way."""

from __future__ import annotations

from typing import Any, cast

import psycopg
import pytest

from hermes_core.sessions.store import SearchHit
from hermes_core.testing.store_kit import assistant, user
from hermes_plugins.postgres.sessions import PostgresSessionStore, search
from hermes_plugins.postgres.sessions.search import run_search

WINDOW = 5
#: (user, words) of each of 300 sessions of 10 messages: alice holds most of them
OWNERS = ["alice", "alice", "bob", "alice", None, "alice", "alice", "carol", "alice", "alice"]


class Counting:
    """A connection that counts the search statements (one per floor) run through it."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.statements = 0

    def execute(self, query: str, params: Any = None) -> psycopg.Cursor[Any]:
        self.statements += "WITH matched" in query
        return self.conn.execute(query, params)


def _text(n: int) -> str:
    words = [f"filler{n % 7}", "alpha" if n % 3 == 0 else "other"]
    if n % 97 == 0:
        words.append("beta")
    if n < 40:
        words.append("gamma 迁移数据")  # only in the oldest rows
    if n % 11 == 0:
        words.append("alpha alpha")  # denser rows rank higher
    return " ".join(words)


@pytest.fixture
def filled(store: PostgresSessionStore) -> PostgresSessionStore:
    for s in range(300):
        sid = f"s{s:03d}"
        store.open_session(sid, user_id=OWNERS[s % len(OWNERS)], title=f"title {s}")
        rows = [(user if n % 2 == 0 else assistant)(_text(s * 10 + n)) for n in range(10)]
        store.append_messages(sid, rows)
    return store


def _search(
    conn: psycopg.Connection[Any], query: str, who: str | None, exclude: tuple[str, ...]
) -> tuple[list[SearchHit], int]:
    counting = Counting(conn)
    hits = run_search(
        cast(psycopg.Connection[Any], counting),
        query,
        user_id=who,
        limit=50,
        exclude_sessions=exclude,
    )
    return hits, counting.statements


def test_the_bounded_statement_returns_what_the_unbounded_one_does(
    pg_dsn: str, filled: PostgresSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_RANKED", WINDOW)
    cases = [
        (query, who, exclude)
        for query in ("alpha", "beta", "gamma", "alpha other", "迁移数据")
        for who in ("alice", "bob", "carol", None, "nobody")
        for exclude in ((), ("s298", "s295", "s002"))
    ]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        # without statistics (the first step walks the primary key), then with them
        for analysed in (False, True):
            if analysed:
                conn.execute("ANALYZE hermes.messages")
            known = conn.execute(
                "SELECT count(*) FROM pg_stats WHERE schemaname = 'hermes' "
                "AND tablename = 'messages' AND attname = 'search'"
            ).fetchone()
            assert known == (int(analysed),)
            for query, who, exclude in cases:
                monkeypatch.setattr(search, "FIRST_SPAN", 10**9)  # floor 0 at once
                unbounded, statements = _search(conn, query, who, exclude)
                assert statements == 1
                monkeypatch.setattr(search, "FIRST_SPAN", 2)  # 10 ids: widened from there
                bounded, _ = _search(conn, query, who, exclude)
                assert bounded == unbounded, (query, who, exclude, analysed)


def test_the_floor_widens_several_times_and_stops_when_the_window_is_full(
    pg_dsn: str, filled: PostgresSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "MAX_RANKED", WINDOW)
    monkeypatch.setattr(search, "FIRST_SPAN", 2)
    with psycopg.connect(pg_dsn) as conn:
        hits, statements = _search(conn, "other", "alice", ())
        assert statements == 1  # dense: the newest 10 ids hold alice's newest 5 matches
        assert sum(h.matches for h in hits) == WINDOW
        hits, statements = _search(conn, "gamma", "alice", ())
        assert statements >= 3  # only the oldest rows hold it: 10 ids, wider, ..., all
        assert [(h.session_id, h.matches) for h in hits] == [("s003", WINDOW)]  # its newest
        hits, statements = _search(conn, "beta", "bob", ())
        assert statements >= 2
        assert hits and all(h.user_id == "bob" for h in hits)


def test_the_bounded_plan_reads_only_the_newest_ids(
    pg_dsn: str, filled: PostgresSessionStore
) -> None:
    """The floor is an index condition on the primary key (its range scan, or its bitmap
    ANDed with the word index's), not a test of every match."""
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("ANALYZE hermes.messages")
        top = conn.execute("SELECT max(id) FROM hermes.messages").fetchone()
        assert top
        plan = search.search_plan(conn, "alpha", user_id="alice", floor=int(top[0]) - 20)
    assert "messages_pkey" in plan, plan
    assert "Index Cond: (id >= " in plan or "Index Cond: (m_2.id >= " in plan, plan
