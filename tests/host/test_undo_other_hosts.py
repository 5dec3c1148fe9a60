"""Undo with other hosts on the same conversation (docs/undo.md): an undo checks every
session it writes, a host holding a child that another process's undo abandoned is told
(stale) and follows the conversation back with its new turns kept, and an undone transcript
is never sent past the window's edge."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from undo_driver import FILLER, Driver, make_host

import hermes_core as hc
from hermes_core.compression.assemble import is_summary_message
from hermes_core.host.events import SessionEvent
from hermes_core.host.undo_history import CompactionRecord
from hermes_core.host.undo_restore import left_at

CHILDREN = {"model": {"context_length": 16_000}, "compression": {"in_place": False}}


def _contents(store: Any, sid: str) -> list[str]:
    return [str(r.message.get("content")) for r in store.messages(sid)]


def _compacted_into_a_child(host: hc.Hermes) -> Driver:
    driver = Driver(host, "conv")
    for _ in range(8):
        driver.turn()
    driver.compact()
    assert driver.session.session_id != "conv"
    return driver


def test_an_undo_that_did_not_see_another_hosts_undo_is_stale(tmp_path: Path) -> None:
    """Host B undoes compaction 1 (back to the parent) and adds a turn there; host A, still
    in the child, undoes compaction 1 too: refused, and B's turn and history stay."""
    with make_host(tmp_path, CHILDREN) as host, make_host(tmp_path, CHILDREN) as other:
        a = _compacted_into_a_child(host)
        child = a.session.session_id
        with other.session("conv", user_id="u") as b:
            b.undo_compaction()
            b.prepare([*b.messages, {"role": "user", "content": "B after its undo"}])
            b.end_turn([*b.messages, {"role": "assistant", "content": "B's reply"}])
        store = host.session_store
        assert store is not None
        parent_before = _contents(store, "conv")
        state_before = store.get_session("conv", user_id="u")
        with pytest.raises(hc.StaleSessionError, match="nothing was undone"):
            a.session.undo_compaction()
        assert _contents(store, "conv") == parent_before  # B's turn is still active
        assert parent_before[-2:] == ["B after its undo", "B's reply"]
        after = store.get_session("conv", user_id="u")
        assert state_before is not None and after is not None
        assert after.state == state_before.state  # B's history is not overwritten
        assert a.session.session_id == "conv"  # A followed the conversation back
        assert a.session.messages[-1]["content"] == "B's reply"
        gone = store.get_session(child, user_id="u")
        assert gone is not None and gone.end_reason == "undone"


def test_an_undo_repeated_by_a_host_that_missed_the_first_is_stale(tmp_path: Path) -> None:
    """The same, with no write after B's undo: the parent's rows are as A knew them, but the
    child A would abandon was abandoned already."""
    with make_host(tmp_path, CHILDREN) as host, make_host(tmp_path, CHILDREN) as other:
        a = _compacted_into_a_child(host)
        with other.session("conv", user_id="u") as b:
            b.undo_compaction()
        store = host.session_store
        assert store is not None
        before = store.get_session("conv", user_id="u")
        with pytest.raises(hc.StaleSessionError):
            a.session.undo_compaction()
        after = store.get_session("conv", user_id="u")
        assert before is not None and after is not None and after.state == before.state
        records = a.session.state.history.records  # reloaded: B's undo, undo number 1
        assert [(r.n, r.undone and r.undone.k) for r in records] == [(1, 1)]


def test_a_parent_not_as_the_history_left_it_is_stale(tmp_path: Path) -> None:
    """The undo writes the parent at the seq the history recorded when the child left it,
    never at whatever the parent holds now (here the host's history disagrees with the
    store, as one out of step would): stale, and nothing changes."""
    with make_host(tmp_path, CHILDREN) as host:
        a = _compacted_into_a_child(host)
        store = host.session_store
        assert store is not None
        history = a.session.state.history
        record = history.records[0]
        assert record.last == store.last_seq("conv")
        history.records[0] = replace(record, last=record.last - 1)
        rows = _contents(store, "conv")
        with pytest.raises(hc.StaleSessionError):
            a.session.undo_compaction()
        assert _contents(store, "conv") == rows
        assert a.session.undo_compaction()  # reloaded, the history agrees: it may


