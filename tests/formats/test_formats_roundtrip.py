"""Round trips: any valid payload in each format survives to_openai/from_openai unchanged
(with the hidden keys, and found again by content when a list lost them); OpenAI messages
written in another format read back as the same messages; detection never guesses wrong."""

from __future__ import annotations

import copy
import json
from typing import Any

from formats_strategies import conversations, decorate_anthropic, decorate_responses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.formats import blank, detect, dump_payload, from_openai, load_payload, to_openai
from hermes_core.transcript import to_wire, validate_messages

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def payloads(draw: Any) -> tuple[str, Any, list[dict[str, Any]]]:
    """(format, a decorated payload in it, the OpenAI messages it says)."""
    messages = draw(conversations())
    fmt = draw(st.sampled_from(["anthropic", "responses"]))
    plain = from_openai(messages, blank(fmt))
    decorate = decorate_anthropic if fmt == "anthropic" else decorate_responses
    return fmt, decorate(plain, draw), messages


def dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@SETTINGS
@given(payloads())
def test_formats_every_payload_comes_back_byte_identical(case: Any) -> None:
    fmt, payload, _ = case
    before = dumped(payload)
    converted = to_openai(payload, fmt)
    assert dumped(payload) == before  # the input is not touched
    assert validate_messages(converted.messages, allow_pending_tool_calls=True) == []
    assert dumped(from_openai(converted.messages, converted)) == before
    # a list that went through to_wire (no hidden keys) is found again by content
    assert dumped(from_openai(to_wire(converted.messages), converted)) == before
    # and through JSON, as a command line writes and reads it
    reread = json.loads(json.dumps(converted.messages))
    assert dumped(from_openai(reread, converted)) == before


@SETTINGS
@given(payloads())
def test_formats_what_a_payload_says_is_the_openai_conversation(case: Any) -> None:
    fmt, payload, messages = case
    assert to_wire(to_openai(payload, fmt).messages) == messages
    assert to_wire(load_payload(copy.deepcopy(payload), fmt).messages) == messages


@SETTINGS
@given(conversations())
def test_formats_openai_written_fresh_in_each_format_reads_back_the_same(messages: Any) -> None:
    for fmt in ("openai", "anthropic", "responses"):
        payload = from_openai(messages, blank(fmt))
        assert to_wire(to_openai(payload, fmt).messages) == messages, fmt


@SETTINGS
@given(payloads())
def test_formats_detection_is_right_or_abstains(case: Any) -> None:
    fmt, payload, _ = case
    assert detect(payload) in (fmt, None)
    if detect(payload) is None:  # it fits several formats: read as OpenAI, it still round-trips
        loaded = load_payload(payload)
        assert loaded.format == "openai"
        assert dumped(dump_payload(loaded.messages, loaded)) == dumped(payload)


def test_formats_a_kept_message_is_the_hosts_own_object() -> None:
    payload = {
        "system": "be brief",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            },
            {"role": "assistant", "content": "hello"},
        ],
    }
    converted = to_openai(payload, "anthropic")
    back = from_openai(converted.messages, converted)
    assert all(a is b for a, b in zip(back["messages"], payload["messages"], strict=True))
    assert back["system"] is payload["system"]


def test_formats_a_rewritten_message_keeps_what_openai_cannot_say_in_place() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig=="}
    payload = {
        "messages": [
            {"role": "user", "content": "list files"},
            {
                "role": "assistant",
                "content": [
                    thinking,
                    {"type": "text", "text": "Sure.", "citations": []},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "bash",
                        "input": {"cmd": "ls"},
                        "cache_control": {"type": "ephemeral"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "a.py",
                        "is_error": False,
                    },
                    {"type": "document", "source": {"type": "file", "file_id": "f1"}},
                    {"type": "text", "text": "and?", "cache_control": {"type": "ephemeral"}},
                ],
            },
        ]
    }
    converted = to_openai(payload, "anthropic")
    messages = copy.deepcopy(converted.messages)  # hidden keys kept, as the compressor does
    messages[1]["tool_calls"][0]["function"]["arguments"] = '{"cmd": "ls -la"}'
    messages[2]["content"] = "[1 line]"
    messages[3]["content"] = [{"type": "text", "text": "[summary]"}, *messages[3]["content"]]
    back = from_openai(messages, converted)["messages"]
    assert back[0] is payload["messages"][0]
    assert back[1]["content"] == [
        thinking,
        {"type": "text", "text": "Sure.", "citations": []},
        {
            "type": "tool_use",
            "id": "t1",
            "name": "bash",
            "input": {"cmd": "ls -la"},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert back[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "[1 line]", "is_error": False},
        {"type": "document", "source": {"type": "file", "file_id": "f1"}},
        {"type": "text", "text": "[summary]"},
        {"type": "text", "text": "and?", "cache_control": {"type": "ephemeral"}},
    ]


def test_formats_a_rewritten_responses_turn_keeps_reasoning_and_ids() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
    items = [
        {"role": "user", "content": "go"},
        reasoning,
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "content": [{"type": "output_text", "text": "Sure.", "annotations": [{"a": 1}]}],
        },
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "long output", "id": "fco_1"},
    ]
    converted = to_openai({"input": items, "model": "m"}, "responses")
    messages = copy.deepcopy(converted.messages)
    messages[1]["tool_calls"][0]["function"]["arguments"] = '{"x": 1}'
    messages[2]["content"] = "[pruned]"
    back = from_openai(messages, converted)
    assert back["model"] == "m"
    assert back["input"][:3] == items[:3] and back["input"][1] is reasoning
    assert back["input"][3] == {**items[3], "arguments": '{"x": 1}'}
    assert back["input"][4] == {**items[4], "output": "[pruned]"}
    assert from_openai(
        to_openai({"input": "hi"}, "responses").messages, to_openai({"input": "hi"}, "responses")
    ) == {"input": "hi"}


def test_formats_empty_and_null_envelope_keys_come_back_as_given() -> None:
    user = {"role": "user", "content": "hi"}
    cases = [
        ("anthropic", {"model": "m", "system": [], "messages": [user], "max_tokens": 5}),
        ("anthropic", {"system": None, "messages": [user]}),
        ("anthropic", {"messages": [user], "system": ""}),
        ("responses", {"instructions": None, "input": [user], "model": "m"}),
        ("responses", {"instructions": None, "input": "hi"}),
    ]
    for fmt, payload in cases:
        before = dumped(payload)
        converted = to_openai(payload, fmt)
        assert dumped(from_openai(converted.messages, converted)) == before
        assert dumped(from_openai(to_wire(converted.messages), converted)) == before
    # a system message the caller removed takes its key with it
    converted = to_openai({"system": "be terse", "messages": [user]}, "anthropic")
    assert from_openai(converted.messages[1:], converted) == {"messages": [user]}
