"""Search: BM25 order, one hit per session, snippets and neighbours, CJK, tools, archived
rows, and above all one user's sessions only."""

from __future__ import annotations

from pathlib import Path

import pytest
from sessions_support import assistant, call, tool_result, user

from hermes_core.sessions.sqlite import SQLiteSessionStore, search
from hermes_core.sessions.store import SnippetLine

FILLER = " ".join(f"filler{n}" for n in range(60))


def add(store: SQLiteSessionStore, session_id: str, owner: str | None, *texts: str) -> None:
    store.open_session(session_id, user_id=owner, title=f"title of {session_id}")
    store.append_messages(
        session_id, [user(t) if n % 2 == 0 else assistant(t) for n, t in enumerate(texts)]
    )


def ids(hits: list[search.SearchHit]) -> list[str]:
    return [h.session_id for h in hits]


def test_bm25_puts_the_denser_match_first(any_store: SQLiteSessionStore) -> None:
    add(any_store, "sparse", None, f"kubernetes {FILLER}")
    add(any_store, "dense", None, "kubernetes kubernetes upgrade")
    add(any_store, "none", None, "nothing relevant here")
    hits = any_store.search("kubernetes", user_id=None, limit=10)
    assert ids(hits) == ["dense", "sparse"]
    assert hits[0].score > hits[1].score


def test_one_hit_per_session_with_its_best_message_and_the_match_count(
    any_store: SQLiteSessionStore,
) -> None:
    add(any_store, "s", None, f"deploy {FILLER}", "unrelated", "deploy deploy now", "deploy")
    (hit,) = any_store.search("deploy", user_id=None)
    assert hit.matches == 3
    assert hit.seq in (3, 4)  # a short, dense message beats the long one
    assert (hit.title, hit.user_id) == ("title of s", None)


def test_limit_and_excluded_sessions(any_store: SQLiteSessionStore) -> None:
    for n in range(6):
        add(any_store, f"s{n}", None, f"postgres vacuum run {n}")
    assert len(any_store.search("vacuum", user_id=None)) == 3  # the default limit
    assert len(any_store.search("vacuum", user_id=None, limit=10)) == 6
    assert any_store.search("vacuum", user_id=None, limit=0) == []
    kept = any_store.search("vacuum", user_id=None, limit=10, exclude_sessions=["s1", "s4"])
    assert sorted(ids(kept)) == ["s0", "s2", "s3", "s5"]


def test_snippet_marks_the_terms_and_context_holds_the_neighbours(
    any_store: SQLiteSessionStore,
) -> None:
    add(
        any_store,
        "s",
        None,
        "first message",
        "the nginx config has a typo in the upstream block",
        "third message",
        "fourth message",
    )
    (hit,) = any_store.search("nginx upstream", user_id=None)
    assert hit.seq == 2 and hit.role == "assistant"
    assert ">>nginx<<" in hit.snippet and ">>upstream<<" in hit.snippet
    assert hit.context == (
        SnippetLine(1, "user", "first message"),
        SnippetLine(2, "assistant", hit.snippet),
        SnippetLine(3, "user", "third message"),
    )
    (first,) = any_store.search("first", user_id=None)
    assert [line.seq for line in first.context] == [1, 2]  # no row before the first


def test_long_messages_give_a_short_snippet(any_store: SQLiteSessionStore) -> None:
    add(any_store, "s", None, f"{FILLER} {FILLER} needle {FILLER} {FILLER}")
    (hit,) = any_store.search("needle", user_id=None)
    assert ">>needle<<" in hit.snippet and len(hit.snippet) < 300
    assert "…" in hit.snippet


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
    any_store: SQLiteSessionStore, text: str, queries: list[str]
) -> None:
    add(any_store, "cjk", None, "an english message first", text)
    add(any_store, "other", None, "unrelated english text", "另一个完全不同的句子")
    for query in queries:
        hits = any_store.search(query, user_id=None)
        assert ids(hits) == ["cjk"], query
        assert hits[0].seq == 2
        assert ">>" in hits[0].snippet and "<<" in hits[0].snippet


def test_cjk_mixed_with_latin_words(any_store: SQLiteSessionStore) -> None:
    add(any_store, "mixed", None, "运行 pytest 的时候数据库连接失败")
    add(any_store, "latin-only", None, "pytest passes")
    assert ids(any_store.search("pytest 数据库", user_id=None)) == ["mixed"]
    assert ids(any_store.search("数据 pytest", user_id=None)) == ["mixed"]


def test_tool_names_and_arguments_are_searchable(any_store: SQLiteSessionStore) -> None:
    any_store.open_session("tools", user_id=None)
    any_store.append_messages(
        "tools",
        [
            user("check the config"),
            assistant(None, tool_calls=[call("c1", "read_file", '{"path": "conf/haproxy.cfg"}')]),
            tool_result("c1", "read_file", "frontend http"),
        ],
    )
    add(any_store, "prose", None, "I like to read files")
    by_name = any_store.search("read_file", user_id=None)
    assert ids(by_name) == ["tools"] and by_name[0].matches == 2  # the call and its result
    by_argument = any_store.search("haproxy.cfg", user_id=None)
    assert ids(by_argument) == ["tools"] and by_argument[0].seq == 2
    assert ">>" in by_argument[0].snippet
    assert by_argument[0].context[1].seq == 2
    assert by_argument[0].context[0] == SnippetLine(1, "user", "check the config")


