"""Conformance checks on search (per user, ranked, marked, hostile-proof) and concurrency.

Part of :class:`hermes_core.testing.SessionStoreConformance`; every method takes the store
(or the opener of further instances) as an argument, so it can also be called directly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from hermes_core.errors import StaleSessionError
from hermes_core.sessions.store import SearchHit, SessionStore
from hermes_core.testing.store_kit import (
    FILLER,
    HOSTILE_QUERIES,
    OpenStore,
    assistant,
    call,
    hit_ids,
    tool_result,
    user,
)

__all__ = ["ConcurrencyChecks", "SearchChecks"]

#: seconds a concurrency check waits for its threads before calling the store hung
HUNG_AFTER = 300.0

SEARCH_USERS: tuple[str | None, ...] = ("alice", "bob", None, "", "Alice", "alice\x00")


def add(store: SessionStore, session_id: str, owner: str | None, *texts: str) -> None:
    """A session of alternating user and assistant messages."""
    store.open_session(session_id, user_id=owner, title=f"title of {session_id}")
    messages = [user(t) if n % 2 == 0 else assistant(t) for n, t in enumerate(texts)]
    store.append_messages(session_id, messages)


def only_hit(hits: list[SearchHit], session_id: str) -> SearchHit:
    """The single hit a search must return, or a failure that says what came back."""
    assert hit_ids(hits) == [session_id], f"expected one hit in {session_id!r}: {hits}"
    return hits[0]


def run_threads(count: int, work: Callable[[int], None]) -> list[Exception]:
    """Run ``work(n)`` in ``count`` threads released together; the errors they raised."""
    errors: list[Exception] = []
    start = threading.Barrier(count)

    def run(n: int) -> None:
        try:
            start.wait()
            work(n)
        except Exception as exc:  # noqa: BLE001 - reported by the caller's assertion
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HUNG_AFTER)
        assert not thread.is_alive(), f"a thread still runs after {HUNG_AFTER:.0f} s: a deadlock?"
    return errors


class SearchChecks:
    """Search answers one user's sessions only, best first, and takes any text."""

    def test_search_is_filtered_by_user_in_every_direction(self, store: SessionStore) -> None:
        for n, owner in enumerate(SEARCH_USERS):
            add(store, f"s{n}", owner, "the secret launch plan 秘密计划")
        for query in ("secret launch", "秘密", "秘密计划 launch"):  # words, short CJK, both
            for n, caller in enumerate(SEARCH_USERS):
                hits = store.search(query, user_id=caller, limit=50)
                assert hit_ids(hits) == [f"s{n}"], (
                    f"user {caller!r} must find exactly their own session s{n} with {query!r}, "
                    f"got {hit_ids(hits)}"
                )
                assert hits[0].user_id == caller, f"a hit of {caller!r} names {hits[0].user_id!r}"
            assert store.search(query, user_id="carol", limit=50) == []

    def test_search_of_archived_rows_is_filtered_by_user(self, store: SessionStore) -> None:
        add(store, "alice-1", "alice", "the redis eviction policy", "ok")
        add(store, "bob-1", "bob", "nothing here", "ok")
        for session_id in ("alice-1", "bob-1"):
            store.commit_compaction(session_id, [user("[summary]")], [None], in_place=True)
        assert hit_ids(store.search("eviction", user_id="alice")) == ["alice-1"]
        assert store.search("eviction", user_id="bob") == [], "bob found alice's archived row"
        assert store.search("eviction", user_id=None) == [], "anonymous found alice's row"

    def test_search_limit_and_exclude_sessions(self, store: SessionStore) -> None:
        for n in range(6):
            add(store, f"s{n}", None, f"postgres vacuum run {n}")
        add(store, "other", "zed", "postgres vacuum run")
        assert len(store.search("vacuum", user_id=None)) == 3, "the default limit is 3"
        found = store.search("vacuum", user_id=None, limit=10)
        assert sorted(hit_ids(found)) == [f"s{n}" for n in range(6)], "one hit per session"
        assert len(store.search("vacuum", user_id=None, limit=2)) == 2
        assert store.search("vacuum", user_id=None, limit=0) == []
        kept = store.search("vacuum", user_id=None, limit=10, exclude_sessions=["s1", "s4"])
        assert sorted(hit_ids(kept)) == ["s0", "s2", "s3", "s5"], "exclude_sessions ignored"
        excluded = [f"s{n}" for n in range(6)]
        assert store.search("vacuum", user_id=None, exclude_sessions=excluded) == []

    def test_search_puts_the_obviously_better_match_first(self, store: SessionStore) -> None:
        add(store, "sparse", None, f"kubernetes {FILLER}")
        add(store, "dense", None, "kubernetes kubernetes upgrade")
        add(store, "none", None, "nothing relevant here")
        hits = store.search("kubernetes", user_id=None, limit=10)
        assert hit_ids(hits) == ["dense", "sparse"], "best first: the dense match leads"
        assert hits[0].score > hits[1].score, "a higher score means a better match"

    def test_search_hit_fields_snippet_and_neighbours(self, store: SessionStore) -> None:
        add(
            store,
            "s",
            "alice",
            "first message",
            "the nginx config has a typo in the upstream block",
            "third message",
            "fourth message",
        )
        record = store.get_session("s", user_id="alice")
        assert record is not None, "the session was not stored"
        hit = only_hit(store.search("nginx upstream", user_id="alice"), "s")
        assert (hit.session_id, hit.user_id, hit.title) == ("s", "alice", "title of s"), hit
        assert hit.started_at == record.started_at, "started_at must be the session's"
        assert (hit.seq, hit.role) == (2, "assistant"), "the hit names the matching message"
        assert ">>nginx<<" in hit.snippet and ">>upstream<<" in hit.snippet, (
            f"the snippet must mark the matching terms >>like this<<: {hit.snippet!r}"
        )
        lines = [(line.seq, line.role) for line in hit.context]
        assert lines == [(1, "user"), (2, "assistant"), (3, "user")], (
            f"context must be the match and one neighbour on each side: {hit.context}"
        )
        assert "first message" in hit.context[0].text, hit.context
        assert "third" in hit.context[2].text and "nginx" in hit.context[1].text, hit.context
        first = only_hit(store.search("first", user_id="alice"), "s")
        assert [line.seq for line in first.context] == [1, 2], "no row before the first"

    def test_archived_rows_are_searchable_with_their_neighbours(self, store: SessionStore) -> None:
        add(store, "s", None, "the redis eviction policy is allkeys-lru", "ok")
        store.commit_compaction(
            "s", [user("[summary] talked about caching")], [None], in_place=True
        )
        hit = only_hit(store.search("eviction", user_id=None), "s")
        assert hit.seq == 1, "archived rows stay searchable"
        assert [line.seq for line in hit.context] == [1, 2], "archived neighbours are context"
        assert hit_ids(store.search("caching", user_id=None)) == ["s"], "the summary is found"
        assert hit_ids(store.search("allkeys-lru", user_id=None)) == ["s"], "any archived word"

    @pytest.mark.parametrize(
        ("text", "queries"),
        [
            ("我们需要把数据库迁移到新的服务器上", ["数据", "数据库迁移", "服务器"]),
            ("東京タワーの近くで会議がありました", ["東京", "タワーの近", "会議"]),
            ("한국어 문장도 검색됩니다", ["검색", "한국어 문장"]),
        ],
        ids=["chinese", "japanese", "korean"],
    )
    def test_cjk_text_is_found(self, store: SessionStore, text: str, queries: list[str]) -> None:
        add(store, "cjk", None, "an english message first", text)
        add(store, "other", None, "unrelated english text", "另一个完全不同的句子")
        add(store, "theirs", "zed", text)
        for query in queries:
            hits = store.search(query, user_id=None)
            assert hit_ids(hits) == ["cjk"], f"{query!r} must find the CJK message only"
            assert hits[0].seq == 2, f"{query!r} found seq {hits[0].seq}"
            assert ">>" in hits[0].snippet and "<<" in hits[0].snippet, hits[0].snippet

    def test_tool_names_and_arguments_are_searchable(self, store: SessionStore) -> None:
        arguments = '{"command": "systemctl reload haproxy", "path": "conf/haproxy.cfg"}'
        store.open_session("tools", user_id=None)
        store.append_messages(
            "tools",
            [
                user("check the config"),
                assistant(None, tool_calls=[call("c1", "zebrafetch", arguments)]),
                tool_result("c1", "zebrafetch", "frontend http"),
            ],
        )
        add(store, "prose", None, "I like to read files", "the config is fine")
        assert hit_ids(store.search("zebrafetch", user_id=None)) == ["tools"], (
            "tool names must be searchable"
        )
        for query in ("systemctl", "haproxy.cfg"):
            hits = store.search(query, user_id=None)
            assert hit_ids(hits) == ["tools"], f"tool-call arguments must be searchable: {query}"
            assert hits[0].seq == 2, f"{query!r}: the tool call's message is the hit"
            assert ">>" in hits[0].snippet, f"{query!r}: unmarked snippet {hits[0].snippet!r}"
            assert [line.seq for line in hits[0].context] == [1, 2, 3], hits[0].context

    def test_code_like_queries_find_their_text(self, store: SessionStore) -> None:
        add(store, "s", None, "run pytest -k foo against src/app.py:12 then 100% done_ok")
        add(store, "t", None, "nothing to see")
        for query in ['pytest -k "foo"', "src/app.py:12", "done_ok"]:
            assert hit_ids(store.search(query, user_id=None)) == ["s"], query

    @pytest.mark.parametrize("query", HOSTILE_QUERIES)
    def test_hostile_queries_never_raise(self, store: SessionStore, query: str) -> None:
        text = "pytest -k foo on src/app.py:12, NOT done_ok -x a:b 🎉 数据 東京タワー"
        add(store, "mine", None, text, "secret word")
        add(store, "theirs", "mallory", text, "secret word")
        hits = store.search(query, user_id=None, limit=5)
        assert all(h.session_id == "mine" for h in hits), f"{query!r} reached another user"
        assert len(store.messages("mine")) == 2, f"the query {query!r} changed the rows"

    def test_the_empty_query_finds_nothing(self, store: SessionStore) -> None:
        add(store, "s", None, "some words", "more words")
        assert store.search("", user_id=None) == [], "the empty query must return []"
        assert store.search("   ", user_id=None) == [], "a blank query must return []"


