"""Property-based proof of spec 10 §1 over generated transcripts.

Transcripts with parallel tool calls, missing results at the end, images, ``None`` contents,
unicode, giant results, no user message, or only a system message: whatever comes in, the
output is valid, keeps the system message and the newest user message, creates no same-role
neighbours, holds one summary when compressed, loses nothing, and is deterministic.
"""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hermes_core.compression.assemble import is_summary_message
from hermes_core.compression.engine import compress
from hermes_core.messages import is_real_user_message
from hermes_core.validation import validate_messages

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=60
) | st.sampled_from(["", "ok", "文件 路径 /src/app.py", "x" * 5_000, "$ pytest -q\n" * 200])
TOOL_NAMES = st.sampled_from(["terminal", "read_file", "search_files", "web_extract", "custom"])


@st.composite
def user_message(draw: Any) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"role": "user", "content": draw(TEXT) or "hi"}
    parts: list[dict[str, Any]] = [{"type": "text", "text": draw(TEXT) or "look"}]
    if draw(st.booleans()):
        parts.append({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}})
    return {"role": "user", "content": parts}


@st.composite
def assistant_round(draw: Any, counter: list[int]) -> list[dict[str, Any]]:
    calls = draw(st.integers(min_value=0, max_value=3))
    if calls == 0:
        return [{"role": "assistant", "content": draw(TEXT) or "done"}]
    tool_calls = []
    results = []
    for _ in range(calls):
        counter[0] += 1
        call_id = f"call_{counter[0]}"
        name = draw(TOOL_NAMES)
        args = json.dumps({"path": f"src/m{counter[0]}.py", "command": draw(TEXT)})
        tool_calls.append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        )
        results.append({"role": "tool", "tool_call_id": call_id, "content": draw(TEXT)})
    results = draw(st.permutations(results))
    content = draw(st.one_of(st.none(), TEXT))
    return [{"role": "assistant", "content": content, "tool_calls": tool_calls}, *results]


@st.composite
def transcripts(draw: Any) -> list[dict[str, Any]]:
    counter = [0]
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT) or "system"})
    with_users = draw(st.integers(min_value=0, max_value=10)) > 0
    for _ in range(draw(st.integers(min_value=0, max_value=14))):
        if with_users:
            messages.append(draw(user_message()))
        messages.extend(draw(assistant_round(counter)))
    if messages and draw(st.booleans()) and messages[-1].get("role") == "tool":
        # an in-flight round: the last call's results have not arrived yet
        while messages and messages[-1].get("role") == "tool":
            messages.pop()
    if not messages:
        messages.append({"role": "system", "content": "only a system message"})
    return messages


def _same_role_pairs(messages: list[dict[str, Any]]) -> int:
    return sum(
        1
        for a, b in itertools.pairwise(messages)
        if b.get("role") in ("user", "assistant") and a.get("role") == b.get("role")
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts(), st.sampled_from([4_096, 8_192, 32_000]))
def test_compression_invariants(messages: list[dict[str, Any]], window: int) -> None:
    pristine = copy.deepcopy(messages)
    before_problems = validate_messages(messages, allow_pending_tool_calls=True)
    assert before_problems == []  # the generator keeps every pair intact
    result = compress(messages, context_length=window, summarizer="fallback", force=True)
    assert messages == pristine
    out = result.messages
    event(f"status {result.status}")
    assert result.status != "aborted", result.reason  # the fallback summariser cannot fail
    assert validate_messages(out, allow_pending_tool_calls=True) == []
    if messages[0].get("role") == "system":
        assert out[0]["role"] == "system"
        assert str(out[0]["content"]).startswith(str(messages[0]["content"]))
    users = [m for m in messages if is_real_user_message(m)]
    if users:
        assert any(m == users[-1] for m in out)
    if _same_role_pairs(messages) == 0:
        assert _same_role_pairs(out) == 0
    summaries = sum(1 for m in out if is_summary_message(m))
    assert summaries == (1 if result.status == "compressed" else 0)
    if result.status in ("unchanged", "aborted"):
        assert out == messages
    kept = {json.dumps(m, sort_keys=True) for m in out}
    archived = {json.dumps(m, sort_keys=True) for m in result.archived}
    for message in messages:
        key = json.dumps(message, sort_keys=True)
        assert key in kept or key in archived
    again = compress(messages, context_length=window, summarizer="fallback", force=True)
    assert json.dumps(again.messages) == json.dumps(out)
