"""Compress in one format equals compress in the other: the same conversation as OpenAI
messages, an Anthropic payload and a Responses input (each carrying what only it can say),
compacted with the offline fallback summariser, gives the same transcript once converted to
one format; and what the compaction kept comes back as the host's own items, in place."""

from __future__ import annotations

import json
from typing import Any

from formats_strategies import conversations, decorate_anthropic, decorate_responses
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import hermes_core as hc
from hermes_core.formats import HIDDEN_KEY, anthropic_problems, blank, from_openai, to_openai
from hermes_core.transcript import to_wire, validate_messages
from hermes_core.transcript.identity import message_digest


def _items(payload: Any, fmt: str) -> list[Any]:
    if fmt == "openai":
        return payload if isinstance(payload, list) else payload["messages"]
    return payload["messages"] if fmt == "anthropic" else payload["input"]


def _survivors(messages: list[dict[str, Any]], converted: Any) -> list[Any]:
    intact = {
        m[HIDDEN_KEY]
        for m in messages
        if HIDDEN_KEY in m and message_digest(m) == converted.sources[m[HIDDEN_KEY]].digest
    }
    out = []
    for index, source in enumerate(converted.sources):
        if index not in intact or source.item < 0:
            continue
        if converted.format == "anthropic":
            if all(i in intact for i in converted.item_sources(source.item)):
                out.append(converted.items[source.item])
        else:
            out.extend(converted.items[k] for k in source.units or ())
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.data(), st.sampled_from([600, 2_000, 6_000]))
def test_formats_compress_in_one_format_equals_compress_in_the_other(
    messages: list[dict[str, Any]], data: st.DataObject, window: int
) -> None:
    hosts = {
        "openai": messages,
        "anthropic": decorate_anthropic(from_openai(messages, blank("anthropic")), data.draw),
        "responses": decorate_responses(from_openai(messages, blank("responses")), data.draw),
    }
    results: dict[str, list[dict[str, Any]]] = {}
    statuses = set()
    for fmt, payload in hosts.items():
        before = json.dumps(payload, ensure_ascii=False)
        converted = to_openai(payload, fmt)
        result = hc.compress(
            converted.messages, context_length=window, summarizer="fallback", force=True
        )
        statuses.add(result.status)
        back = from_openai(result.messages, converted)
        assert json.dumps(payload, ensure_ascii=False) == before  # nothing of the host's changed
        if fmt == "anthropic":
            assert anthropic_problems(back, allow_pending=True) == []  # user first, no empties
        again = to_openai(back, fmt)  # what the host would send next, read back
        results[fmt] = to_wire(again.messages)
        assert validate_messages(results[fmt], allow_pending_tool_calls=True) == []
        # every host item whose OpenAI messages all survived unchanged is the host's own object
        if fmt != "openai":
            back_ids = {id(item) for item in _items(back, fmt)}
            for item in _survivors(result.messages, converted):
                assert id(item) in back_ids
    assert len(statuses) == 1
    event(f"status {statuses.pop()}")
    expected = _same_to_the_model(results["openai"])
    assert _same_to_the_model(results["anthropic"]) == _user_first(expected)
    assert _same_to_the_model(results["responses"]) == expected


def _user_first(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What Anthropic says for ``messages``: a leading assistant text (the summary of a
    compaction that kept no head) is the user's, since Anthropic's first message must be."""
    out = list(messages)
    first = next((n for n, m in enumerate(out) if m["role"] != "system"), None)
    if first is not None and out[first]["role"] == "assistant":
        out[first] = {**out[first], "role": "user"}
    return out


def _same_to_the_model(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with a content list of text parts only written as the string they join to:
    the same message to a model. A format whose items always carry parts (a Responses
    ``message`` rebuilt around a summary) reads back as parts where OpenAI kept a string."""
    out = []
    for message in messages:
        content = message.get("content")
        if (
            isinstance(content, list)
            and content
            and all(
                isinstance(part, dict) and set(part) == {"type", "text"} and part["type"] == "text"
                for part in content
            )
        ):
            out.append({**message, "content": "".join(part["text"] for part in content)})
        else:
            out.append(message)
    return out


def test_formats_a_compaction_keeps_thinking_signatures_and_cache_control_in_place() -> None:
    turns: list[dict[str, Any]] = []
    for n in range(8):
        turns.append({"role": "user", "content": f"step {n}: read file {n}"})
        turns.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": f"plan {n}", "signature": f"sig-{n}=="},
                    {"type": "text", "text": f"Reading {n}."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{n}",
                        "name": "read_file",
                        "input": {"path": f"f{n}.py"},
                    },
                ],
            }
        )
        turns.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{n}",
                        "content": "\n".join(f"line {i} of f{n}" for i in range(300)),
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        )
    turns.append({"role": "assistant", "content": "All read."})
    payload = {"model": "claude-x", "system": "You are terse.", "messages": turns}
    converted = to_openai(payload, "anthropic")
    result = hc.compress(
        converted.messages, context_length=6_000, summarizer="fallback", force=True
    )
    assert result.status == "compressed"
    back = from_openai(result.messages, converted)
    assert back["model"] == "claude-x"
    assert back["system"].startswith("You are terse.")
    by_id = {id(m) for m in turns}
    kept = [m for m in back["messages"] if id(m) in by_id]
    assert kept and kept[-1] is turns[-1]  # the tail comes back as the host's objects
    for message in back["messages"]:
        if message["role"] == "assistant" and isinstance(message["content"], list):
            kinds = [b["type"] for b in message["content"]]
            assert kinds[0] == "thinking" and message["content"][0]["signature"].startswith("sig-")
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_result":
                assert block["cache_control"] == {"type": "ephemeral"}  # pruned or not
    assert to_openai(back, "anthropic")  # valid Anthropic again (tool pairs included)
