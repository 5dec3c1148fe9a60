"""One user request followed by many tool rounds: after the first compaction the old summary
rides on a reply that comes after the newest user message. The next compaction must still run
(it used to abort on its own invariant, "the newest user message is not kept verbatim", every
time after, so the context grew until the provider refused it)."""

from __future__ import annotations

import json
from typing import Any

import hermes_core as hc
from hermes_core.transcript.messages import is_real_user_message

Message = dict[str, Any]


def _round(n: int, size: int) -> list[Message]:
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{n}.py"})},
    }
    body = "\n".join(f"def f{n}_{k}(x):\n    return x * {k}  # line {k}" for k in range(size))
    return [
        {"role": "assistant", "content": f"Reading module {n}.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{n}", "content": body},
    ]


def _rounds(first: int, count: int, size: int) -> list[Message]:
    return [m for n in range(first, first + count) for m in _round(n, size)]


def test_the_compaction_after_a_summary_on_a_later_reply_still_runs() -> None:
    request = {"role": "user", "content": "ok, continue"}  # the head ends on it
    start: list[Message] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Refactor every module under src/ to the new API."},
        *_rounds(100, 1, 5),
        request,
    ]
    first = hc.compress(
        [*start, *_rounds(0, 12, 120)], context_length=32_000, summarizer="fallback", force=True
    )
    assert first.status == "compressed", first
    newest = [i for i, m in enumerate(first.messages) if is_real_user_message(m)][-1]
    assert first.messages[newest] == request  # it stayed; the summary rides on the next reply
    assert "CONTEXT SUMMARY" in str(first.messages[newest + 1]["content"])

    grown = [*first.messages, *_rounds(12, 12, 200)]
    second = hc.compress(grown, context_length=32_000, summarizer="fallback")
    assert second.status in ("compressed", "pruned"), second
    assert second.tokens_after < second.tokens_before
    users = [m for m in second.messages if is_real_user_message(m)]
    assert users[-1] == request
    forced = hc.compress(grown, context_length=32_000, summarizer="fallback", force=True)
    assert forced.status == "compressed", forced
    assert [m for m in forced.messages if is_real_user_message(m)][-1] == request
