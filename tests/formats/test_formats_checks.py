"""The tool-pair invariants in each format: clear errors that name the index and what to do,
and nothing converted; detection refuses mixed shapes."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core.errors import InvalidMessages
from hermes_core.formats import (
    anthropic_problems,
    detect,
    load_payload,
    payload_problems,
    responses_problems,
    to_openai,
)

USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}


def anthropic(*messages: Any) -> dict[str, Any]:
    return {"messages": list(messages)}


def test_formats_anthropic_tool_use_without_result() -> None:
    payload = anthropic(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": "and?"},
    )
    problems = anthropic_problems(payload)
    assert problems == [
        'message 1: tool_use "toolu_1" (bash) has no tool_result in message 2; add a tool_result '
        'block with "tool_use_id": "toolu_1" to the user message right after it, or remove the '
        "tool_use"
    ]
    with pytest.raises(InvalidMessages, match=r"\(1 problem\): message 1: tool_use"):
        to_openai(payload, "anthropic")


def test_formats_anthropic_orphan_result_and_pending_call() -> None:
    orphan = anthropic({"role": "user", "content": [RESULT]})
    assert anthropic_problems(orphan) == [
        'message 0: content[0] is a tool_result for "toolu_1", but there is no message before '
        "it, so no tool_use it could answer; remove the block"
    ]
    later = anthropic(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [RESULT]},
    )
    assert (
        "which no tool_use of the assistant message right before it (message 1)"
        in (anthropic_problems(later)[0])
    )
    pending = anthropic({"role": "user", "content": "go"}, {"role": "assistant", "content": [USE]})
    assert "the transcript ends first" in anthropic_problems(pending)[0]
    assert anthropic_problems(pending, allow_pending=True) == []
    assert to_openai(pending, "anthropic").messages[-1]["tool_calls"][0]["id"] == "toolu_1"


def test_formats_anthropic_shape_problems_name_the_block() -> None:
    payload = anthropic(
        {"role": "system", "content": "x"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]},
        {"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "b", "input": {}}]},
    )
    problems = anthropic_problems(payload)
    assert problems[0].startswith('message 0: role must be "user" or "assistant", got "system"')
    assert 'top-level "system"' in problems[0]
    assert problems[1].startswith(
        'message 1: content[0] is a thinking block without a string "signature"'
    )
    assert problems[2].startswith("message 2: content[0] is a tool_use block in a user message")


def test_formats_responses_pairs() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    user = {"role": "user", "content": "hi"}
    missing = responses_problems([user, call, user])
    assert missing[0].startswith(
        'input[1]: function_call "c1" (bash) has no function_call_output (input[2] comes first)'
    )
    late = responses_problems([user, call, user, output])
    assert 'input[3]: the output for "c1" (called at input[1]) comes after input[2]' in late[1]
    orphan = responses_problems([user, output])
    assert orphan == [
        'input[1]: function_call_output for "c1" answers no function_call before it; remove it '
        "or add the call"
    ]
    twice = responses_problems([user, call, output, output])
    assert twice[0].startswith('input[3]: call "c1" is answered twice (also by input[2])')
    assert responses_problems([user, call], allow_pending=True) == []
    with pytest.raises(InvalidMessages, match="input"):
        to_openai({"input": [user, output]}, "responses")


def test_formats_payload_problems_for_the_validate_command() -> None:
    assert payload_problems(anthropic({"role": "user", "content": "hi"}), "anthropic") == []
    assert payload_problems([{"role": "tool", "content": "x"}], "openai")[0].startswith("message 0")
    assert payload_problems({"input": "hello"}, "responses") == []


def test_formats_detect_and_load() -> None:
    assert detect({"system": "s", "messages": [{"role": "user", "content": "hi"}]}) == "anthropic"
    assert detect({"input": "hi"}) == "responses"
    assert detect([{"role": "tool", "tool_call_id": "x", "content": "y"}]) == "openai"
    assert detect([{"role": "user", "content": "hi"}]) is None
    assert load_payload([{"role": "user", "content": "hi"}]).format == "openai"
    mixed = [
        {"role": "assistant", "content": [USE]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "y"},
    ]
    with pytest.raises(InvalidMessages, match=r"item 0 reads as anthropic but item 1 as openai"):
        detect(mixed)
    with pytest.raises(InvalidMessages, match="unknown message format"):
        to_openai([], "gemini")
    converted = load_payload({"input": "hello", "model": "m"})
    assert converted.messages[0]["content"] == "hello"


def test_formats_anthropic_empty_shapes_are_problems() -> None:
    assert anthropic_problems(anthropic()) == [
        "payload: no messages; Anthropic needs at least one (a user message first)"
    ]
    assert to_openai(anthropic(), "anthropic").messages == []  # converts to nothing all the same
    empty_list = anthropic({"role": "user", "content": []})
    assert anthropic_problems(empty_list) == [
        "message 0: content is empty; only a final assistant message may be empty (give it "
        "text or blocks, or remove the message)"
    ]
    empty_middle = anthropic(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "again"},
    )
    assert anthropic_problems(empty_middle)[0].startswith("message 1: content is empty")
    final = anthropic({"role": "user", "content": "go"}, {"role": "assistant", "content": ""})
    assert anthropic_problems(final) == []  # a prefill may be empty
    blank_text = anthropic({"role": "user", "content": [{"type": "text", "text": ""}]})
    assert anthropic_problems(blank_text) == [
        'message 0: content[0] is a text block with empty "text"; give it text or remove the block'
    ]
    blank_system = {"system": [{"type": "text", "text": ""}], **anthropic(USER_GO)}
    assert anthropic_problems(blank_system) == [
        'system[0]: a text block with empty "text"; remove it'
    ]
    for payload in (empty_list, empty_middle, blank_text, blank_system):
        with pytest.raises(InvalidMessages):
            to_openai(payload, "anthropic")


USER_GO = {"role": "user", "content": "go"}


def test_formats_anthropic_assistant_first_is_reported_but_converted() -> None:
    payload = anthropic({"role": "assistant", "content": "Hello!"}, USER_GO)
    assert anthropic_problems(payload) == [
        "message 0: the first message must use the user role, got assistant; put a user "
        "message first (an opening assistant text can be written as a user message)"
    ]
    assert payload_problems(payload, "anthropic") == anthropic_problems(payload)
    converted = to_openai(payload, "anthropic")  # Anthropic's own API has taken it
    assert [m["role"] for m in converted.messages] == ["assistant", "user"]
