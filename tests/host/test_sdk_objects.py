"""Issue 23: a host written with the official ``openai`` or ``anthropic`` SDK hands its
objects (``response.usage``, ``response.choices[0].message``, ``response.content``,
``response.output``) straight to the session, the compressor and the format adapters.

The responses come from the real clients talking to the loopback server, so what is read is
what the SDK really builds; what the clients send next is checked on the wire."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeLLM
from sdk_payloads import (
    anthropic_client,
    anthropic_message,
    chat_completion,
    chat_usage,
    function_call,
    openai_client,
    output_text,
    reply,
    require_sdk,
    responses_response,
    tool_call,
)

import hermes_core as hc
from hermes_core.formats import (
    blank,
    detect,
    from_openai,
    load_payload,
    payload_problems,
    to_openai,
)

SYSTEM = {"role": "system", "content": "You are terse."}
ASK = {"role": "user", "content": "Where is parse_config defined?"}
CALL = tool_call("call_1", "grep", {"pattern": "def parse_config"})
CALLING = {"role": "assistant", "content": None, "tool_calls": [CALL]}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "src/config.py:12"}
ANSWER = {"role": "assistant", "content": "In src/config.py, line 12."}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Any]:
    with hc.Hermes.from_config(None, home=tmp_path) as hermes:
        yield hermes


def stored(host: Any, session_id: str) -> list[dict[str, Any]]:
    return [dict(row.message) for row in host.session_store.messages(session_id)]


# --- chat completions through the real openai client -------------------------------------


def test_an_openai_sdk_host_loop_hands_its_objects_straight_in(llm: FakeLLM, host: Any) -> None:
    client = openai_client(llm)
    first = chat_completion(CALLING, chat_usage(1_500, cached=1_024))
    second = chat_completion(ANSWER, chat_usage(1_650, cached=1_408))
    llm.script(reply(first), reply(second))
    session = host.session("sdk-chat")
    messages: list[Any] = [SYSTEM, ASK]

    response = client.chat.completions.create(model="m", messages=session.prepare(messages))
    session.record_usage(response.usage)  # CompletionUsage, as it is
    # prompt_tokens already hold the cached ones: the count rests on 1,500, not 2,524
    assert session.compressor.running.anchored_tokens == 1_500
    assert session.compressor.observe(session.view.sent) == 1_500
    messages += [response.choices[0].message, RESULT]  # a ChatCompletionMessage with calls

    response = client.chat.completions.create(model="m", messages=session.prepare(messages))
    api_said = first["choices"][0]["message"]
    assert llm.requests[1].json["messages"][2] == api_said  # exactly what the API sent
    assert "audio" not in llm.requests[1].json["messages"][2]  # no None of unset fields
    session.record_usage(response.usage)
    assert session.compressor.running.anchored_tokens == 1_650
    messages.append(response.choices[0].message)
    session.end_turn(messages)

    rows = stored(host, "sdk-chat")
    assert rows == [SYSTEM, ASK, api_said, RESULT, second["choices"][0]["message"]]
    assert hc.validate_messages(rows) == []
    record = host.session_store.get_session("sdk-chat", user_id=None)
    assert record.counters["prompt_tokens"] == 3_150
    assert record.counters["cached_prompt_tokens"] == 2_432
    session.close()


def test_the_async_twins_take_sdk_objects(llm: FakeLLM, host: Any) -> None:
    openai = require_sdk("openai")
    session = host.session("sdk-async")
    message = openai.types.chat.ChatCompletionMessage.model_validate(ANSWER)
    usage = openai.types.CompletionUsage.model_validate(chat_usage(900))

    async def turn() -> None:
        await session.aprepare([ASK])
        await session.arecord_usage(usage)
        await session.aend_turn([ASK, message])

    asyncio.run(turn())
    assert session.compressor.running.anchored_tokens == 900
    assert session.messages[-1] == ANSWER
    session.close()


def test_a_whole_chat_completion_is_its_usage_and_its_message(host: Any) -> None:
    openai = require_sdk("openai")
    body = chat_completion(ANSWER, chat_usage(700, cached=512))
    response = openai.types.chat.ChatCompletion.model_validate(body)
    session = host.session("sdk-whole")
    session.prepare([ASK])
    session.record_usage(response)  # the whole response: its usage
    assert session.compressor.running.anchored_tokens == 700
    session.end_turn([ASK, response])  # the whole response: choices[0].message
    assert session.messages[-1] == body["choices"][0]["message"]
    session.close()


# --- Anthropic Messages through the real anthropic client --------------------------------


def test_an_anthropic_sdk_host_loop(llm: FakeLLM, host: Any) -> None:
    client = anthropic_client(llm)
    uses = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": "x"}}
    first = anthropic_message(
        [{"type": "text", "text": "Searching."}, uses], input_tokens=20, read=3_000, written=100
    )
    second = anthropic_message(
        [{"type": "text", "text": "src/config.py"}], input_tokens=45, read=3_100
    )
    llm.script(reply(first), reply(second))
    session = host.session("sdk-anthropic", message_format="anthropic")
    system = session.system_prompt("You are terse.")
    messages: list[Any] = [{"role": "user", "content": "Where is parse_config?"}]

    response = client.messages.create(
        model="claude", max_tokens=64, system=system, messages=session.prepare(messages)
    )
    session.record_usage(response.usage)  # input 20 + cache read 3,000 + cache write 100
    assert session.compressor.running.anchored_tokens == 3_120
    messages.append({"role": "assistant", "content": response.content})  # the SDK's blocks
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "src/config.py:12"}
    messages.append({"role": "user", "content": [result]})

    response = client.messages.create(
        model="claude", max_tokens=64, system=system, messages=session.prepare(messages)
    )
    sent = llm.requests[1].json["messages"]
    assert sent[1] == {"role": "assistant", "content": first["content"]}
    session.record_usage(response)  # the whole Message: its usage
    assert session.compressor.running.anchored_tokens == 3_145
    messages.append(response)  # the whole Message: its role and content
    session.end_turn(messages)
    text = [{"type": "text", "text": "src/config.py"}]
    assert session.messages[-1] == {"role": "assistant", "content": text}
    assert session.messages[1]["tool_calls"][0]["id"] == "toolu_1"
    session.close()


# --- Responses through the real openai client --------------------------------------------


def test_a_responses_sdk_host_loop(llm: FakeLLM, host: Any) -> None:
    client = openai_client(llm)
    llm.add_route("/v1/responses")
    call = function_call("call_1", "grep", {"pattern": "def parse_config"})
    first = responses_response([call], input_tokens=800, cached=512)
    second = responses_response([output_text("In src/config.py.")], input_tokens=860)
    llm.script(reply(first), reply(second))
    session = host.session("sdk-responses", message_format="responses")
    instructions = session.system_prompt("You are terse.")
    items: list[Any] = [{"role": "user", "content": "Where is parse_config?"}]

    response = client.responses.create(
        model="m", instructions=instructions, input=session.prepare(items)
    )
    session.record_usage(response.usage)  # ResponseUsage: cached tokens are inside 800
    assert session.compressor.running.anchored_tokens == 800
    items += response.output  # ResponseFunctionToolCall
    items.append({"type": "function_call_output", "call_id": "call_1", "output": "src/config.py"})

    response = client.responses.create(
        model="m", instructions=instructions, input=session.prepare(items)
    )
    assert llm.requests[1].json["input"][1] == call
    session.record_usage(response.usage)
    assert session.compressor.running.anchored_tokens == 860
    items += response.output  # ResponseOutputMessage
    session.end_turn(items)
    text = [{"type": "text", "text": "In src/config.py."}]
    assert session.messages[-1] == {"role": "assistant", "content": text}
    session.close()


# --- one-shot calls and the format adapters ----------------------------------------------


def sdk_transcript() -> tuple[list[Any], list[dict[str, Any]]]:
    """The same conversation with the SDK's objects and as plain dicts."""
    chat = require_sdk("openai").types.chat
    api_calling = chat_completion(CALLING)["choices"][0]["message"]
    api_answer = chat_completion(ANSWER)["choices"][0]["message"]
    objects = [
        SYSTEM,
        ASK,
        chat.ChatCompletionMessage.model_validate(api_calling),
        RESULT,
        chat.ChatCompletionMessage.model_validate(api_answer),
    ]
    return objects, [SYSTEM, ASK, api_calling, RESULT, api_answer]


