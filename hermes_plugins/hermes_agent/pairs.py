"""Tool pairs mended before a compaction, as a provider would demand them.

Why: hermes-agent's list can carry a tool result whose call is gone (an interrupted turn, a
hand-edited history) or a call that never got its result; our compressor refuses a list a
provider would refuse, so without this one broken pair anywhere would stop every compaction
while the list keeps growing. A result with no call before it is dropped; calls left
unanswered once the conversation moved on get a stub result saying so. Calls still open at
the very end (the host is between a call and its result) are left as they are. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["MISSING_RESULT", "paired"]

Message = dict[str, Any]
MISSING_RESULT = "[no result was recorded for this tool call]"


def _call_ids(message: Message) -> list[str]:
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not isinstance(calls, list):
        return []
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)]


def paired(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """``messages`` with every tool result after its call and every call answered (but the
    last ones), and what was mended, one line each (empty: the list came back as it was)."""
    out: list[Message] = []
    notes: list[str] = []
    open_ids: list[str] = []  # the calls of the last assistant message, not answered yet
    called: set[str] = set()
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):  # not ours to judge: the compaction refuses it
            out.append(message)
            continue
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id in open_ids:
                open_ids.remove(call_id)
                answered.add(call_id)
                out.append(message)
            else:
                why = "answered twice" if call_id in answered else "has no call before it"
                notes.append(f"message {index}: dropped a tool result that {why}")
            continue
        for call_id in open_ids:  # the conversation moved on without these results
            out.append({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT})
            notes.append(f"message {index}: added a stub result for call {call_id!r}")
            answered.add(call_id)
        ids = [i for i in _call_ids(message) if i not in called]
        called.update(ids)
        open_ids = ids
        out.append(message)
    return (list(messages) if not notes else out), notes
