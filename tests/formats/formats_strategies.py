"""Generated conversations for the format tests: one OpenAI transcript in canonical form, and
decorations that each host format may carry without changing what it says."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40
) | st.sampled_from(["ok", "文件 路径 /src/app.py", "x" * 3_000, "$ pytest -q\n" * 80])
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
TOOLS = st.sampled_from(["terminal", "read_file", "search_files"])


@st.composite
def user_message(draw: Any) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"role": "user", "content": draw(TEXT)}
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": t} for t in draw(st.lists(TEXT, min_size=1, max_size=2))
    ]
    if draw(st.booleans()):
        parts.append(IMAGE)
    return {"role": "user", "content": parts}


@st.composite
def tool_round(draw: Any, counter: list[int]) -> list[dict[str, Any]]:
    calls, results = [], []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        counter[0] += 1
        cid = f"toolu_{counter[0]}"
        args = json.dumps(
            {"path": f"src/m{counter[0]}.py", "command": draw(TEXT)}, ensure_ascii=False
        )
        calls.append(
            {"id": cid, "type": "function", "function": {"name": draw(TOOLS), "arguments": args}}
        )
        results.append({"role": "tool", "tool_call_id": cid, "content": draw(TEXT)})
    content = draw(st.one_of(st.none(), TEXT))
    return [
        {"role": "assistant", "content": content, "tool_calls": calls},
        *draw(st.permutations(results)),
    ]


@st.composite
def conversations(draw: Any, *, pending: bool = True) -> list[dict[str, Any]]:
    """OpenAI messages in the form every adapter maps back to itself: user and assistant
    alternate (tool rounds in between), a system message only first."""
    counter = [0]
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(TEXT)})
    for _ in range(draw(st.integers(min_value=1, max_value=10))):
        messages.append(draw(user_message()))
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            messages.extend(draw(tool_round(counter)))
        if draw(st.booleans()):
            text = draw(TEXT)
            if draw(st.booleans()):
                messages.append({"role": "assistant", "content": text})
            else:
                messages.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
        elif messages[-1]["role"] != "tool":
            messages.append({"role": "assistant", "content": draw(TEXT)})
    if pending and draw(st.booleans()) and messages[-1]["role"] == "tool":
        while messages[-1]["role"] == "tool":  # an in-flight round
            messages.pop()
    return messages


CACHE = {"type": "ephemeral"}


def decorate_anthropic(payload: dict[str, Any], draw: Any) -> dict[str, Any]:
    """Add what only Anthropic says (cache_control, thinking with signatures, unknown blocks
    and keys) where it does not change the OpenAI messages."""
    out = dict(payload)
    if isinstance(out.get("system"), str) and draw(st.booleans()):
        out["system"] = [{"type": "text", "text": out["system"], "cache_control": CACHE}]
    messages = []
    for n, given in enumerate(payload["messages"]):
        message = dict(given)
        content = message["content"]
        if isinstance(content, list):
            blocks = []
            for block in content:
                extra = {"cache_control": CACHE} if draw(st.integers(0, 3)) == 0 else {}
                blocks.append({**block, **extra})
            if message["role"] == "assistant" and draw(st.booleans()):
                thinking = {"type": "thinking", "thinking": draw(TEXT), "signature": f"sig{n}=="}
                blocks.insert(0, thinking)
            if message["role"] == "assistant" and draw(st.integers(0, 4)) == 0:
                blocks.insert(0, {"type": "redacted_thinking", "data": f"opaque{n}"})
            if draw(st.integers(0, 4)) == 0:
                blocks.append({"type": "future_block", "payload": {"n": n}})
            message["content"] = blocks
        if draw(st.integers(0, 5)) == 0:
            message["x_host_note"] = n
        messages.append(message)
    out["messages"] = messages
    if draw(st.booleans()):
        out = {"model": "claude-x", "max_tokens": 1024, **out}
    return out


def decorate_responses(payload: dict[str, Any], draw: Any) -> dict[str, Any]:
    """Add what only Responses says (ids, status, reasoning items with encrypted content,
    annotations, unknown items) where it does not change the OpenAI messages."""
    items: list[Any] = []
    for n, given in enumerate(payload["input"]):
        item = dict(given)
        kind = item.get("type")
        if kind == "function_call" and draw(st.booleans()):
            item["id"] = f"fc_{n}"
            item["status"] = "completed"
        if kind == "message" and item["role"] == "assistant":
            if draw(st.booleans()):
                item["id"] = f"msg_{n}"
            if isinstance(item["content"], list):
                item["content"] = [{**p, "annotations": [{"n": n}]} for p in item["content"]]
        assistant_side = kind == "function_call" or (
            kind == "message" and item["role"] == "assistant"
        )
        if assistant_side and draw(st.integers(0, 2)) == 0:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{n}",
                    "summary": [{"type": "summary_text", "text": "thought"}],
                    "encrypted_content": f"enc{n}",
                }
            )
        if draw(st.integers(0, 6)) == 0:
            items.append({"type": "item_reference", "id": f"ref_{n}"})
        items.append(item)
    return {**payload, "input": items}
