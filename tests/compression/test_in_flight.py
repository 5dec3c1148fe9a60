"""Spec 10 §1 and issue 24 item 3: a compaction never tears a turn whose tool calls are running.

The last assistant message whose calls are not all answered, and the results of it that
arrived, stay at the end byte for byte whatever the budget (a parallel batch bigger than the
whole tail included); the results that arrive later attach to their call.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.compression.engine import Compressor
from hermes_core.compression.images import strip_historical_images, strip_tool_images
from hermes_core.compression.in_flight import in_flight_problems, in_flight_start
from hermes_core.compression.invariants import check_invariants
from hermes_core.transcript.validation import validate_messages

Message = dict[str, Any]
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
BULK = st.sampled_from(["ok", "x" * 3_000, "$ pytest -q\nFAILED tests/test_a.py\n" * 150, ""])


def _call(call_id: str, path: str) -> dict[str, Any]:
    arguments = json.dumps({"path": path, "content": "y" * 900})  # long: the arguments pass
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "read_file", "arguments": arguments},
    }


def _result(call_id: str, text: str, image: bool = False) -> Message:
    if image:
        return {
            "role": "tool",
            "tool_call_id": call_id,
            "content": [{"type": "text", "text": text or "shot"}, IMAGE],
        }
    return {"role": "tool", "tool_call_id": call_id, "content": text}


@st.composite
def in_flight_transcripts(draw: Any) -> tuple[list[Message], list[Message]]:
    """(a transcript ending in a partly answered batch, the results still to come)."""
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    n = 0
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        if draw(st.booleans()):
            messages.append(
                {"role": "user", "content": draw(st.sampled_from(["fix it", "go on", "y" * 2_000]))}
            )
        calls = draw(st.integers(min_value=0, max_value=3))
        if calls == 0:
            messages.append({"role": "assistant", "content": "done"})
            continue
        ids = [f"c{n + k}" for k in range(calls)]
        n += calls
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call(i, f"src/{i}.py") for i in ids],
            }
        )
        messages += [_result(i, draw(BULK), draw(st.booleans())) for i in ids]
    if draw(st.booleans()):
        messages.append({"role": "user", "content": "now run the whole suite"})
    size = draw(st.integers(min_value=1, max_value=12))
    ids = [f"live{k}" for k in range(size)]
    messages.append(
        {
            "role": "assistant",
            "content": draw(st.sampled_from([None, "", "Running."])),
            "tool_calls": [_call(i, f"src/{i}.py") for i in ids],
        }
    )
    arrived = draw(st.integers(min_value=0, max_value=size - 1))
    order = draw(st.permutations(ids))
    results = [_result(i, draw(BULK), draw(st.booleans())) for i in order]
    return messages + results[:arrived], results[arrived:]


def _check_not_torn(source: list[Message], after: list[Message], later: list[Message]) -> None:
    start = in_flight_start(source)
    assert start < len(source)
    assert in_flight_problems(source, after) == []
    batch = source[start:]
    assert [json.dumps(m, sort_keys=True) for m in after[-len(batch) :]] == [
        json.dumps(m, sort_keys=True) for m in batch
    ]
    full = after + later  # the results still running arrive after the compaction
    assert validate_messages(full) == []  # each one attaches to its call


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=in_flight_transcripts(),
    window=st.sampled_from([2_048, 4_096, 8_192, 32_000]),
    force=st.booleans(),
)
def test_a_session_whose_tool_calls_are_in_flight_is_never_torn(
    case: Any, window: int, force: bool
) -> None:
    source, later = case
    frozen = copy.deepcopy(source)
    compressor = Compressor(context_length=window, summarizer="fallback")
    result = compressor.compress(source, force=force)
    assert source == frozen  # never mutated
    assert "in flight" not in (result.reason or ""), result.reason  # no phase had to be caught
    _check_not_torn(source, result.messages, later)


def _batch(size: int, arrived: int, *, image: bool = False) -> tuple[list[Message], list[Message]]:
    ids = [f"live{k}" for k in range(size)]
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call(i, f"src/{i}.py") for i in ids],
    }
    results = [_result(i, "$ make\n" + "log line\n" * 400, image) for i in ids]
    return [call, *results[:arrived]], results[arrived:]


def _history(rounds: int) -> list[Message]:
    messages: list[Message] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix the build"},
    ]
    for n in range(rounds):
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [_call(f"h{n}", f"src/h{n}.py")]}
        )
        messages.append(_result(f"h{n}", "$ cat\n" + "old output\n" * 200, image=n % 3 == 0))
    return messages


def test_a_parallel_batch_bigger_than_the_tail_budget_stays_whole_and_verbatim() -> None:
    """The newest user message is far back (it stays in the head): the tail is the batch
    alone, and the summary may not be merged into the call message."""
    batch, later = _batch(12, 7, image=True)
    source = _history(30) + batch
    result = Compressor(context_length=4_096, summarizer="fallback").compress(source, force=True)
    assert result.status == "compressed", result.reason
    _check_not_torn(source, result.messages, later)


def test_pruning_alone_spares_the_batch_images_and_all() -> None:
    batch, later = _batch(3, 2, image=True)
    source = _history(6) + batch
    result = Compressor(context_length=32_000, summarizer="fallback").compress(source, force=True)
    assert result.status in ("compressed", "pruned"), result.reason
    _check_not_torn(source, result.messages, later)


def test_the_image_passes_leave_the_batch_alone() -> None:
    batch, later = _batch(3, 2, image=True)
    source = _history(4) + batch
    start = in_flight_start(source)
    for stripped in (strip_historical_images(source)[0], strip_tool_images(source)[0]):
        assert stripped[start:] == source[start:]
        assert stripped[3] != source[3]  # an older screenshot did go
    answered = source + later
    assert strip_tool_images(answered)[0][-1] != answered[-1]  # once answered, it may go too


def test_the_invariant_check_catches_a_torn_batch() -> None:
    batch, _ = _batch(2, 1)
    source = _history(2) + batch
    assert in_flight_problems(source, source) == []
    assert check_invariants(source, source[:-1])  # the arrived result dropped
    assert in_flight_problems(source, [*source[:-1], {**source[-1], "content": "short"}])
    merged = {**source[-2], "content": "[CONTEXT SUMMARY] ..."}
    assert in_flight_problems(source, [*source[:-2], merged, source[-1]])
    full = source + _batch(2, 1)[1]
    assert in_flight_start(full) == len(full)  # all answered: nothing in flight


def test_proactive_pruning_and_dedup_spare_the_batch() -> None:
    """Below the threshold (spec 10 §8), and forced; the batch's results repeat each other
    word for word, so dedup would keep only the newest copy."""
    batch, later = _batch(4, 3)
    source = [*_history(8), {"role": "user", "content": "now all four at once"}, *batch]
    config = {
        "compression": {
            "proactive_prune_tokens": 1_000,
            "proactive_prune_min_result_chars": 100,
            "proactive_prune_min_reclaim_tokens": 1,
        }
    }
    result = Compressor(config, context_length=128_000, summarizer="fallback").compress(source)
    assert result.status == "pruned", result.reason
    _check_not_torn(source, result.messages, later)
    forced = Compressor(context_length=128_000, summarizer="fallback").compress(source, force=True)
    _check_not_torn(source, forced.messages, later)
