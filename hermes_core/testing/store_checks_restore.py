"""Conformance checks on ``restore_view``: an undo's commit is exact and all or nothing.

Part of :class:`hermes_core.testing.SessionStoreConformance`; every method takes the store as
an argument, so it can also be called directly.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.errors import SessionError, StaleSessionError
from hermes_core.sessions.store import UndoableSessionStore
from hermes_core.testing.store_kit import canonical, seeded, snapshot, user

__all__ = ["RestoreChecks"]

SUMMARY = user("[summary] the user fixed the flaky test", _compressed_summary=True)


class RestoreChecks:
    """Archived rows come back as they were sent; abandoned children stop blocking.

    ``restore_view`` is optional (:class:`UndoableSessionStore`): a store without it skips
    these checks with one line, and undo refuses on it."""

    @pytest.fixture(autouse=True)
    def _undoable(self, store: object) -> None:
        if not isinstance(store, UndoableSessionStore):
            pytest.skip("this store has no restore_view: undo is not available on it")

    def test_restore_brings_archived_rows_back_with_their_api_copies(
        self, store: UndoableSessionStore
    ) -> None:
        messages = seeded(store)
        store.set_api_content("s", 2, "the test is flaky\n\n[recalled: runs on CI]")
        store.commit_compaction("s", [messages[0], SUMMARY], [1, None], in_place=True)
        rows = {r.seq: r for r in store.messages("s", include_archived=True)}
        done = store.restore_view(
            "s",
            messages,
            [1, None, None, None, None, None],
            api_contents=[rows[n].api_content for n in range(1, 7)],
            state={"undone": 1},
            after_seq=7,
        )
        assert (done.session_id, done.seqs, done.archived) == ("s", (1, 8, 9, 10, 11, 12), 1), (
            f"restore_view: kept rows keep their seq, copies get new ones; got {done}"
        )
        active = store.messages("s")
        assert [canonical(r.message) for r in active] == [canonical(m) for m in messages]
        assert [r.api_content for r in active] == [rows[n].api_content for n in range(1, 7)], (
            "a restored row must carry the API copy that was sent"
        )
        summary = [r for r in store.messages("s", include_archived=True) if r.seq == 7]
        assert [(r.active, r.compacted) for r in summary] == [(False, True)], (
            "the undone summary must be archived, never deleted"
        )
        record = store.get_session("s", user_id="u")
        assert record is not None and dict(record.state) == {"undone": 1}, "state not replaced"

    def test_restore_abandons_children_and_opens_the_parent_again(
        self, store: UndoableSessionStore
    ) -> None:
        messages = seeded(store)
        store.commit_compaction(
            "s", [SUMMARY, messages[5]], [None, 6], in_place=False, child_session_id="s-2"
        )
        store.commit_compaction("s-2", [SUMMARY], [None], in_place=False, child_session_id="s-3")
        with pytest.raises(StaleSessionError):  # a live child not abandoned: stale
            store.restore_view("s", messages, [1, 2, 3, 4, 5, 6])
        kept = store.get_session("s-2", user_id="u")
        assert kept is not None and kept.end_reason == "compression", "a refusal changed s-2"
        try:
            store.restore_view("s", messages, [1, 2, 3, 4, 5, 6], abandon=["s-2", "s-3"])
        except StaleSessionError as exc:
            pytest.fail(f"restore_view must end the abandoned children first: {exc}")
        for child in ("s-2", "s-3"):
            found = store.get_session(child, user_id="u")
            assert found is not None and found.end_reason == "undone", (
                f"an abandoned child must end 'undone' whatever it ended with: {found}"
            )
            assert found.ended_at is not None
        parent = store.get_session("s", user_id="u")
        assert parent is not None and (parent.ended_at, parent.end_reason) == (None, None), (
            "the parent the conversation went back to must be open again"
        )
        assert store.append_messages("s", [user("next")], after_seq=6) == [7], (
            "a parent whose children are all abandoned must take writes again"
        )

    def test_a_bad_restore_changes_nothing(self, store: UndoableSessionStore) -> None:
        messages = seeded(store)
        store.open_session("other", user_id="u")
        store.open_session("theirs", user_id="v", parent_session_id=None)
        before = snapshot(store, "s")
        bad_calls: list[Callable[[], object]] = [
            lambda: store.restore_view("s", [SUMMARY], [None], after_seq=5),
            lambda: store.restore_view("s", [SUMMARY], [None], abandon=["other"]),
            lambda: store.restore_view("s", [SUMMARY], [None], abandon=["missing"]),
            lambda: store.restore_view("s", [SUMMARY], [None], abandon=["theirs"]),
            lambda: store.restore_view("s", [SUMMARY], [None], api_contents=[None, None]),
            lambda: store.restore_view("s", [SUMMARY, messages[0]], [None, 99]),
            lambda: store.restore_view("missing", [SUMMARY], [None]),
        ]
        for n, bad in enumerate(bad_calls):
            with pytest.raises(SessionError):
                bad()
            assert snapshot(store, "s") == before, f"refused restore {n} changed the rows"
        for sid in ("other", "theirs"):
            found = store.get_session(sid, user_id="u" if sid == "other" else "v")
            assert found is not None and found.end_reason is None, f"{sid} was ended"

    def test_a_session_an_undo_abandoned_takes_no_more_writes(
        self, store: UndoableSessionStore
    ) -> None:
        """A host still holding the child an undo abandoned must be told (stale), not let
        write turns there that no resume would ever show."""
        messages = seeded(store)
        store.commit_compaction(
            "s", [SUMMARY, messages[5]], [None, 6], in_place=False, child_session_id="s-2"
        )
        store.append_messages("s-2", [user("in the child")], after_seq=2)
        store.restore_view("s", messages, [1, 2, 3, 4, 5, 6], abandon=["s-2"], after_seq=6)
        before = {sid: snapshot(store, sid) for sid in ("s", "s-2")}
        writes: list[Callable[[], object]] = [
            lambda: store.append_messages("s-2", [user("late")], after_seq=3),
            lambda: store.append_messages("s-2", [user("late")]),
            lambda: store.commit_compaction("s-2", [SUMMARY], [None], in_place=True, after_seq=3),
            lambda: store.commit_compaction(
                "s-2", [SUMMARY], [None], in_place=False, child_session_id="s-3"
            ),
            lambda: store.restore_view("s-2", [SUMMARY], [None], after_seq=3),
            # the same undo again, from a host that did not see the first one
            lambda: store.restore_view("s", messages, [1, 2, 3, 4, 5, 6], abandon=["s-2"]),
        ]
        for n, write in enumerate(writes):
            with pytest.raises(StaleSessionError):
                write()
            now = {sid: snapshot(store, sid) for sid in ("s", "s-2")}
            assert now == before, f"refused write {n} into an undone session changed rows"
        assert store.get_session("s-3", user_id="u") is None, "a refused compaction made s-3"
        child = store.get_session("s-2", user_id="u")
        assert child is not None and child.end_reason == "undone"

    def test_a_restore_checks_every_session_it_ends(self, store: UndoableSessionStore) -> None:
        """An undo that did not see the newest rows of a session it abandons, or a child
        another host made of one, would hide them: stale, and nothing changes."""
        messages = seeded(store)
        store.commit_compaction(
            "s", [SUMMARY, messages[5]], [None, 6], in_place=False, child_session_id="s-2"
        )
        store.append_messages("s-2", [user("the undoing host saw this")], after_seq=2)
        store.append_messages("s-2", [user("another host wrote this")], after_seq=3)
        before = {sid: snapshot(store, sid) for sid in ("s", "s-2")}
        restore = store.restore_view
        with pytest.raises(StaleSessionError):
            restore(
                "s", messages, [1, 2, 3, 4, 5, 6], abandon=["s-2"], abandon_after_seq={"s-2": 3}
            )
        with pytest.raises(SessionError, match="not in abandon"):
            restore("s", messages, [1, 2, 3, 4, 5, 6], abandon=["s-2"], abandon_after_seq={"x": 1})
        store.commit_compaction("s-2", [SUMMARY], [None], in_place=False, child_session_id="s-3")
        with pytest.raises(StaleSessionError):  # s-2 goes on in s-3, which it would orphan
            restore(
                "s", messages, [1, 2, 3, 4, 5, 6], abandon=["s-2"], abandon_after_seq={"s-2": 4}
            )
        assert {sid: snapshot(store, sid) for sid in ("s", "s-2")} == before
        for sid in ("s-2", "s-3"):
            found = store.get_session(sid, user_id="u")
            assert found is not None and found.end_reason != "undone", f"{sid} was ended"
        done = restore(
            "s",
            messages,
            [1, 2, 3, 4, 5, 6],
            abandon=["s-2", "s-3"],
            after_seq=6,
            abandon_after_seq={"s-2": 4, "s-3": 1},
        )
        assert done.session_id == "s", "the undo as the store now is must go through"
