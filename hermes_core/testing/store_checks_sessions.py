"""Conformance checks on session records: ownership, listing, end, state, counters, lineage.

Part of :class:`hermes_core.testing.SessionStoreConformance`; every method takes the store
(or the opener of further instances) as an argument, so it can also be called directly.
"""

from __future__ import annotations

import pytest

from hermes_core.errors import SessionError
from hermes_core.sessions.store import SessionRecord, SessionStore
from hermes_core.testing.store_kit import OpenStore, canonical, family, seeded, user

__all__ = ["SessionChecks"]

#: owner and intruder pairs: the intruder may never resume, read or list the owner's session
#: (``None`` is the anonymous principal; ``""`` is a named user like any other)
OWNER_PAIRS: tuple[tuple[str | None, str | None], ...] = (
    ("alice", "bob"),
    ("alice", None),
    (None, "alice"),
    ("alice", "Alice"),
    ("alice", "alice "),
    ("alice", ""),
    ("", None),
    (None, ""),
)


def _get(store: SessionStore, session_id: str, user_id: str | None) -> SessionRecord:
    record = store.get_session(session_id, user_id=user_id)
    assert record is not None, f"get_session({session_id!r}, user_id={user_id!r}) is None"
    return record


class SessionChecks:
    """Sessions belong to one user; their record fields behave as the protocol says."""

    def test_it_is_a_session_store_with_a_backend_name(self, store: SessionStore) -> None:
        assert isinstance(store, SessionStore), "the store lacks SessionStore methods"
        assert isinstance(store.backend, str) and store.backend, "backend must be a short name"

    def test_open_session_creates_the_record(self, store: SessionStore) -> None:
        record = store.open_session("s", user_id="alice", model="m1", title="first")
        assert (record.id, record.user_id, record.model, record.title) == (
            "s",
            "alice",
            "m1",
            "first",
        ), f"open_session returned {record}"
        assert record.parent_session_id is None and record.ended_at is None, record
        assert record.end_reason is None, record
        assert record.started_at > 0, "started_at must be the creation time (epoch seconds)"
        assert dict(record.counters) == {} and dict(record.state) == {}, record
        assert _get(store, "s", "alice") == record, "get_session differs from open_session"

    def test_open_session_resumes_an_existing_session_unchanged(self, store: SessionStore) -> None:
        first = store.open_session("s", user_id="alice", model="m1", title="first")
        again = store.open_session("s", user_id="alice", model="m2", title="other")
        assert again == first, "resuming must return the stored session, unchanged"
        assert _get(store, "s", "alice") == first, "resuming changed the stored session"

    @pytest.mark.parametrize(("owner", "intruder"), OWNER_PAIRS)
    def test_another_users_session_is_never_resumed(
        self, store: SessionStore, owner: str | None, intruder: str | None
    ) -> None:
        record = store.open_session("s", user_id=owner, title="mine")
        store.append_messages("s", [user("private")])
        with pytest.raises(SessionError):
            store.open_session("s", user_id=intruder)
        assert _get(store, "s", owner) == record, "a refused open changed the session"
        rows = [m.message["content"] for m in store.messages("s")]
        assert rows == ["private"], "a refused open changed the rows"

    @pytest.mark.parametrize(("owner", "intruder"), OWNER_PAIRS)
    def test_get_and_list_sessions_only_for_their_owner(
        self, store: SessionStore, owner: str | None, intruder: str | None
    ) -> None:
        record = store.open_session("s", user_id=owner)
        assert store.get_session("s", user_id=intruder) is None, (
            f"user {intruder!r} read the session of user {owner!r}"
        )
        assert store.list_sessions(user_id=intruder) == [], (
            f"user {intruder!r} listed the session of user {owner!r}"
        )
        assert store.list_sessions(user_id=owner) == [record], "the owner must list it"
        assert store.get_session("missing", user_id=owner) is None

    def test_list_sessions_is_newest_first_per_user_with_a_limit(self, store: SessionStore) -> None:
        """Newest by ``started_at``; sessions started in one clock tick, in the order they were
        created (the newest last created first), so the order never depends on the clock."""
        owners = ["alice", None, "alice", "bob", None, "alice", ""]
        for n, owner in enumerate(owners):
            store.open_session(f"s{n}", user_id=owner)
        listed = {
            owner: [r.id for r in store.list_sessions(user_id=owner)]
            for owner in ("alice", None, "bob", "", "carol")
        }
        assert listed == {
            "alice": ["s5", "s2", "s0"],
            None: ["s4", "s1"],
            "bob": ["s3"],
            "": ["s6"],
            "carol": [],
        }, "list_sessions must give the caller's sessions only, the newest first"
        assert [r.id for r in store.list_sessions(user_id="alice", limit=2)] == ["s5", "s2"]
        for record in store.list_sessions(user_id="alice"):
            assert record.user_id == "alice", f"alice listed {record}"

    def test_end_session_keeps_the_first_reason(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        store.end_session("s", "user_exit")
        first = _get(store, "s", None)
        assert first.end_reason == "user_exit" and first.ended_at is not None, first
        assert first.ended_at >= first.started_at, "ended before it started"
        store.end_session("s", "timeout")
        again = _get(store, "s", None)
        assert (again.end_reason, again.ended_at) == ("user_exit", first.ended_at), (
            "a second end_session must keep the first reason and time"
        )

    def test_save_state_replaces_the_whole_state(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        store.save_state("s", {"guard": {"ineffective": 1}, "summary": "previous"})
        assert dict(_get(store, "s", None).state) == {
            "guard": {"ineffective": 1},
            "summary": "previous",
        }
        state = {"ratio": 3.9, "nested": [1, None, "ü\x00"], "flag": True}
        store.save_state("s", state)
        saved = _get(store, "s", None).state
        assert canonical(saved) == canonical(state), "save_state must replace, not merge"

    def test_add_counters_adds_and_creates_at_zero(self, store: SessionStore) -> None:
        store.open_session("s", user_id=None)
        store.add_counters("s", {"messages": 2, "compactions": 1})
        store.add_counters("s", {"messages": 3, "prompt_tokens": 1200})
        store.add_counters("s", {"compactions": -1})
        store.add_counters("s", {})
        assert dict(_get(store, "s", None).counters) == {
            "messages": 5,
            "compactions": 0,
            "prompt_tokens": 1200,
        }, "add_counters must add each delta to its counter (a new one starts at 0)"

    def test_lineage_walks_to_ancestors_and_descendants(self, store: SessionStore) -> None:
        family(store)
        assert _get(store, "child", "u").parent_session_id == "root"
        expected = {
            "grandchild": {"root", "child", "grandchild"},
            "root": {"root", "child", "sibling", "grandchild"},
            "child": {"root", "child", "grandchild"},
            "sibling": {"root", "sibling"},
            "stranger": {"stranger"},
        }
        for session_id, relatives in expected.items():
            lineage = store.lineage(session_id)
            assert len(lineage) == len(set(lineage)), f"lineage({session_id!r}) repeats: {lineage}"
            assert set(lineage) == relatives, f"lineage({session_id!r}) = {lineage}"

    def test_writes_to_an_unknown_session_are_refused(self, store: SessionStore) -> None:
        for write in (
            lambda: store.append_messages("missing", [user("x")]),
            lambda: store.commit_compaction("missing", [user("x")], [None], in_place=True),
            lambda: store.end_session("missing", "x"),
            lambda: store.save_state("missing", {"a": 1}),
            lambda: store.add_counters("missing", {"messages": 1}),
        ):
            with pytest.raises(SessionError):
                write()
        assert store.messages("missing") == [], "a refused write left rows behind"
        assert store.get_session("missing", user_id=None) is None
        assert store.last_seq("missing") == 0, "a session that does not exist has no rows"

    def test_close_twice_is_safe(self, open_store: OpenStore) -> None:
        store = open_store()
        store.open_session("s", user_id=None)
        store.close()
        store.close()

    def test_everything_survives_close_and_reopen(self, open_store: OpenStore) -> None:
        store = open_store()
        messages = seeded(store)
        store.commit_compaction("s", [user("[summary]"), messages[5]], [None, 6], in_place=True)
        store.save_state("s", {"summary": "kept"})
        store.add_counters("s", {"compactions": 1})
        store.open_session("other", user_id="u", parent_session_id="s")
        store.end_session("other", "user_exit")
        before = (
            store.list_sessions(user_id="u"),
            [(m.seq, m.active, m.compacted, canonical(m.message)) for m in store.messages("s")],
            [canonical(m.message) for m in store.messages("s", include_archived=True)],
            store.last_seq("s"),
        )
        store.close()
        reopened = open_store()
        after = (
            reopened.list_sessions(user_id="u"),
            [(m.seq, m.active, m.compacted, canonical(m.message)) for m in reopened.messages("s")],
            [canonical(m.message) for m in reopened.messages("s", include_archived=True)],
            reopened.last_seq("s"),
        )
        assert after == before, "a reopened store must hold everything committed before close"
        assert "s" in {h.session_id for h in reopened.search("flaky", user_id="u")}
