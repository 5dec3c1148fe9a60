"""The tool calls in flight: what no compaction may touch while a turn is still running.

A host may compact between tool calls (hermes-agent's loop after each tool round, a host that
calls ``prepare`` before each model request of a parallel batch). The last assistant message
whose calls are not all answered yet, and the results of it that already arrived, are that
turn's live state: the results still to come name those call ids, and a summarised, pruned,
merged or dropped call leaves them answering nothing (a provider refuses the request, or the
side effects of the running tools are lost to the model). So that batch stays at the end,
byte for byte, whatever the budget: the phases spare it and :func:`in_flight_problems`
aborts a compaction that did not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.transcript.validation import tool_call_ids

__all__ = ["in_flight_problems", "in_flight_start"]


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, Mapping) else None


def in_flight_start(messages: Sequence[Any]) -> int:
    """Where the batch in flight begins (its assistant message), or ``len(messages)`` when
    every call is answered. O(size of the batch): a backward walk over the trailing results."""
    n = len(messages)
    start = n
    while start > 0 and _role(messages[start - 1]) == "tool":
        start -= 1
    if start == 0 or _role(messages[start - 1]) != "assistant":
        return n
    calls = tool_call_ids(messages[start - 1])
    if not calls:
        return n
    answered = {m.get("tool_call_id") for m in messages[start:] if isinstance(m, Mapping)}
    return start - 1 if any(call not in answered for call in calls) else n


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return json.dumps(a, sort_keys=True, default=str) == json.dumps(
            b, sort_keys=True, default=str
        )
    except (TypeError, ValueError, RecursionError):
        return False


def in_flight_problems(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[str]:
    """[] when ``after`` ends with the batch in flight of ``before`` exactly as it was (or
    ``before`` has none); else the violation, for the engine's invariant check."""
    start = in_flight_start(before)
    batch = before[start:]
    if not batch:
        return []
    kept = after[len(after) - len(batch) :] if len(after) >= len(batch) else []
    if len(kept) == len(batch) and all(_same(a, b) for a, b in zip(batch, kept, strict=True)):
        return []
    return [
        f"the tool calls in flight (message {start} and the {len(batch) - 1} result(s) after "
        "it) were not kept verbatim at the end"
    ]
