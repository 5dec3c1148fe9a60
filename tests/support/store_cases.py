"""Test cases both built-in session stores (SQLite and PostgreSQL) must pass, beyond the public
conformance kit (:mod:`hermes_core.testing`): hermes-context's own words for each refusal, the
exact order of lineage and context, and what a child session inherits.

Why not in the kit: a third-party backend keeps the protocol, not these texts and orders; both
built-in backends share the code that produces them (:mod:`hermes_core.sessions.checks`,
:mod:`hermes_core.sessions.records`, :mod:`hermes_core.sessions.commit_plan`), so the cases are
written once here. A backend's test module subclasses each class as ``Test...`` and supplies
``store`` (a fresh store) and, for :class:`RecordCases`, ``clocked`` (opens a store on fresh
data with the given clock; the fixture closes it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.sessions.store import SessionStore, SnippetLine
from hermes_core.testing.store_kit import (
    FILLER,
    assistant,
    call,
    canonical,
    family,
    hit_ids,
    seeded,
    snapshot,
    tool_result,
    user,
)

Clocked = Callable[[Callable[[], float]], SessionStore]
SUMMARY = user("[summary] the user fixed the flaky test", _compressed_summary=True)


def closing(open_one: Clocked) -> Iterator[Clocked]:
    """The body of a ``clocked`` fixture: ``open_one``, and every store it opened closed after
    the test."""
    opened: list[SessionStore] = []

    def open_store(clock: Callable[[], float]) -> SessionStore:
        opened.append(open_one(clock))
        return opened[-1]

    yield open_store
    for store in opened:
        store.close()


def add(store: SessionStore, session_id: str, owner: str | None, *texts: str) -> None:
    """A session of alternating user and assistant messages."""
    store.open_session(session_id, user_id=owner, title=f"title of {session_id}")
    store.append_messages(
        session_id, [user(t) if n % 2 == 0 else assistant(t) for n, t in enumerate(texts)]
    )


class RecordCases:
    """Sessions, rows, state and counters: the refusals in hermes-context's words."""

    def test_what_json_cannot_hold_is_refused_and_nothing_is_written(
        self, store: SessionStore
    ) -> None:
        store.open_session("s", user_id=None)
        with pytest.raises(SessionError, match="message 1"):
            store.append_messages("s", [user("fine"), user("bad", when=object())])
        with pytest.raises(SessionError, match="not a dict"):
            store.append_messages("s", ["just a string"])  # type: ignore[list-item]
        with pytest.raises(SessionError, match="key that is not a string"):
            store.append_messages("s", [{1: "x"}])  # type: ignore[dict-item]
        assert store.messages("s") == []

    def test_api_contents_token_counts_and_timestamps(self, clocked: Clocked) -> None:
        ticks = iter(range(100, 200))
        store = clocked(lambda: float(next(ticks)))
        record = store.open_session("s", user_id="u1", model="m1", title="first")
        assert record.started_at == 100.0
        store.append_messages(
            "s",
            [user("q"), assistant("a")],
            api_contents=["q + recall", None],
            token_counts=[3, 2**40],
        )
        rows = store.messages("s")
        assert [(r.api_content, r.token_count, r.timestamp) for r in rows] == [
            ("q + recall", 3, 101.0),
            (None, 2**40, 101.0),
        ]
        with pytest.raises(SessionError, match="no message with seq 9"):
            store.set_api_content("s", 9, "x")
        with pytest.raises(SessionError, match="2 messages but 1 api_contents"):
            store.append_messages("s", [user("x"), user("y")], api_contents=["x"])
        assert len(store.messages("s")) == 2

    def test_sessions_belong_to_one_user(self, store: SessionStore) -> None:
        first = store.open_session("s", user_id="alice", model="m", title="t")
        assert store.open_session("s", user_id="alice", model="other") == first  # resumed
        for other in ("bob", None, "", "Alice"):
            with pytest.raises(SessionError, match="another user"):
                store.open_session("s", user_id=other)
        store.open_session("anon", user_id=None)
        with pytest.raises(SessionError, match="another user"):
            store.open_session("anon", user_id="alice")

    def test_list_sessions_orders_by_time_then_by_creation(self, clocked: Clocked) -> None:
        ticks = iter([5.0, 3.0, 5.0, 2.0, 1.0, 5.0, 4.0])  # equal times: creation order decides
        store = clocked(lambda: next(ticks))
        for n, owner in enumerate(["alice", None, "alice", "bob", None, "alice", ""]):
            store.open_session(f"s{n}", user_id=owner)
        assert [r.id for r in store.list_sessions(user_id="alice")] == ["s5", "s2", "s0"]
        assert [r.id for r in store.list_sessions(user_id=None)] == ["s1", "s4"]  # time first
        assert [r.id for r in store.list_sessions(user_id="")] == ["s6"]
        assert [r.id for r in store.list_sessions(user_id="alice", limit=2)] == ["s5", "s2"]
        assert store.list_sessions(user_id="alice", limit=-1) == []

    def test_writes_to_an_unknown_session_say_so(self, store: SessionStore) -> None:
        for write in (
            lambda: store.append_messages("missing", [user("x")]),
            lambda: store.commit_compaction("missing", [user("x")], [None], in_place=True),
            lambda: store.end_session("missing", "x"),
            lambda: store.save_state("missing", {}),
            lambda: store.add_counters("missing", {"messages": 1}),
        ):
            with pytest.raises(SessionError, match="no such session: 'missing'"):
                write()

    def test_state_is_replaced_whole_and_counters_add_up(self, store: SessionStore) -> None:
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
        for delta in (1.5, True, "1"):
            with pytest.raises(SessionError, match="not an integer"):
                store.add_counters("s", {"messages": delta})  # type: ignore[dict-item]
        with pytest.raises(SessionError, match="JSON cannot store"):
            store.save_state("s", {"bad": object()})
        with pytest.raises(SessionError, match="JSON cannot store"):
            store.append_messages("s", [user("x")], state={"bad": object()})
        assert store.get_session("s", user_id=None) == record
        assert store.messages("s") == []

    def test_lineage_is_ancestors_the_session_then_descendants(self, store: SessionStore) -> None:
        family(store)
        assert store.lineage("grandchild") == ["root", "child", "grandchild"]
        assert store.lineage("root") == ["root", "child", "sibling", "grandchild"]
        assert store.lineage("child") == ["root", "child", "grandchild"]
        assert store.lineage("stranger") == ["stranger"]
        assert store.lineage("unknown") == ["unknown"]

    def test_a_parent_must_exist_for_the_same_user(self, store: SessionStore) -> None:
        store.open_session("p", user_id="alice")
        for owner in ("bob", None):
            with pytest.raises(SessionError, match="parent session 'p' does not exist"):
                store.open_session("c", user_id=owner, parent_session_id="p")
        with pytest.raises(SessionError, match="parent session 'nope' does not exist"):
            store.open_session("c", user_id="alice", parent_session_id="nope")
        assert store.get_session("c", user_id="bob") is None
        assert store.get_session("c", user_id="alice") is None


