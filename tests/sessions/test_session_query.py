"""The query sanitiser: any text becomes plain terms, and no text makes a search raise."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sessions_support import user

from hermes_core.sessions.query import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    has_cjk,
    like_pattern,
    mark_matches,
    parse_query,
)
from hermes_core.sessions.sqlite import SQLiteSessionStore
from hermes_core.sessions.sqlite.search import fts5_query


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ('pytest -k "foo"', ("pytest", "k", "foo")),
        ("src/app.py:12", ("src/app.py:12",)),
        ("NOT", ("NOT",)),
        ("foo AND bar OR baz NOT qux NEAR", ("foo", "bar", "baz", "qux")),
        ('"NOT" foo', ("NOT", "foo")),  # a quoted operator is a word
        ("content: x*", ("content", "x")),
        ("(a OR b) NEAR(c, d)", ("a", "b", "c", "d")),
        ('"exact   phrase" rest', ("exact phrase", "rest")),
        ('"unbalanced quote', ("unbalanced", "quote")),
        ("^start end$", ("start", "end")),
        ("Foo foo FOO", ("Foo",)),
        ("--- ... ***", ()),
        ("🎉 🚀", ()),
        ("", ()),
        ("zero\u200bwidth and\x00nul", ("zero", "width", "and", "nul")),
        ("東京タワー 数据", ("東京タワー", "数据")),
        ("don't stop", ("don't", "stop")),
    ],
)
def test_parse_query(text: str, terms: tuple[str, ...]) -> None:
    assert parse_query(text) == terms


def test_long_queries_are_capped() -> None:
    assert parse_query("x" * 10_000) == ("x" * MAX_QUERY_CHARS,)
    many = " ".join(f"w{n}" for n in range(100))
    assert parse_query(many) == tuple(f"w{n}" for n in range(MAX_TERMS))


def test_cjk_detection() -> None:
    assert has_cjk("数据") and has_cjk("カタカナ") and has_cjk("한국어") and has_cjk("mixed 東")
    assert not has_cjk("latin") and not has_cjk("Ελληνικά") and not has_cjk("кириллица")


def test_like_patterns_escape_wildcards() -> None:
    assert like_pattern("100%_done\\") == "%100\\%\\_done\\\\%"


def test_mark_matches() -> None:
    assert mark_matches("Hello hello world", ["hello"]) == ">>Hello<< >>hello<< world"
    assert mark_matches("split\n  phrase here", ["split phrase"]) == ">>split phrase<< here"
    text = " ".join(f"w{n}" for n in range(200)) + " needle " + " ".join("tail" for _ in range(50))
    excerpt = mark_matches(text, ["needle"], width=60)
    assert excerpt.startswith("…") and excerpt.endswith("…") and ">>needle<<" in excerpt
    assert mark_matches("no match here", ["absent"]) == "no match here"


@given(st.text(max_size=300))
@settings(max_examples=400, deadline=None)
def test_terms_are_always_plain(text: str) -> None:
    terms = parse_query(text)
    assert len(terms) <= MAX_TERMS
    for term in terms:
        assert term and term == term.strip() and '"' not in term
        assert any(ch.isalnum() for ch in term)
        term.encode("utf-8")  # no lone surrogates reach SQLite
    fts5_query(terms)


# text built from what query syntaxes are made of, so the search sees them often
SYNTAX = st.lists(
    st.sampled_from(
        [*"\"'*^:()[]{}-+.,;/\\%_ \t\n\x00", "AND", "OR", "NOT", "NEAR", "content", "x", "数"]
    ),
    max_size=40,
).map("".join)


@pytest.fixture(scope="module", params=[True, False], ids=["fts", "like"])
def seeded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SQLiteSessionStore]:
    store = SQLiteSessionStore(tmp_path_factory.mktemp("q") / "state.db", fts=request.param)
    store.open_session("s", user_id=None)
    store.append_messages(
        "s", [user('content: x AND "y" NOT z* (a) ^b 数据 東京タワー 100% a_b'), user("x")]
    )
    yield store
    store.close()


@given(query=st.one_of(st.text(max_size=200), SYNTAX))
@settings(max_examples=300, deadline=None)
def test_no_text_makes_search_raise(seeded: SQLiteSessionStore, query: str) -> None:
    hits = seeded.search(query, user_id=None, limit=3)
    assert len(hits) <= 3
    assert all(h.session_id == "s" for h in hits)
