"""Compaction commits: in place and as a child, all or nothing, archived rows kept."""

from __future__ import annotations

import pytest
from sessions_support import assistant, call, snapshot, tool_result, user

from hermes_core.errors import SessionError
from hermes_core.sessions.sqlite import SQLiteSessionStore

SUMMARY = user("[summary] the user fixed the flaky test", _compressed_summary=True)


def seeded(store: SQLiteSessionStore, session_id: str = "s") -> list[dict[str, object]]:
    messages = [
        {"role": "system", "content": "be brief"},
        user("the test in tests/test_app.py is flaky"),
        assistant(None, tool_calls=[call("c1", "read_file", '{"path": "tests/test_app.py"}')]),
        tool_result("c1", "read_file", "def test_app(): assert retry()"),
        assistant("it depends on the clock"),
        user("fix it"),
    ]
    store.open_session(session_id, user_id="u", model="m", title="flaky")
    store.append_messages(session_id, messages, token_counts=[1, 2, 3, 4, 5, 6])
    return messages


def test_in_place_archives_the_replaced_rows_and_orders_the_new_view(
    store: SQLiteSessionStore,
) -> None:
    messages = seeded(store)
    new_view = [messages[0], SUMMARY, messages[5], messages[4]]  # a reorder, for the test's sake
    result = store.commit_compaction("s", new_view, [1, None, 6, 5], in_place=True)
    assert result.session_id == "s"
    assert result.seqs == (1, 7, 6, 5)
    assert result.archived == 3
    active = store.messages("s")
    assert [m.message for m in active] == new_view
    assert [m.seq for m in active] == [1, 7, 6, 5]
    assert [m.token_count for m in active] == [1, None, 6, 5]  # kept rows keep their data
    everything = store.messages("s", include_archived=True)
    assert [m.seq for m in everything] == [1, 2, 3, 4, 5, 6, 7]
    assert [(m.seq, m.active, m.compacted) for m in everything if not m.active] == [
        (2, False, True),
        (3, False, True),
        (4, False, True),
    ]
    assert [m.message for m in everything[:6]] == messages  # the original transcript


def test_appends_after_a_compaction_land_at_the_end_of_the_view(
    store: SQLiteSessionStore,
) -> None:
    messages = seeded(store)
    store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
    store.append_messages("s", [assistant("done")])
    assert [m.message["content"] for m in store.messages("s")] == [
        SUMMARY["content"],
        "fix it",
        "done",
    ]


def test_successive_compactions_keep_every_original_row(store: SQLiteSessionStore) -> None:
    messages = seeded(store)
    store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
    store.append_messages("s", [assistant("one"), user("two")])
    second = user("[summary 2]")
    store.commit_compaction("s", [second], [None], in_place=True)
    assert [m.message for m in store.messages("s")] == [second]
    archived = [m for m in store.messages("s", include_archived=True) if m.compacted]
    assert len(archived) == 9  # 5 + summary + "fix it" + "one" + "two"


def test_as_a_child_the_parent_ends_and_the_child_holds_the_new_view(
    store: SQLiteSessionStore,
) -> None:
    messages = seeded(store)
    before = snapshot(store, "s")
    new_view = [messages[0], SUMMARY, messages[5]]
    result = store.commit_compaction(
        "s", new_view, [1, None, 6], in_place=False, child_session_id="s-2"
    )
    assert (result.session_id, result.seqs, result.archived) == ("s-2", (1, 2, 3), 0)
    parent = store.get_session("s", user_id="u")
    child = store.get_session("s-2", user_id="u")
    assert parent is not None and child is not None
    assert parent.end_reason == "compression" and parent.ended_at is not None
    assert (child.parent_session_id, child.user_id, child.model) == ("s", "u", "m")
    assert child.ended_at is None
    assert snapshot(store, "s") == before  # the parent's rows are left as they were
    rows = store.messages("s-2")
    assert [m.message for m in rows] == new_view
    assert [m.token_count for m in rows] == [1, None, 6]
    assert store.lineage("s") == ["s", "s-2"]
    assert store.lineage("s-2") == ["s", "s-2"]
    assert store.get_session("s-2", user_id=None) is None  # same user only


def test_a_child_needs_a_new_id(store: SQLiteSessionStore) -> None:
    messages = seeded(store)
    store.open_session("taken", user_id="u")
    for child in (None, "", "taken", "s"):
        with pytest.raises(SessionError):
            store.commit_compaction("s", [messages[5]], [6], in_place=False, child_session_id=child)
    parent = store.get_session("s", user_id="u")
    assert parent is not None and parent.ended_at is None


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
def test_a_failed_commit_leaves_the_store_unchanged(
    store: SQLiteSessionStore, origins: list[object], error: str, in_place: bool
) -> None:
    messages = seeded(store)
    before = snapshot(store, "s")
    sessions_before = store.list_sessions(user_id="u")
    with pytest.raises(SessionError, match=error):
        store.commit_compaction(
            "s",
            [messages[0], SUMMARY, messages[5]],
            origins,  # type: ignore[arg-type]
            in_place=in_place,
            child_session_id="child",
        )
    assert snapshot(store, "s") == before
    assert store.list_sessions(user_id="u") == sessions_before


def test_an_archived_row_cannot_be_an_origin(store: SQLiteSessionStore) -> None:
    messages = seeded(store)
    store.commit_compaction("s", [SUMMARY, messages[5]], [None, 6], in_place=True)
    before = snapshot(store, "s")
    with pytest.raises(SessionError, match="origins\\[0\\] = 2 is not an active row"):
        store.commit_compaction("s", [messages[1]], [2], in_place=True)
    assert snapshot(store, "s") == before


def test_a_changed_message_under_an_origin_is_stored_as_new(store: SQLiteSessionStore) -> None:
    messages = seeded(store)
    edited = {**messages[5], "content": "fix it, please"}
    result = store.commit_compaction("s", [SUMMARY, edited], [None, 6], in_place=True)
    assert result.seqs == (7, 8)
    assert [m.message for m in store.messages("s")] == [SUMMARY, edited]
    original = store.messages("s", include_archived=True)[5]
    assert (original.seq, original.message, original.compacted) == (6, messages[5], True)