class CompactionCases:
    """Compaction commits: what a child inherits, and each refusal's words."""

    def test_a_child_inherits_the_parents_user_model_title_and_token_counts(
        self, store: SessionStore
    ) -> None:
        messages = seeded(store)
        new_view = [messages[0], SUMMARY, messages[5]]
        store.commit_compaction("s", new_view, [1, None, 6], in_place=False, child_session_id="c")
        child = store.get_session("c", user_id="u")
        assert child is not None
        assert (child.parent_session_id, child.user_id, child.model, child.title) == (
            "s",
            "u",
            "m",
            "flaky",
        )
        assert [m.token_count for m in store.messages("c")] == [1, None, 6]
        assert store.lineage("s") == store.lineage("c") == ["s", "c"]
        assert hit_ids(store.search("clock", user_id="u", limit=10)) == ["s"]

    def test_a_child_needs_a_new_id(self, store: SessionStore) -> None:
        messages = seeded(store)
        store.open_session("taken", user_id="u")
        refusals = [
            (None, "needs a child_session_id"),
            ("", "needs a child_session_id"),
            ("taken", "session 'taken' already exists"),
            ("s", "session 's' already exists"),
        ]
        for child, error in refusals:
            with pytest.raises(SessionError, match=error):
                store.commit_compaction(
                    "s", [messages[5]], [6], in_place=False, child_session_id=child
                )
        parent = store.get_session("s", user_id="u")
        assert parent is not None and parent.ended_at is None
        assert store.messages("taken") == []

    @pytest.mark.parametrize(
        ("origins", "error"),
        [
            ([1, None, 99], "origins\\[2\\] = 99 is not an active row"),
            ([1, None, 1], "names seq 1 twice"),
            ([1, None], "3 messages but 2 origins"),
            ([1, None, "6"], "is not an active row"),
            ([1, None, True], "is not an active row"),
        ],
    )
    @pytest.mark.parametrize("in_place", [True, False])
    def test_a_refused_commit_says_why_and_changes_nothing(
        self, store: SessionStore, origins: list[Any], error: str, in_place: bool
    ) -> None:
        messages = seeded(store)
        before = snapshot(store, "s"), store.list_sessions(user_id="u")
        with pytest.raises(SessionError, match=error):
            store.commit_compaction(
                "s", [messages[0], SUMMARY, messages[5]], origins, in_place=in_place,
                child_session_id="child",
            )  # fmt: skip
        assert (snapshot(store, "s"), store.list_sessions(user_id="u")) == before

    def test_an_archived_row_cannot_be_an_origin(self, store: SessionStore) -> None:
        messages = seeded(store)
        store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
        with pytest.raises(SessionError, match="origins\\[0\\] = 2 is not an active row"):
            store.commit_compaction("s", [messages[1]], [2], in_place=True)

    @pytest.mark.parametrize("kept", [None, 7], ids=["new-summary", "kept-summary"])
    def test_a_changed_message_under_an_origin_is_stored_as_new(
        self, store: SessionStore, kept: int | None
    ) -> None:
        messages = seeded(store)
        if kept is not None:  # the summary is an active row already
            store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
        edited = {**messages[5], "content": "fix it, please"}
        result = store.commit_compaction("s", [SUMMARY, edited], [kept, 6], in_place=True)
        assert result.seqs == (7, 8)
        assert [m.message for m in store.messages("s")] == [SUMMARY, edited]
        original = store.messages("s", include_archived=True)[5]
        assert (original.seq, original.message, original.compacted) == (6, messages[5], True)

    def test_a_stale_write_names_the_newest_row_and_the_expected_one(
        self, store: SessionStore
    ) -> None:
        seeded(store)
        with pytest.raises(StaleSessionError, match="newest row 6, expected 5"):
            store.append_messages("s", [user("late")], after_seq=5)
        for in_place in (True, False):
            with pytest.raises(StaleSessionError, match="newest row 6, expected 4"):
                store.commit_compaction(
                    "s", [SUMMARY], [None], in_place=in_place, child_session_id="c", after_seq=4
                )


