"""Conformance checks on retention: an archived session behaves as it did before.

Part of :class:`hermes_core.testing.SessionStoreConformance`; a store without ``retain``
(retention is optional) skips them. Retention packs or drops bodies in a backend's own way
(SQLite packs rows into a blob; PostgreSQL leaves compression to TOAST), so these checks hold
every backend to what a reader sees: compaction, undo and ``set_api_content`` on archived rows
give exactly what they give on rows never archived, and a dropped body's notice is shown but
never found.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from hermes_core.sessions.retention import DAY, DROPPED_NOTICE
from hermes_core.sessions.store import SessionStore, UndoableSessionStore
from hermes_core.testing.store_kit import FILLER, assistant, call, snapshot, tool_result, user

__all__ = ["RetentionChecks"]

SUMMARY = user("[summary] the user asked about sorting, twice", _compressed_summary=True)


def _archive(store: Any, bodies: str = "compress") -> None:
    """Archive every session written so far (the store's clock is the real one)."""
    store.retain(days=1, bodies=bodies, now=time.time() + 3 * DAY)


def _long_session(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """Four long messages (long enough to be packed), API copies and token counts."""
    messages = [
        user(f"sort this list please {FILLER}"),
        assistant(None, tool_calls=[call("c1", "sort", f'{{"items": "{FILLER}"}}')]),
        tool_result("c1", "sort", f"sorted {FILLER}"),
        user(f"and again {FILLER}"),
    ]
    store.open_session(session_id, user_id="u")
    store.append_messages(
        session_id,
        messages,
        api_contents=[f"as sent {FILLER}", None, None, f"again as sent {FILLER}"],
        token_counts=[11, 12, 13, 14],
    )
    return messages


class RetentionChecks:
    """Archived rows take writes, compactions and undo as rows never archived do."""

    @pytest.fixture(autouse=True)
    def _retains(self, store: object) -> None:
        if not callable(getattr(store, "retain", None)):
            pytest.skip("this store has no retain: retention is not available on it")

    def test_compaction_and_undo_of_an_archived_session_match_a_fresh_one(
        self, store: SessionStore
    ) -> None:
        messages = _long_session(store, "old")
        _archive(store)
        _long_session(store, "new")
        for sid in ("old", "new"):
            rows = {r.seq: r for r in store.messages(sid)}
            store.commit_compaction(
                sid, [messages[0], SUMMARY, messages[3]], [1, None, 4], in_place=True
            )
            if isinstance(store, UndoableSessionStore):
                store.restore_view(
                    sid,
                    messages,
                    [1, None, None, 4],
                    api_contents=[rows[n].api_content for n in range(1, 5)],
                    after_seq=5,
                )
        assert snapshot(store, "old") == snapshot(store, "new"), (
            "a compaction (and its undo) of an archived session must keep, copy and archive "
            "the same rows, with their API copies and token counts, as on a fresh one"
        )

    def test_an_api_copy_of_an_archived_row_can_be_cleared(self, store: SessionStore) -> None:
        _long_session(store, "s")
        _archive(store)
        store.set_api_content("s", 1, None)
        assert store.messages("s")[0].api_content is None, (
            "set_api_content(None) on an archived row must clear it, not bring the old back"
        )
        store.set_api_content("s", 4, "changed")
        assert [r.api_content for r in store.messages("s")][3] == "changed"
        assert store.messages("s")[1].message["tool_calls"][0]["id"] == "c1"

    def test_dropped_bodies_show_the_notice_and_it_is_never_found(
        self, store: SessionStore
    ) -> None:
        messages = _long_session(store, "s")
        store.commit_compaction("s", [SUMMARY, messages[3]], [None, 4], in_place=True)
        _archive(store, "drop")
        rows = store.messages("s", include_archived=True)
        assert [r.message.get("content") for r in rows if r.compacted] == [DROPPED_NOTICE] * 3
        for word in ("dropped", "retention", "replaced", "compaction", "sorted"):
            assert store.search(word, user_id="u") == [], (
                f"{word!r}: a dropped body's words, and the notice's, must not be found"
            )
        assert [h.seq for h in store.search("again", user_id="u")] == [4], "kept rows stay"

    def test_drop_reaches_the_rows_a_child_session_summarised(self, store: SessionStore) -> None:
        messages = _long_session(store, "p")
        store.commit_compaction(
            "p", [SUMMARY, messages[3]], [None, 4], in_place=False, child_session_id="c"
        )
        child = snapshot(store, "c")
        _archive(store, "drop")
        parent = store.messages("p", include_archived=True)
        assert [r.message.get("content") for r in parent[:3]] == [DROPPED_NOTICE] * 3, (
            "with a child per compaction, drop must drop the parent's rows the summary replaced"
        )
        assert parent[3].message == messages[3], "a row the child copied is not dropped"
        assert snapshot(store, "c") == child, "the child (the live view) loses nothing"
        assert store.search("sorted", user_id="u") == []
        assert {h.session_id for h in store.search("again", user_id="u")} == {"p", "c"}
