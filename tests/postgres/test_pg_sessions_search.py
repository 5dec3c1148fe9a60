"""Search on PostgreSQL: ts_rank_cd order, one hit per session, snippets and neighbours, CJK
through the trigram index, tools, archived rows, hostile text, and one user's sessions only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import psycopg
import pytest

from hermes_core.sessions.sqlite.rows import owner_token
from hermes_core.sessions.store import SearchHit, SnippetLine
from hermes_core.testing.store_kit import (
    FILLER,
    HOSTILE_QUERIES,
    assistant,
    call,
    tool_result,
    user,
)
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore, search
from hermes_plugins.postgres.sessions.search import run_search


@pytest.fixture
def store(pg_dsn: str) -> Iterator[PostgresSessionStore]:
    opened = PostgresSessionStore(Database(pg_dsn))
    yield opened
    opened.close()


def add(store: PostgresSessionStore, session_id: str, owner: str | None, *texts: str) -> None:
    store.open_session(session_id, user_id=owner, title=f"title of {session_id}")
    store.append_messages(
        session_id, [user(t) if n % 2 == 0 else assistant(t) for n, t in enumerate(texts)]
    )


def ids(hits: list[SearchHit]) -> list[str]:
    return [h.session_id for h in hits]


def test_the_denser_match_ranks_first(store: PostgresSessionStore) -> None:
    add(store, "sparse", None, f"kubernetes {FILLER}")
    add(store, "dense", None, "kubernetes kubernetes upgrade")
    add(store, "none", None, "nothing relevant here")
    hits = store.search("kubernetes", user_id=None, limit=10)
    assert ids(hits) == ["dense", "sparse"]
    assert hits[0].score > hits[1].score > 0


def test_more_occurrences_in_equal_lengths_rank_higher(store: PostgresSessionStore) -> None:
    add(store, "one", None, "ansible alpha beta gamma delta epsilon")
    add(store, "three", None, "ansible ansible ansible gamma delta epsilon")
    add(store, "two", None, "ansible ansible beta gamma delta epsilon")
    assert ids(store.search("ansible", user_id=None, limit=10)) == ["three", "two", "one"]
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


def test_one_hit_per_session_with_its_best_message_and_the_match_count(
    store: PostgresSessionStore,
) -> None:
    add(store, "s", None, f"deploy {FILLER}", "unrelated", "deploy deploy now", "deploy")
    (hit,) = store.search("deploy", user_id=None)
    assert hit.matches == 3
    assert hit.seq in (3, 4)
    assert (hit.title, hit.user_id) == ("title of s", None)


def test_limit_and_excluded_sessions(store: PostgresSessionStore) -> None:
    for n in range(6):
        add(store, f"s{n}", None, f"postgres vacuum run {n}")
    assert len(store.search("vacuum", user_id=None)) == 3
    assert len(store.search("vacuum", user_id=None, limit=10)) == 6
    assert store.search("vacuum", user_id=None, limit=0) == []
    assert store.search("vacuum", user_id=None, limit=-5) == []
    assert len(store.search("vacuum", user_id=None, limit=10**30)) == 6
    kept = store.search("vacuum", user_id=None, limit=10, exclude_sessions=["s1", "s4", "x\x00"])
    assert sorted(ids(kept)) == ["s0", "s2", "s3", "s5"]
    assert store.search("数据", user_id=None, exclude_sessions=[f"s{n}" for n in range(6)]) == []


def test_snippet_marks_the_terms_and_context_holds_the_neighbours(
    store: PostgresSessionStore,
) -> None:
    add(
        store,
        "s",
        None,
        "first message",
        "the nginx config has a typo in the upstream block",
        "third message",
        "fourth message",
    )
    (hit,) = store.search("nginx upstream", user_id=None)
    assert hit.seq == 2 and hit.role == "assistant"
    assert ">>nginx<<" in hit.snippet and ">>upstream<<" in hit.snippet
    assert hit.context == (
        SnippetLine(1, "user", "first message"),
        SnippetLine(2, "assistant", hit.snippet),
        SnippetLine(3, "user", "third message"),
    )
    (first,) = store.search("first", user_id=None)
    assert [line.seq for line in first.context] == [1, 2]


def test_snippets_are_short_and_redacted(store: PostgresSessionStore) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    add(store, "s", None, f"{FILLER} {FILLER} needle {FILLER} {FILLER}", f"the key {key}", "x")
    (hit,) = store.search("needle", user_id=None)
    assert ">>needle<<" in hit.snippet and len(hit.snippet) < 300 and "…" in hit.snippet
    assert key not in hit.context[1].text
    (secret,) = store.search("key", user_id=None)
    assert key not in secret.snippet and "REDACTED" in secret.snippet


@pytest.mark.parametrize(
    ("text", "queries"),
    [
        ("我们需要把数据库迁移到新的服务器上", ["数据", "数据库迁移", "服务器"]),
        ("東京タワーの近くで会議がありました", ["東京", "タワーの近", "会議"]),
        ("한국어 문장도 검색됩니다", ["검색", "한국어 문장"]),
    ],
    ids=["chinese", "japanese", "korean"],
)
def test_cjk_is_found_by_short_and_long_queries(
    store: PostgresSessionStore, text: str, queries: list[str]
) -> None:
    add(store, "cjk", None, "an english message first", text)
    add(store, "other", None, "unrelated english text", "另一个完全不同的句子")
    add(store, "theirs", "zed", text)
    for query in queries:
        hits = store.search(query, user_id=None)
        assert ids(hits) == ["cjk"], query
        assert hits[0].seq == 2
        assert ">>" in hits[0].snippet and "<<" in hits[0].snippet


def test_cjk_mixed_with_latin_words(store: PostgresSessionStore) -> None:
    add(store, "mixed", None, "运行 pytest 的时候数据库连接失败")
    add(store, "latin-only", None, "pytest passes")
    assert ids(store.search("pytest 数据库", user_id=None)) == ["mixed"]
    assert ids(store.search("数据 PYTEST", user_id=None)) == ["mixed"]


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
    """A connection that records the plan of the first statement run through it."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self.plans: list[str] = []

    def execute(self, query: str, params: Any = None) -> psycopg.Cursor[Any]:
        if not self.plans and not query.startswith("SET"):  # the search itself
            plan = self.conn.execute(f"EXPLAIN {query}", params).fetchall()
            self.plans.append("\n".join(str(row[0]) for row in plan))
        return self.conn.execute(query, params)