class SearchCases:
    """Search: hit fields, excerpts and context exactly as the built-in stores make them."""

    def test_one_hit_per_session_with_its_best_message_and_the_match_count(
        self, store: SessionStore
    ) -> None:
        add(store, "s", None, f"deploy {FILLER}", "unrelated", "deploy deploy now", "deploy")
        (hit,) = store.search("deploy", user_id=None)
        assert hit.matches == 3
        assert hit.seq in (3, 4)  # a short, dense message beats the long one
        assert (hit.title, hit.user_id) == ("title of s", None)

    def test_odd_limits_and_excluded_ids(self, store: SessionStore) -> None:
        for n in range(6):
            add(store, f"s{n}", None, f"postgres vacuum run {n} 数据")
        assert store.search("vacuum", user_id=None, limit=-5) == []
        assert len(store.search("vacuum", user_id=None, limit=10**30)) == 6
        kept = store.search("vacuum", user_id=None, limit=10, exclude_sessions=["s1", "x\x00"])
        assert sorted(hit_ids(kept)) == ["s0", "s2", "s3", "s4", "s5"]
        assert (
            store.search("数据", user_id=None, exclude_sessions=[f"s{n}" for n in range(6)]) == []
        )

    def test_context_is_the_hit_and_its_neighbours_excerpted(self, store: SessionStore) -> None:
        add(store, "s", None, "first message", "the nginx config has a typo", "third", "fourth")
        (hit,) = store.search("nginx", user_id=None)
        assert hit.context == (
            SnippetLine(1, "user", "first message"),
            SnippetLine(2, "assistant", hit.snippet),
            SnippetLine(3, "user", "third"),
        )

    def test_snippets_are_short_and_redacted(self, store: SessionStore) -> None:
        key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
        add(store, "s", None, f"{FILLER} {FILLER} needle {FILLER} {FILLER}", f"the key {key}", "x")
        (hit,) = store.search("needle", user_id=None)
        assert ">>needle<<" in hit.snippet and len(hit.snippet) < 300 and "…" in hit.snippet
        assert key not in hit.context[1].text
        (secret,) = store.search("key", user_id=None)
        assert key not in secret.snippet and "REDACTED" in secret.snippet

    def test_cjk_mixed_with_latin_words(self, store: SessionStore) -> None:
        add(store, "mixed", None, "运行 pytest 的时候数据库连接失败")
        add(store, "latin-only", None, "pytest passes")
        for query in ("pytest 数据库", "数据 pytest", "数据 PYTEST"):
            assert hit_ids(store.search(query, user_id=None)) == ["mixed"], query

    def test_a_tool_call_and_its_result_both_match_its_name(self, store: SessionStore) -> None:
        store.open_session("tools", user_id=None)
        store.append_messages(
            "tools",
            [
                user("check the config"),
                assistant(
                    None, tool_calls=[call("c1", "read_file", '{"path": "conf/haproxy.cfg"}')]
                ),
                tool_result("c1", "read_file", "frontend http"),
            ],
        )
        add(store, "prose", None, "I like to read files")
        by_name = store.search("read_file", user_id=None)
        assert hit_ids(by_name) == ["tools"] and by_name[0].matches == 2
        (by_argument,) = store.search("haproxy.cfg", user_id=None)
        assert ">>haproxy.cfg<<" in by_argument.snippet
        assert by_argument.context[0] == SnippetLine(1, "user", "check the config")

    def test_code_like_queries_find_their_text(self, store: SessionStore) -> None:
        add(store, "s", None, "run pytest -k foo against src/app.py:12 then 100% done_ok")
        add(store, "t", None, "nothing to see, app py")
        for query in ['pytest -k "foo"', "src/app.py:12", "100%", "done_ok", '"src/app.py"']:
            assert hit_ids(store.search(query, user_id=None)) == ["s"], query
