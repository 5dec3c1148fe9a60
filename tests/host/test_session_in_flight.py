"""Hosts that compact between tool calls (issue 24 item 3): ``prepare`` with a batch in flight,
automatic and after an overflow, and ``Session.compact`` (hermes-agent's engine path). The
call message and the results that arrived stay verbatim at the end; the results that arrive
after the compaction attach to their call, in the store and on the wire."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from host_support import big_file, make_hermes, tool_round, user

import hermes_core as hc
from hermes_core.transcript.validation import validate_messages

Message = dict[str, Any]
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
CONFIG = {"model": {"context_length": 16_000}}


def _history(rounds: int) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    messages.append(user("Make the test suite pass."))
    for n in range(rounds):
        messages += tool_round(n, big_file(n, 40))
    return messages


def _batch(size: int, arrived: int) -> tuple[list[Message], list[Message]]:
    ids = [f"live{k}" for k in range(size)]
    calls = [
        {
            "id": i,
            "type": "function",
            "function": {"name": "browser_shot", "arguments": json.dumps({"page": i})},
        }
        for i in ids
    ]
    results: list[Message] = [
        {
            "role": "tool",
            "tool_call_id": i,
            "content": [{"type": "text", "text": f"shot of {i}"}, IMAGE],
        }
        for i in ids
    ]
    call: Message = {"role": "assistant", "content": "Taking screenshots.", "tool_calls": calls}
    return [call, *results[:arrived]], results[arrived:]


def _assert_whole(wire: list[Message], batch: list[Message], later: list[Message]) -> None:
    assert wire[-len(batch) :] == batch  # the call and its results so far, verbatim, at the end
    assert validate_messages([*wire, *later]) == []  # what is still running attaches to it


def test_prepare_with_a_batch_in_flight_compacts_around_it(tmp_path: Path) -> None:
    events: list[hc.SessionEvent] = []
    batch, later = _batch(4, 2)
    messages = _history(30) + batch  # the host's own list: it only grows
    with (
        make_hermes(tmp_path, CONFIG) as host,
        host.session("s1", on_event=events.append) as session,
    ):
        wire = session.prepare(messages)
        assert "compaction_committed" in [e.kind for e in events]
        assert wire[: -len(batch)] != messages[: -len(batch)]  # compacted before the batch
        _assert_whole(wire, batch, later)
        messages += later  # the rest of the batch arrives after the compaction
        wire = session.prepare(messages)
        assert validate_messages(wire) == [] and wire[-len(later) :] == later
        store = host.session_store
        assert store is not None
        active = [r.message for r in store.messages("s1")]
        assert validate_messages(active) == []  # the store's view pairs them too


def test_an_overflow_keeps_the_images_of_the_batch_in_flight(tmp_path: Path) -> None:
    events: list[hc.SessionEvent] = []
    batch, later = _batch(3, 2)
    messages = _history(6)
    messages[-1] = {**messages[-1], "content": [{"type": "text", "text": "old shot"}, IMAGE]}
    messages += batch
    # screenshots so dear that the compacted prompt is still over: the last resort (strip
    # every tool image) runs, and must pass over the ones of the batch in flight
    config = {**CONFIG, "compression": {"image_tokens": 8_000}}
    with (
        make_hermes(tmp_path, config) as host,
        host.session("s2", on_event=events.append) as session,
    ):
        session.prepare(messages[: -len(batch)])
        session.on_overflow(400, "This model's maximum context length is 16000 tokens.")
        wire = session.prepare(messages)  # forced by the overflow, with a batch in flight
        finished = next(e for e in events if e.kind == "compression_finished")
        assert finished.data["tokens_after"] >= session.compressor.threshold_tokens
        _assert_whole(wire, batch, later)
        older = [m["content"] for m in wire[: -len(batch)] if isinstance(m.get("content"), list)]
        assert all(IMAGE not in content for content in older)


def test_compact_with_a_batch_in_flight_then_the_results_arrive(tmp_path: Path) -> None:
    """hermes-agent's engine path: ``compress()`` between a call and its result."""
    batch, later = _batch(5, 1)
    messages = _history(30) + batch
    with make_hermes(tmp_path, CONFIG) as host, host.session("s3") as session:
        out = session.compact(messages, force=True)
        assert len(out) < len(messages)
        _assert_whole(out, batch, later)
        out = session.compact(out + later)  # the agent appends to the list it got back
        assert validate_messages(out) == [] and out[-len(later) :] == later


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_the_hourly_limit_blocks_with_an_event_and_survives_a_restart(tmp_path: Path) -> None:
    config = {**CONFIG, "compression": {"max_per_hour": 1}}
    events: list[hc.SessionEvent] = []
    clock = Clock()
    messages = _history(30)
    with make_hermes(tmp_path, config) as host:
        with host.session("s4", on_event=events.append) as session:
            session.compressor.use_clock(clock)
            wire = session.prepare(messages)
            assert "compaction_committed" in [e.kind for e in events]
            messages, n = list(wire), 30
            compressor = session.compressor
            while not compressor.carry.due(hc.count_tokens(messages)):
                messages += tool_round(n, big_file(n, 4))  # until an early compaction is due
                n += 1
                clock.now += 30
                wire = session.prepare(messages)
                assert wire == messages
            assert hc.count_tokens(messages) < compressor.threshold_tokens
            again = session.prepare(messages)
            assert again == messages  # due before the threshold, held, and the session goes on
            (blocked,) = [e.data for e in events if e.kind == "compression_blocked"]
            assert "max_per_hour: 1" in blocked["reason"] and blocked["lifts_in_s"] > 2_000
        with host.session("s4") as resumed:  # another process, the same conversation
            block = resumed.compressor.rate.block()
            assert block is not None and "max_per_hour: 1" in block.reason
