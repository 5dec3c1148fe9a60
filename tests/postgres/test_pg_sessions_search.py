"""Search on PostgreSQL: the ts_rank_cd and BM25-like orders, tool names weighted, the indexes
serving the queries, the exact user check, the per-user ranking window, diacritics, words the
index cannot split, hostile and placeholder text; and the cases both built-in stores share
(tests/support/store_cases.py). Per-user filtering, snippets, CJK, tools and archived rows are
the conformance kit's checks (test_pg_sessions_conformance.py)."""

from __future__ import annotations

from typing import Any, cast

import psycopg
import pytest
from store_cases import SearchCases, add

from hermes_core.sessions.sqlite.rows import owner_token
from hermes_core.testing.store_kit import FILLER, HOSTILE_QUERIES, assistant, call, user
from hermes_core.testing.store_kit import hit_ids as ids
from hermes_plugins.postgres.sessions import PostgresSessionStore, search
from hermes_plugins.postgres.sessions.search import run_search


class TestPostgresSearchCases(SearchCases):
    """The shared cases, on the ``store`` fixture of conftest.py."""


def test_more_occurrences_in_equal_lengths_rank_higher(store: PostgresSessionStore) -> None:
    add(store, "one", None, "ansible alpha beta gamma delta epsilon")
    add(store, "three", None, "ansible ansible ansible gamma delta epsilon")
    add(store, "two", None, "ansible ansible beta gamma delta epsilon")
    hits = store.search("ansible", user_id=None, limit=10)
    assert ids(hits) == ["three", "two", "one"]
    assert hits[-1].score > 0  # ts_rank_cd: a match scores above nothing
    for text in ("数据库 三次 数据库 数据库", "数据库 两次 数据库 填充", "数据库 一次 填充 填充"):
        add(store, f"cjk {text.split()[1]}", None, text)
    assert ids(store.search("数据库", user_id=None, limit=10)) == [
        "cjk 三次",
        "cjk 两次",
        "cjk 一次",
    ]


def test_a_tool_name_outweighs_the_same_word_in_prose(store: PostgresSessionStore) -> None:
    add(store, "prose", None, "run zebrafetch later")
    store.open_session("tools", user_id=None)
    store.append_messages(
        "tools", [assistant(None, tool_calls=[call("c1", "zebrafetch", '{"path": "x"}')])]
    )
    assert ids(store.search("zebrafetch", user_id=None, limit=10)) == ["tools", "prose"]


def test_the_indexes_serve_the_queries(pg_dsn: str, store: PostgresSessionStore) -> None:
    """With many rows of one user, a word query uses the GIN tsvector index and a CJK query
    the trigram index, not a scan of the user's rows. After a VACUUM (autovacuum's work: it
    merges the GIN pending list) and with sequential scans switched off (at this size the
    planner would rightly read the few pages whole)."""
    store.open_session("big", user_id="u")
    rows = [user(f"word{n} filler text {FILLER[: n % 300]}") for n in range(4_000)]
    rows += [user(f"数据库迁移 {n} 第{n}号") for n in range(0, 4_000, 100)]
    store.append_messages("big", rows)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE hermes.messages")
        conn.execute("SET enable_seqscan = off")
        explaining = Explaining(conn)
        searcher = cast(psycopg.Connection[Any], explaining)
        assert run_search(searcher, "word7", user_id="u", limit=3, exclude_sessions=())
        assert "Bitmap Index Scan on messages_search" in explaining.plans[0], explaining.plans
        explaining.plans.clear()
        assert run_search(searcher, "数据库迁移", user_id="u", limit=3, exclude_sessions=())
        assert "Bitmap Index Scan on messages_trigram" in explaining.plans[0], explaining.plans


