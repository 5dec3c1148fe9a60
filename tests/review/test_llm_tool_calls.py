"""The chat client with tools, against the real loopback server: what is sent, which tool
calls come back, and that callers without tools see exactly the old behaviour."""

from __future__ import annotations

import json

import pytest
from fake_openai import FakeLLM, answer
from review_support import call, tool_calls

from hermes_core.llm import ChatClient, ChatEndpoint, LLMError, parse_tool_calls
from hermes_core.memory.tool import MEMORY_TOOL_SCHEMA

MESSAGES = [{"role": "user", "content": "hi"}]
TOOLS = [MEMORY_TOOL_SCHEMA]


def client_for(llm: FakeLLM) -> ChatClient:
    return ChatClient(ChatEndpoint(llm.base_url, "aux-model", "", 2.0), environ={})


def test_tools_are_sent_with_tool_choice_auto(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer("Nothing to save."))
    with client_for(fake_llm) as client:
        reply = client.complete(MESSAGES, tools=TOOLS)
    assert reply.text == "Nothing to save."
    assert reply.tool_calls == []
    (request,) = fake_llm.requests
    assert request.json["tools"] == TOOLS
    assert request.json["tool_choice"] == "auto"


def test_without_tools_the_request_has_no_tool_fields(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer("summary"), answer("summary"))
    with client_for(fake_llm) as client:
        client.complete(MESSAGES)
        client.complete(MESSAGES, tools=[])
    for request in fake_llm.requests:
        assert request.json == {"model": "aux-model", "messages": MESSAGES}


def test_a_reply_with_tool_calls_and_no_text(fake_llm: FakeLLM) -> None:
    first = call("memory", {"action": "add", "target": "memory", "content": "x"}, "c1")
    second = call("skill_manage", {"action": "list"}, "c2")
    fake_llm.script(tool_calls(first, second))
    with client_for(fake_llm) as client:
        reply = client.complete(MESSAGES, tools=TOOLS)
    assert reply.text == ""
    assert reply.finish_reason == "tool_calls"
    assert reply.tool_calls == [first, second]
    assert reply.dropped_tool_calls == ()


def test_the_conversation_with_tool_results_goes_out_as_given(fake_llm: FakeLLM) -> None:
    fake_llm.script(answer("done"))
    messages = [
        *MESSAGES,
        {"role": "assistant", "content": None, "tool_calls": [call("memory", {}, "c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"success": true}'},
    ]
    with client_for(fake_llm) as client:
        client.complete(messages, tools=TOOLS)
    assert fake_llm.requests[0].json["messages"] == messages


def test_arguments_sent_as_an_object_become_json_text(fake_llm: FakeLLM) -> None:
    odd = {"id": "c1", "function": {"name": "memory", "arguments": {"target": "user"}}}
    fake_llm.script(tool_calls(odd))
    with client_for(fake_llm) as client:
        (got,) = client.complete(MESSAGES, tools=TOOLS).tool_calls
    assert got["type"] == "function"
    assert json.loads(got["function"]["arguments"]) == {"target": "user"}


def test_malformed_calls_are_dropped_with_a_reason_and_good_ones_kept(fake_llm: FakeLLM) -> None:
    good = call("memory", {"target": "memory"}, "ok")
    bad = [
        "not an object",
        {"type": "function", "function": {"name": "memory", "arguments": "{}"}},  # no id
        {"id": "c2", "type": "function", "function": {"arguments": "{}"}},  # no name
        {"id": "c3", "type": "function", "function": {"name": "memory", "arguments": 5}},
        {"id": "c4", "type": "function"},  # no function
        {"id": "c5", "type": "retrieval", "function": {"name": "memory", "arguments": "{}"}},
        call("memory", {}, "ok"),  # repeats the good call's id
    ]
    fake_llm.script(tool_calls(good, *bad, content="checking"))
    with client_for(fake_llm) as client:
        reply = client.complete(MESSAGES, tools=TOOLS)
    assert reply.tool_calls == [good]
    assert reply.text == "checking"
    reasons = " | ".join(reply.dropped_tool_calls)
    assert len(reply.dropped_tool_calls) == len(bad)
    for words in ("not an object", "no id", "no function name", "not text", "no function"):
        assert words in reasons
    assert "repeats" in reasons
    assert "'function'" in reasons


def test_only_malformed_calls_and_no_text_is_a_malformed_answer(fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_calls({"id": "c1", "function": {"name": ""}}))
    with client_for(fake_llm) as client, pytest.raises(LLMError) as caught:
        client.complete(MESSAGES, tools=TOOLS)
    assert caught.value.kind == "malformed"
    assert "tool call" in str(caught.value)
    assert caught.value.usage["prompt_tokens"] == 10


def test_tool_calls_is_not_a_list(fake_llm: FakeLLM) -> None:
    calls, dropped = parse_tool_calls({"id": "x"})
    assert calls == []
    assert dropped == ["tool_calls is a dict, not a list"]
    assert parse_tool_calls(None) == ([], [])


def test_without_tools_a_reply_of_only_tool_calls_is_still_empty(fake_llm: FakeLLM) -> None:
    """The summariser offers no tools and needs text: nothing changes for it."""
    fake_llm.script(tool_calls(call("memory", {})), tool_calls(call("memory", {}), content="hi"))
    with client_for(fake_llm) as client:
        with pytest.raises(LLMError) as caught:
            client.complete(MESSAGES)
        assert caught.value.kind == "empty"
        reply = client.complete(MESSAGES)
    assert reply.text == "hi"
    assert reply.tool_calls == []
