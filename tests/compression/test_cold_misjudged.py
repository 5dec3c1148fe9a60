"""Estimate-first decisions on text the estimate once got badly wrong, hidden from the
calibration sample (found by review: newline runs, Ethiopic, combining marks, the same
inside tool-call arguments, behind a tail of ordinary English)."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import pytest

import hermes_core as hc
from hermes_core.compression.tool_results import clear_parse_cache
from hermes_core.tokens import bounds
from hermes_core.tokens.costs import default_cost_cache

AMHARIC = "አማርኛ የኢትዮጵያ መደበኛ ቋንቋ ነው። "
BODIES = {
    "ethiopic": AMHARIC * 40,
    "newline runs": "x\n\n\n\n\n\n\n\n" * 200,
    "combining marks": "e\u0301\u0302\u0303" * 300,
}


def transcript(body: str, in_arguments: bool) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Please process the files."},
    ]
    for i in range(20):
        arguments = json.dumps({"path": f"f{i}.txt", "content": body if in_arguments else "x"})
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function",
                 "function": {"name": "write_file", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "ok" if in_arguments else body},
            {"role": "assistant", "content": f"Processed file {i}."},
            {"role": "user", "content": f"Next one please, number {i + 1}."},
        ]  # fmt: skip
    for _ in range(40):  # what calibration counts: plain English
        messages += [
            {"role": "assistant", "content": "A plain English paragraph about results. " * 8},
            {"role": "user", "content": "Thanks, continue with the next step please."},
        ]
    return messages


def decide(messages: list[dict[str, Any]], window: int, *, exact: bool) -> tuple[Any, ...]:
    default_cost_cache().clear()
    bounds.clear_estimates()
    clear_parse_cache()
    counters = frozenset() if exact else bounds.ESTIMATED_COUNTERS
    with mock.patch.object(bounds, "ESTIMATED_COUNTERS", counters):
        result = hc.compress(messages, context_length=window, summarizer="fallback")
    return result.status, json.dumps(result.messages, sort_keys=True), result.stats.get("window")


@pytest.mark.parametrize("kind", sorted(BODIES))
@pytest.mark.parametrize("in_arguments", [False, True], ids=["result", "arguments"])
@pytest.mark.parametrize("share", [0.9, 1.0, 1.1, 1.6])
def test_cold_decisions_match_exact_ones(kind: str, in_arguments: bool, share: float) -> None:
    messages = transcript(BODIES[kind], in_arguments)
    total = hc.count_tokens(messages)
    window = int(total / 0.75 * share)  # the trigger at share x the exact total
    assert decide(messages, window, exact=False) == decide(messages, window, exact=True)