class Explaining:
    """A connection that records the plans of the search statements run through it."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.plans: list[str] = []

    def execute(self, query: str, params: Any = None) -> psycopg.Cursor[Any]:
        if "WITH matched" in query:  # the search itself, not its settings or max(id)
            plan = self.conn.execute(f"EXPLAIN {query}", params).fetchall()
            self.plans.append("\n".join(str(row[0]) for row in plan))
        return self.conn.execute(query, params)


def test_the_exact_user_check_decides_not_the_owner_token(
    pg_dsn: str, store: PostgresSessionStore
) -> None:
    """The indexed owner token only narrows the rows; a row whose token claims alice (a hash
    collision, a row written by hand) is still bob's, and alice never finds it."""
    add(store, "bob-1", "bob", "the secret plan 秘密计划")
    add(store, "alice-1", "alice", "nothing here")
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(
            "UPDATE hermes.messages SET owner = %s WHERE session_id = 'bob-1'",
            (owner_token("alice"),),
        )
    for query in ("secret", "秘密"):
        assert store.search(query, user_id="alice") == [], query


def test_the_ranking_window_is_per_user(
    store: PostgresSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond MAX_RANKED matches only the newest are ranked, counted among the caller's own
    rows: another user's newer messages never push the caller's out."""
    monkeypatch.setattr(search, "MAX_RANKED", 4)
    for n in range(3):
        add(store, f"alice-{n}", "alice", f"common word {n} 共同")
    for n in range(10):
        add(store, f"bob-{n}", "bob", f"common word {n} 共同")
    for query in ("common", "共同"):
        assert sorted(ids(store.search(query, user_id="alice", limit=50))) == [
            "alice-0",
            "alice-1",
            "alice-2",
        ]
        bobs = ids(store.search(query, user_id="bob", limit=50))
        assert sorted(bobs) == ["bob-6", "bob-7", "bob-8", "bob-9"]  # the newest four


def test_diacritics_and_case_fold(store: PostgresSessionStore) -> None:
    add(store, "s", None, "we met at the café near the Zürich office, ÉCOLE")
    assert ids(store.search("cafe zurich", user_id=None)) == ["s"]
    assert ids(store.search("CAFÉ école", user_id=None)) == ["s"]


def test_a_query_without_an_indexable_word_matches_nothing(store: PostgresSessionStore) -> None:
    """Terms the sanitiser keeps (they hold a letter or digit) but the index splits into no
    word at all: never "every row"."""
    add(store, "s", None, "plain words only", "and 5µm of ª")
    for query in ("² ³", "¼", "\u2e2f", "µ"):
        assert store.search(query, user_id=None) == [], query
    assert ids(store.search("ª", user_id=None)) == ["s"]
    assert ids(store.search("plain ²", user_id=None)) == ["s"]  # the word decides


EXTRA_HOSTILE = (
    "'; DROP TABLE hermes.messages; --",
    "%(owner)s %(user)s %s {owner}",
    "$1 $$ E'\\x00'",
    "a\x00b",
    "\x00" * 100,
    "word " * 3000,
    "😀" * 5000,
    "数" * 10_000,
    "tsquery & | ! <-> <2> :* ( )",
    "\ud800 \udfff",
)


@pytest.mark.parametrize("query", [*HOSTILE_QUERIES, *EXTRA_HOSTILE])
def test_hostile_queries_never_raise_nor_reach_another_user(
    store: PostgresSessionStore, query: str
) -> None:
    text = "pytest -k foo on src/app.py:12, 100% done_ok -x a:b 🎉 数据 東京タワー %(owner)s"
    add(store, "s", None, text, "数据 東京タワー")
    add(store, "theirs", "mallory", text, "数据 東京タワー")
    hits = store.search(query, user_id=None, limit=5)
    assert all(h.session_id == "s" for h in hits)
    assert len(store.messages("s")) == 2
    assert store.search("pytest", user_id=None)  # and the tables are all still there


def test_a_query_of_placeholders_is_text_not_sql(store: PostgresSessionStore) -> None:
    add(store, "s", None, "literal %(owner)s and %s here")
    add(store, "t", "mallory", "literal %(owner)s and %s here")
    assert ids(store.search("%(owner)s", user_id=None)) == ["s"]
    assert ids(store.search('"%(owner)s"', user_id="mallory")) == ["t"]