def test_the_parent_is_checked_at_the_seq_the_child_left_it() -> None:
    records = [
        CompactionRecord(1, "s", "s", 0.0, ((1, 9),), ((10, 10),), last=9),
        CompactionRecord(2, "s", "c1", 0.0, ((1, 12),), ((1, 2),), last=12),
        CompactionRecord(3, "c1", "c2", 0.0, ((1, 4),), ((1, 2),), last=4),
        CompactionRecord(4, "c2", "c3", 0.0, ((1, 4),), ((1, 2),)),  # written before `last`
    ]
    assert left_at(records) == {"s": 12, "c1": 4}


def test_a_host_in_a_child_another_process_undid_goes_back_with_its_turn(
    tmp_path: Path,
) -> None:
    switched: list[tuple[str, dict[str, Any]]] = []
    with make_host(tmp_path, CHILDREN) as host, make_host(tmp_path, CHILDREN) as other:
        a = _compacted_into_a_child(host)
        child = a.session.session_id
        store = host.session_store
        assert store is not None
        with other.session("conv", user_id="u") as b:
            b.undo_compaction()
        dead_rows = store.last_seq(child)

        def listen(event: SessionEvent) -> None:
            if event.kind == "session_switched":
                switched.append((event.session_id, dict(event.data)))

        a.session._listener = listen
        ask = {"role": "user", "content": f"a new question {FILLER}"}
        sent = a.session.prepare([*a.session.messages, ask])
        assert sent[-1]["content"].startswith("a new question")
        a.session.end_turn([*a.session.messages, {"role": "assistant", "content": "an answer"}])
        assert store.last_seq(child) == dead_rows  # nothing went into the abandoned child
        assert a.session.session_id == "conv"
        assert switched == [(child, {"back_to": "conv"})]
        assert not any(is_summary_message(m) for m in a.session.messages)  # the undone view
        assert _contents(store, "conv")[-2:] == [ask["content"], "an answer"]
        a.restart()  # and a resume holds the turn
        assert a.session.session_id == "conv"
        assert [m["content"] for m in a.session.messages[-2:]] == [ask["content"], "an answer"]


def test_resuming_an_abandoned_child_lands_where_the_conversation_went(tmp_path: Path) -> None:
    with make_host(tmp_path, CHILDREN) as host:
        a = _compacted_into_a_child(host)
        child = a.session.session_id
        a.session.undo_compaction()
        a.session.close()
        with host.session(child, user_id="u") as again:
            assert again.session_id == "conv"


def test_a_compaction_of_an_abandoned_child_is_not_committed_there(tmp_path: Path) -> None:
    with make_host(tmp_path, CHILDREN) as host, make_host(tmp_path, CHILDREN) as other:
        a = _compacted_into_a_child(host)
        child = a.session.session_id
        with other.session("conv", user_id="u") as b:
            b.undo_compaction()
        store = host.session_store
        assert store is not None
        rows = store.last_seq(child)
        a.session.compact_now()
        assert store.last_seq(child) == rows
        assert [s for s in store.lineage("conv") if s not in ("conv", child)] == []
        assert a.session.session_id == "conv"  # reloaded: the conversation went back


def test_after_an_undo_nothing_is_sent_past_the_window_edge(tmp_path: Path) -> None:
    """After an undo the transcript grows within the no-immediate-redo backoff (less than a
    quarter) to 95% of an 8K window: that request compacts instead of going out too long."""
    with make_host(tmp_path, {"model": {"context_length": 8_000}}) as host:
        driver = Driver(host, "conv")
        session = driver.session
        while not session.state.history.records:  # grows until it compacts by itself
            driver.turn()
        session.undo_compaction()
        compressor = session.compressor
        edge = compressor.window_edge()
        restored = compressor.count(session.messages)
        assert restored < edge < restored * 1.25  # the edge comes before the backoff's end
        for n in range(20):
            asked = [*session.messages, {"role": "user", "content": f"question {n} {FILLER}"}]
            sent = session.prepare(asked)
            if compressor.count(asked) >= edge:
                break
            assert len(sent) == len(asked)  # held back below the edge: no immediate redo
            session.end_turn([*session.messages, {"role": "assistant", "content": f"a{n}"}])
        assert compressor.count(asked) >= edge
        assert compressor.count(sent) < edge
        assert any(is_summary_message(m) for m in sent)
