"""Conformance checks on messages: seqs, lossless rows, stale writers, compaction commits.

Part of :class:`hermes_core.testing.SessionStoreConformance`; every method takes the store
(or the opener of further instances) as an argument, so it can also be called directly.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.sessions.store import SessionStore
from hermes_core.testing.store_kit import (
    ROUND_TRIP_MESSAGES,
    OpenStore,
    assistant,
    canonical,
    contents,
    seeded,
    snapshot,
    user,
)

__all__ = ["MessageChecks"]

SUMMARY = user("[summary] the user fixed the flaky test", _compressed_summary=True)


class MessageChecks:
    """Rows come back as given, in order, numbered once; compaction is all or nothing."""

    def test_append_returns_seqs_from_one_that_are_never_reused(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        assert store.last_seq("s") == 0, "a session without rows has last_seq 0"
        assert store.append_messages("s", [user("a"), assistant("b")]) == [1, 2]
        assert store.append_messages("s", []) == [], "appending nothing returns no seqs"
        assert store.append_messages("s", [user("c")]) == [3]
        store.commit_compaction("s", [user("summary")], [None], in_place=True)
        assert store.append_messages("s", [user("d")]) == [5], "a seq was reused"
        assert [m.seq for m in store.messages("s")] == [4, 5], "the view is the summary and d"
        everything = store.messages("s", include_archived=True)
        assert [m.seq for m in everything] == [1, 2, 3, 4, 5], "every row, in seq order"
        store.open_session("t", user_id=None)
        assert store.append_messages("t", [user("x")]) == [1], "seqs are numbered per session"

    def test_every_message_shape_round_trips_losslessly(self, open_store: OpenStore) -> None:
        store = open_store()
        store.open_session("s", user_id=None)
        shapes = list(ROUND_TRIP_MESSAGES)
        assert store.append_messages("s", shapes) == list(range(1, len(shapes) + 1))
        for reader in (store, open_store()):  # this instance, and a second one
            rows = reader.messages("s")
            assert len(rows) == len(shapes), f"{len(shapes)} appended, {len(rows)} read back"
            for n, (row, original) in enumerate(zip(rows, shapes, strict=True)):
                assert canonical(row.message) == canonical(original), (
                    f"message {n} came back changed:\n{row.message!r}\nwas\n{original!r}"
                )
                assert list(row.message) == list(original), (
                    f"message {n} came back with its keys in another order: {list(row.message)}"
                )
                assert (row.session_id, row.seq) == ("s", n + 1)
                assert (row.active, row.compacted, row.api_content) == (True, False, None), row
                assert row.token_count is None, row

    def test_api_contents_token_counts_and_set_api_content(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        store.append_messages(
            "s",
            [user("q"), assistant("a"), user("r")],
            api_contents=["q + recall \x00 ü", None, ""],
            token_counts=[3, None, 0],
        )
        rows = store.messages("s")
        assert [(r.api_content, r.token_count) for r in rows] == [
            ("q + recall \x00 ü", 3),
            (None, None),
            ("", 0),
        ], "api_contents and token_counts must be stored per row as given"
        store.set_api_content("s", 2, "a, as sent")
        store.set_api_content("s", 1, None)
        assert [r.api_content for r in store.messages("s")] == [None, "a, as sent", ""]
        assert contents(store.messages("s")) == ["q", "a", "r"], "the content must not change"
        with pytest.raises(SessionError):
            store.set_api_content("s", 9, "x")

    def test_mismatched_lengths_are_refused_and_change_nothing(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        with pytest.raises(SessionError):
            store.append_messages("s", [user("x"), user("y")], api_contents=["x"])
        with pytest.raises(SessionError):
            store.append_messages("s", [user("x")], token_counts=[1, 2])
        with pytest.raises(SessionError):
            store.commit_compaction("s", [user("x"), user("y")], [None], in_place=True)
        assert store.messages("s", include_archived=True) == [], "a refused write left rows"

    def test_state_is_written_in_the_same_append(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        store.save_state("s", {"old": True})
        store.append_messages("s", [user("a")], state={"guard": 1, "summary": "after a"})
        record = store.get_session("s", user_id=None)
        assert record is not None and dict(record.state) == {"guard": 1, "summary": "after a"}, (
            "append_messages(state=...) must replace the session's state"
        )
        store.append_messages("s", [user("b")])
        record = store.get_session("s", user_id=None)
        assert record is not None and dict(record.state) == {"guard": 1, "summary": "after a"}, (
            "an append without state must leave the state alone"
        )

    def test_a_stale_append_is_refused_and_changes_nothing(self, open_store: OpenStore) -> None:
        mine, theirs = open_store(), open_store()
        mine.open_session("s", user_id=None)
        mine.save_state("s", {"v": 1})
        assert mine.append_messages("s", [user("a")], after_seq=0) == [1]
        assert theirs.append_messages("s", [user("b")], after_seq=1) == [2]  # another host
        before = snapshot(mine, "s")
        for stale in (0, 1, 3):
            with pytest.raises(StaleSessionError):
                mine.append_messages("s", [user("lost")], state={"v": 2}, after_seq=stale)
        assert snapshot(mine, "s") == before, "a stale append changed the rows"
        record = mine.get_session("s", user_id=None)
        assert record is not None and dict(record.state) == {"v": 1}, "a stale append set state"
        assert mine.last_seq("s") == 2, "a stale append moved last_seq"
        assert mine.append_messages("s", [user("c")], after_seq=2) == [3]

    def test_a_stale_compaction_is_refused_and_changes_nothing(self, open_store: OpenStore) -> None:
        mine, theirs = open_store(), open_store()
        messages = seeded(mine)
        theirs.append_messages("s", [user("from another host")], after_seq=6)
        before = snapshot(mine, "s")
        for in_place in (True, False):
            with pytest.raises(StaleSessionError):
                mine.commit_compaction(
                    "s", [SUMMARY, messages[5]], [None, 6], in_place=in_place,
                    child_session_id="s-2", after_seq=6,
                )  # fmt: skip
        assert snapshot(mine, "s") == before, "a stale compaction changed the rows"
        parent = mine.get_session("s", user_id="u")
        assert parent is not None and parent.ended_at is None, "a stale compaction ended it"
        assert mine.get_session("s-2", user_id="u") is None, "a stale compaction made a child"
        done = mine.commit_compaction("s", [SUMMARY], [None], in_place=True, after_seq=7)
        assert done.seqs == (8,), f"a fresh after_seq must commit: {done}"

    def test_a_guarded_write_to_a_session_compacted_into_a_child_is_stale(
        self, open_store: OpenStore
    ) -> None:
        """A host that still holds the parent's view must not write to the ended parent
        (the conversation goes on in the child): its writes are stale, guarded or not, also
        when the parent had been ended ("closed") before it was compacted."""
        mine, theirs = open_store(), open_store()
        messages = seeded(mine)
        theirs.end_session("s", "closed")
        theirs.commit_compaction(
            "s", [SUMMARY, messages[5]], [None, 6], in_place=False,
            child_session_id="s-2", after_seq=6,
        )  # fmt: skip
        before = snapshot(mine, "s")
        for guard in (6, None):
            with pytest.raises(StaleSessionError):
                mine.append_messages("s", [user("late")], after_seq=guard)
        with pytest.raises(StaleSessionError):
            mine.commit_compaction(
                "s", [SUMMARY], [None], in_place=False, child_session_id="s-3", after_seq=6
            )
        assert snapshot(mine, "s") == before, "a write to the compacted parent changed it"
        assert mine.get_session("s-3", user_id="u") is None, "a second child was made"

    def test_last_seq_counts_archived_rows(self, store: SessionStore) -> None:
        messages = seeded(store)
        store.commit_compaction("s", [messages[0]], [1], in_place=True)  # archives 2..6
        assert [m.seq for m in store.messages("s")] == [1], "only the named row stays active"
        assert store.last_seq("s") == 6, "archived rows still count towards last_seq"
        assert store.append_messages("s", [user("next")], after_seq=6) == [7]
        store.commit_compaction("s", [SUMMARY], [None], in_place=True)
        assert store.last_seq("s") == 8, "the summary's seq is the newest"

    def test_compaction_in_place_archives_keeps_and_reorders(self, store: SessionStore) -> None:
        messages = seeded(store)
        store.set_api_content("s", 6, "fix it, as sent")
        new_view = [messages[0], SUMMARY, messages[5], messages[4]]  # a reorder, too
        result = store.commit_compaction("s", new_view, [1, None, 6, 5], in_place=True)
        assert (result.session_id, result.seqs, result.archived) == ("s", (1, 7, 6, 5), 3), (
            f"in place: seqs[i] must be the row holding messages[i]; got {result}"
        )
        active = store.messages("s")
        assert [canonical(m.message) for m in active] == [canonical(m) for m in new_view], (
            "the active view must be the committed messages"
        )
        assert [m.seq for m in active] == [1, 7, 6, 5], "the active view is in the new order"
        assert [m.token_count for m in active] == [1, None, 6, 5], "kept rows keep their data"
        assert [m.api_content for m in active] == [None, None, "fix it, as sent", None]
        assert all(m.active and not m.compacted for m in active), "active rows are not compacted"
        everything = store.messages("s", include_archived=True)
        assert [m.seq for m in everything] == [1, 2, 3, 4, 5, 6, 7], "include_archived: seq order"
        assert [(m.seq, m.active, m.compacted) for m in everything if not m.active] == [
            (2, False, True),
            (3, False, True),
            (4, False, True),
        ], "replaced rows must become active=0, compacted=1"
        original = [canonical(m.message) for m in everything[:6]]
        assert original == [canonical(m) for m in messages], "the original transcript is kept"

    def test_appends_after_a_compaction_land_at_the_end_of_the_view(
        self, store: SessionStore
    ) -> None:
        messages = seeded(store)
        store.commit_compaction("s", [messages[5], SUMMARY], [6, None], in_place=True)
        assert store.append_messages("s", [assistant("done")]) == [8]
        assert contents(store.messages("s")) == ["fix it", SUMMARY["content"], "done"]

    def test_successive_compactions_keep_every_original_row(self, store: SessionStore) -> None:
        messages = seeded(store)
        store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
        store.append_messages("s", [assistant("one"), user("two")])
        second = user("[summary 2]")
        store.commit_compaction("s", [second], [None], in_place=True)
        assert contents(store.messages("s")) == ["[summary 2]"], "the view is the new summary"
        everything = store.messages("s", include_archived=True)
        assert [m.seq for m in everything] == list(range(1, 11)), "a row was lost or doubled"
        assert sum(m.compacted for m in everything) == 9, "5 + summary + 'fix it' + 2 appended"

    def test_compaction_as_a_child_ends_the_parent(self, store: SessionStore) -> None:
        messages = seeded(store)
        before = snapshot(store, "s")
        new_view = [messages[0], SUMMARY, messages[5]]
        result = store.commit_compaction(
            "s", new_view, [1, None, 6], in_place=False, child_session_id="s-2"
        )
        assert (result.session_id, result.seqs, result.archived) == ("s-2", (1, 2, 3), 0), result
        parent = store.get_session("s", user_id="u")
        child = store.get_session("s-2", user_id="u")
        assert parent is not None and child is not None, "the child must belong to the same user"
        assert (parent.end_reason, parent.ended_at is not None) == ("compression", True), parent
        assert (child.parent_session_id, child.ended_at) == ("s", None), child
        assert snapshot(store, "s") == before, "the parent's rows must be left as they were"
        rows = store.messages("s-2")
        assert [canonical(m.message) for m in rows] == [canonical(m) for m in new_view], (
            "the child's rows must be the committed messages"
        )
        assert tuple(m.seq for m in rows) == result.seqs, "seqs[i] must store messages[i]"
        assert set(store.lineage("s-2")) == {"s", "s-2"}
        assert store.get_session("s-2", user_id=None) is None, "the child is the parent user's"
        newest = store.list_sessions(user_id="u", limit=1)
        assert [r.id for r in newest] == ["s-2"], "the child is the newest session"

    @pytest.mark.parametrize("in_place", [True, False], ids=["in_place", "child"])
    @pytest.mark.parametrize(
        "origins",
        [[1, None, 99], [1, None, 1], [1, None]],
        ids=["unknown-seq", "seq-twice", "too-few"],
    )
    def test_a_refused_compaction_changes_nothing(
        self, store: SessionStore, origins: list[Any], in_place: bool
    ) -> None:
        messages = seeded(store)
        before = snapshot(store, "s"), store.list_sessions(user_id="u")
        with pytest.raises(SessionError):
            store.commit_compaction(
                "s", [messages[0], SUMMARY, messages[5]], origins, in_place=in_place,
                child_session_id="child",
            )  # fmt: skip
        after = snapshot(store, "s"), store.list_sessions(user_id="u")
        assert after == before, f"origins {origins} were refused but the store changed"

    def test_an_archived_row_cannot_be_an_origin(self, store: SessionStore) -> None:
        messages = seeded(store)
        store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
        before = snapshot(store, "s")
        with pytest.raises(SessionError):
            store.commit_compaction("s", [messages[1]], [2], in_place=True)
        assert snapshot(store, "s") == before, "a refused compaction changed the rows"