def test_archived_rows_are_found(any_store: SQLiteSessionStore) -> None:
    add(any_store, "s", None, "the redis eviction policy is allkeys-lru", "ok")
    any_store.commit_compaction(
        "s", [user("[summary] talked about caching")], [None], in_place=True
    )
    (hit,) = any_store.search("eviction", user_id=None)
    assert hit.seq == 1
    assert [line.seq for line in hit.context] == [1, 2]  # archived neighbours too


def test_users_never_see_each_others_sessions(any_store: SQLiteSessionStore) -> None:
    add(any_store, "alice-1", "alice", "the secret launch plan")
    add(any_store, "bob-1", "bob", "the secret launch plan")
    add(any_store, "anon-1", None, "the secret launch plan")
    add(any_store, "empty-name", "", "the secret launch plan")
    assert ids(any_store.search("secret launch", user_id="alice")) == ["alice-1"]
    assert ids(any_store.search("secret launch", user_id="bob")) == ["bob-1"]
    assert ids(any_store.search("secret launch", user_id=None)) == ["anon-1"]
    assert ids(any_store.search("secret launch", user_id="")) == ["empty-name"]
    assert any_store.search("secret launch", user_id="carol") == []
    for hit in any_store.search("secret", user_id="alice", limit=50):
        assert hit.user_id == "alice"


def test_the_ranking_window_is_per_user(
    any_store: SQLiteSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond MAX_RANKED matches only the newest are ranked, counted among the caller's own
    rows: another user's newer messages never push the caller's out."""
    monkeypatch.setattr(search, "MAX_RANKED", 4)
    for n in range(3):
        add(any_store, f"alice-{n}", "alice", f"common word {n}")
    for n in range(10):
        add(any_store, f"bob-{n}", "bob", f"common word {n}")
    assert sorted(ids(any_store.search("common", user_id="alice", limit=50))) == [
        "alice-0",
        "alice-1",
        "alice-2",
    ]
    bobs = ids(any_store.search("common", user_id="bob", limit=50))
    if any_store.fts:
        assert sorted(bobs) == ["bob-6", "bob-7", "bob-8", "bob-9"]  # the newest four
    else:
        assert len(bobs) == 10  # LIKE scans everything anyway


def test_fts_and_like_find_the_same_sessions_for_plain_words(db_path: Path) -> None:
    writer = SQLiteSessionStore(db_path)
    texts = ["alpha beta", "beta gamma", "gamma delta", "delta alpha", "epsilon"]
    for n, text in enumerate(texts):
        add(writer, f"s{n}", None, text, f"reply about {text.split()[0]}")
    add(writer, "other-user", "zed", "alpha beta gamma delta")
    writer.close()
    indexed = SQLiteSessionStore(db_path)
    plain = SQLiteSessionStore(db_path, fts=False)
    for query in ["alpha", "beta", "gamma delta", "epsilon", "reply", "zeta", '"alpha beta"']:
        found = {h.session_id for h in indexed.search(query, user_id=None, limit=50)}
        scanned = {h.session_id for h in plain.search(query, user_id=None, limit=50)}
        assert found == scanned, query
    indexed.close()
    plain.close()


def test_diacritics_fold_in_the_index(store: SQLiteSessionStore) -> None:
    add(store, "s", None, "we met at the café near the Zürich office")
    assert ids(store.search("cafe zurich", user_id=None)) == ["s"]


HOSTILE = [
    'pytest -k "foo"',
    "src/app.py:12",
    "NOT",
    "AND OR NOT NEAR",
    "NEAR(a b, 3)",
    "content: secret",
    "tool_args: x",
    '"unbalanced',
    'a " b " c "',
    "foo* ^bar (baz) {qux}",
    "-",
    "...",
    ":",
    "*",
    "''",
    "\x00\x01\x1f",
    "emoji 🎉🚀 only",
    "🎉",
    "a" * 5000,
    " ".join(["word"] * 1000),
    "\ud800 lone surrogate",
    "%_\\ like wildcards",
    "'; DROP TABLE messages; --",
    "数",
    "数据 ab 東京タワー x",
    "",
    "   ",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(any_store: SQLiteSessionStore, query: str) -> None:
    add(any_store, "s", None, "pytest -k foo on src/app.py:12, 100% done_ok", "数据 東京タワー")
    hits = any_store.search(query, user_id=None, limit=5)
    assert all(h.session_id == "s" for h in hits)
    assert any_store.messages("s")  # and nothing was dropped


def test_code_like_queries_find_their_text(any_store: SQLiteSessionStore) -> None:
    add(any_store, "s", None, "run pytest -k foo against src/app.py:12 then 100% done_ok")
    add(any_store, "t", None, "nothing to see")
    for query in ['pytest -k "foo"', "src/app.py:12", "100%", "done_ok"]:
        assert ids(any_store.search(query, user_id=None)) == ["s"], query
    assert any_store.search("", user_id=None) == []
