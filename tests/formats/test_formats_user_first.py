"""An Anthropic payload written back starts with the user and has no empty message or text
block, however often it is compacted: Bedrock and Vertex AI refuse an assistant message
first, and a compaction that keeps no head puts its summary (an assistant message) there."""

from __future__ import annotations

from typing import Any

from formats_strategies import TEXT, conversations, decorate_anthropic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hermes_core as hc
from hermes_core.formats import anthropic_problems, blank, from_openai, to_openai

LONG = "The change keeps the parser pure and the tests deterministic. " * 60


def test_formats_a_compaction_without_head_writes_its_summary_as_the_users() -> None:
    turns: list[dict[str, Any]] = []
    for n in range(20):
        turns += [
            {"role": "user", "content": f"question {n} " + "word " * 60},
            {"role": "assistant", "content": f"answer {n} " + "word " * 60},
        ]
    converted = to_openai({"model": "claude-x", "messages": turns}, "anthropic")
    result = hc.compress(converted.messages, context_length=600, summarizer="fallback", force=True)
    assert result.status == "compressed"
    assert result.messages[0]["role"] == "assistant"  # the summary, no head kept
    back = from_openai(result.messages, converted)
    assert back["messages"][0]["role"] == "user"
    assert back["messages"][0]["content"] == result.messages[0]["content"]
    assert anthropic_problems(back) == []
    assert back["messages"][-1] is turns[-1]  # the tail is still the host's own


def test_formats_openai_messages_starting_with_the_assistant_are_written_user_first() -> None:
    messages = [
        {"role": "assistant", "content": "Hello, how can I help?"},
        {"role": "user", "content": "fix the build"},
    ]
    back = from_openai(messages, blank("anthropic"))
    assert [m["role"] for m in back["messages"]] == ["user", "user"]
    assert anthropic_problems(back) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(pending=False), st.data(), st.sampled_from([400, 800, 2_000]))
def test_formats_repeated_compactions_of_anthropic_payloads_stay_valid(
    messages: list[dict[str, Any]], data: st.DataObject, window: int
) -> None:
    payload = decorate_anthropic(from_openai(messages, blank("anthropic")), data.draw)
    compressor = hc.Compressor(context_length=window, summarizer="fallback")
    for n in range(4):
        converted = to_openai(payload, "anthropic")
        result = compressor.compress(converted.messages, force=True)
        payload = from_openai(result.messages, converted)
        assert payload["messages"][0]["role"] == "user", result.status
        assert anthropic_problems(payload) == []
        asked = data.draw(TEXT)
        payload = {
            **payload,
            "messages": [
                *payload["messages"],
                {"role": "user", "content": f"task {n}: {asked} " + LONG},
                {"role": "assistant", "content": [{"type": "text", "text": f"done {n}. " + LONG}]},
            ],
        }