class ConcurrencyChecks:
    """Threads and instances writing one session at once lose nothing and double nothing."""

    threads: int
    appends_per_thread: int

    def test_threads_appending_to_one_store_lose_nothing(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        count, each = self.threads, self.appends_per_thread

        def work(worker: int) -> None:
            for n in range(each):
                store.append_messages("s", [user(f"thread {worker} message {n}")])
                store.search(f"thread {worker}", user_id=None)

        errors = run_threads(count, work)
        assert errors == [], f"concurrent appends raised: {errors[:3]}"
        rows = store.messages("s")
        assert [r.seq for r in rows] == list(range(1, count * each + 1)), "seqs lost or doubled"
        texts = [str(r.message["content"]) for r in rows]
        for worker in range(count):  # each thread's rows, all there, in its own order
            mine = [t for t in texts if t.startswith(f"thread {worker} ")]
            expected = [f"thread {worker} message {n}" for n in range(each)]
            assert mine == expected, f"thread {worker}'s rows are missing or out of order"

    def test_concurrent_writers_with_after_seq_never_both_win(self, open_store: OpenStore) -> None:
        """Several instances append with ``after_seq``, reloading when refused: each seq is
        won by exactly one writer (the check and the insert are one transaction)."""
        stores = [open_store(), open_store()]
        stores[0].open_session("s", user_id=None)
        count, each = self.threads, max(1, self.appends_per_thread // 5)
        won: list[tuple[int, list[int]]] = []

        def work(worker: int) -> None:
            mine = stores[worker % len(stores)]
            for n in range(each):
                while True:
                    seen = mine.last_seq("s")
                    try:
                        seqs = mine.append_messages(
                            "s", [user(f"writer {worker} turn {n}")], after_seq=seen
                        )
                    except StaleSessionError:
                        continue  # another writer won this seq: reload and try again
                    won.append((seen, seqs))
                    break

        errors = run_threads(count, work)
        assert errors == [], f"concurrent appends raised: {errors[:3]}"
        assert sorted(seen for seen, _ in won) == list(range(count * each)), (
            "two writers succeeded with the same after_seq"
        )
        assert all(seqs == [seen + 1] for seen, seqs in won), won
        rows = stores[1].messages("s")
        assert [r.seq for r in rows] == list(range(1, count * each + 1)), "rows lost or doubled"
