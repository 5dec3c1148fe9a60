"""Search on the SQLite store: the ranking window, FTS5 and LIKE agreeing, diacritics, hostile
text; and the cases both built-in stores share (tests/support/store_cases.py), with FTS5 and
with the LIKE fallback. Per-user filtering, ranking, snippets, CJK, tools and archived rows are
the conformance kit's checks (test_store_conformance.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_cases import SearchCases, add

from hermes_core.sessions.sqlite import SQLiteSessionStore, search
from hermes_core.testing.store_kit import hit_ids as ids


class TestSQLiteSearchCases(SearchCases):
    """The shared cases, with the FTS5 index and on the LIKE fallback."""

    @pytest.fixture
    def store(self, any_store: SQLiteSessionStore) -> SQLiteSessionStore:
        return any_store


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