def test_tool_names_and_arguments_are_searchable(store: PostgresSessionStore) -> None:
    store.open_session("tools", user_id=None)
    store.append_messages(
        "tools",
        [
            user("check the config"),
            assistant(None, tool_calls=[call("c1", "read_file", '{"path": "conf/haproxy.cfg"}')]),
            tool_result("c1", "read_file", "frontend http"),
        ],
    )
    add(store, "prose", None, "I like to read files")
    by_name = store.search("read_file", user_id=None)
    assert ids(by_name) == ["tools"] and by_name[0].matches == 2
    by_argument = store.search("haproxy.cfg", user_id=None)
    assert ids(by_argument) == ["tools"] and by_argument[0].seq == 2
    assert ">>haproxy.cfg<<" in by_argument[0].snippet
    assert by_argument[0].context[0] == SnippetLine(1, "user", "check the config")


def test_archived_rows_are_found_with_their_neighbours(store: PostgresSessionStore) -> None:
    add(store, "s", None, "the redis eviction policy is allkeys-lru", "ok")
    store.commit_compaction("s", [user("[summary] talked about caching")], [None], in_place=True)
    (hit,) = store.search("eviction", user_id=None)
    assert hit.seq == 1
    assert [line.seq for line in hit.context] == [1, 2]
    assert ids(store.search("allkeys-lru", user_id=None)) == ["s"]


def test_users_never_see_each_others_sessions(store: PostgresSessionStore) -> None:
    owners = ["alice", "bob", None, "", "Alice", "alice\x00"]
    for n, owner in enumerate(owners):
        add(store, f"s{n}", owner, "the secret launch plan 秘密计划")
    for n, caller in enumerate(owners):
        for query in ("secret launch", "秘密", "秘密计划 launch"):
            hits = store.search(query, user_id=caller, limit=50)
            assert ids(hits) == [f"s{n}"], (caller, query)
            assert hits[0].user_id == caller
    assert store.search("secret launch", user_id="carol") == []
    assert store.search("秘密", user_id="carol") == []


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


def test_code_like_queries_find_their_text(store: PostgresSessionStore) -> None:
    add(store, "s", None, "run pytest -k foo against src/app.py:12 then 100% done_ok")
    add(store, "t", None, "nothing to see, app py")
    for query in ['pytest -k "foo"', "src/app.py:12", "100%", "done_ok", '"src/app.py"']:
        assert ids(store.search(query, user_id=None)) == ["s"], query
    assert store.search("", user_id=None) == []


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