def test_compress_count_and_validate_take_an_sdk_message_list() -> None:
    objects, plain = sdk_transcript()
    assert hc.validate_messages(objects) == hc.validate_messages(plain) == []
    assert hc.count_tokens(objects) == hc.count_tokens(plain)
    assert hc.to_wire(objects) == plain
    result = hc.compress(objects, context_length=32_000, summarizer="fallback", force=True)
    again = hc.compress(plain, context_length=32_000, summarizer="fallback", force=True)
    assert result.messages == again.messages and result.status == again.status
    compressor = hc.Compressor(context_length=32_000, summarizer="fallback")
    assert compressor.observe(objects) == compressor.count(plain)
    usage = require_sdk("openai").types.CompletionUsage.model_validate(chat_usage(4_321))
    compressor.update_from_usage(usage, objects)
    assert compressor.last_prompt_tokens == 4_321 == compressor.observe(plain)
    assert compressor.compress(objects).messages == plain  # unchanged: as dicts


def test_the_format_adapters_take_sdk_objects() -> None:
    anthropic_types = require_sdk("anthropic").types
    responses = require_sdk("openai").types.responses
    objects, plain = sdk_transcript()
    # OpenAI messages out to Anthropic and Responses: the objects write as their dicts
    for fmt in ("anthropic", "responses"):
        assert from_openai(objects, blank(fmt)) == from_openai(plain, blank(fmt))
    # an Anthropic payload holding the SDK's content blocks
    uses = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"q": "x"}}
    blocks = [
        anthropic_types.TextBlock(type="text", text="Searching."),
        anthropic_types.ToolUseBlock(**uses),
    ]
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
    payload = {
        "system": "Be terse.",
        "messages": [
            {"role": "user", "content": "find x"},
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": [result]},
        ],
    }
    as_dicts = {**payload, "messages": [*payload["messages"]]}
    as_dicts["messages"][1] = {
        "role": "assistant",
        "content": [b.model_dump(exclude_none=True) for b in blocks],
    }
    converted = to_openai(payload, "anthropic")
    assert converted.messages == to_openai(as_dicts, "anthropic").messages
    assert load_payload(payload).format == "anthropic" == detect(payload)
    assert payload_problems(payload, "anthropic") == []
    # a Responses input holding the SDK's output items
    items = [
        {"role": "user", "content": "find x"},
        responses.ResponseFunctionToolCall.model_validate(function_call("c1", "grep", {"q": "x"})),
        {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
        responses.ResponseOutputMessage.model_validate(output_text("a.py")),
    ]
    dict_items = [items[0], function_call("c1", "grep", {"q": "x"}), items[2], output_text("a.py")]
    assert to_openai(items, "responses").messages == to_openai(dict_items, "responses").messages
    assert load_payload({"input": items}).format == "responses"
    assert payload_problems(items, "responses") == []


# --- what is refused, and that it changes nothing ----------------------------------------


class Unknown:
    """Neither a mapping nor an SDK object."""


class VarsOnly:
    def __init__(self) -> None:
        self.role = "assistant"
        self.content = "hi"


@dataclasses.dataclass
class Point:
    role: str = "assistant"
    content: str = "hi"


def snapshot(host: Any, session: Any) -> tuple[Any, ...]:
    record = host.session_store.get_session(session.session_id, user_id=None)
    return (
        session.messages,
        stored(host, session.session_id),
        dict(record.counters),
        dict(record.state),
        session.compressor.last_prompt_tokens,
        session.compressor.running.anchored_tokens,
        session.compressor.running.samples,
    )


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_bad_objects_and_bad_usage_are_refused_and_change_nothing(host: Any, fmt: str) -> None:
    session = host.session(f"bad-{fmt}", message_format=fmt)
    history: list[Any] = [{"role": "user", "content": "hi"}]
    session.prepare(history)
    session.record_usage({"prompt_tokens": 100})
    before = snapshot(host, session)
    for bad in (Unknown(), VarsOnly(), Point(), object()):
        for call in (session.prepare, session.end_turn):
            with pytest.raises(hc.InvalidArgument) as err:
                call([*history, bad])
            assert isinstance(err.value, hc.InvalidMessages)  # what it always was, too
            assert type(bad).__name__ in str(err.value) and ".model_dump()" in str(err.value)
    for usage in (
        {"prompt_tokens": "120"},
        {"prompt_tokens": -5},
        {"prompt_tokens": True},
        {"input_tokens": 10, "cache_read_input_tokens": "7"},
        {"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": -1}},
        Point(),
        VarsOnly(),
        Unknown(),
        None,
    ):
        with pytest.raises(hc.InvalidArgument, match=r"usage"):
            session.record_usage(usage)
    assert snapshot(host, session) == before
    session.close()
