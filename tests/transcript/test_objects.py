"""Issue 23: the objects of the official SDKs read as the dicts their APIs sent
(hermes_core/transcript/objects.py), and the prompt's size in a usage record of any API
(hermes_core/tokens/reported.py). Real SDK models are built with ``model_validate`` from the
bodies the APIs send; duck-typed stand-ins check what is read and what is refused."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from sdk_payloads import (
    anthropic_message,
    chat_completion,
    chat_usage,
    function_call,
    output_text,
    require_sdk,
    responses_response,
    tool_call,
)

import hermes_core as hc
from hermes_core.errors import InvalidArgument, InvalidMessages, NotAMessage
from hermes_core.tokens import PromptUsage, prompt_usage
from hermes_core.transcript.objects import as_message_list, is_sdk_object, plain, plain_object

ROOT = Path(__file__).resolve().parents[2]
CALLING = {
    "role": "assistant",
    "content": None,
    "tool_calls": [tool_call("c1", "grep", {"q": "x"})],
}


class Dumps:
    """A duck-typed model: ``model_dump`` without pydantic's options."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def model_dump(self) -> Any:
        return self.data


class ToDict:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        return self.data


class VarsOnly:
    def __init__(self) -> None:
        self.role = "user"
        self.content = "hi"


@dataclasses.dataclass
class Point:
    role: str = "user"
    content: str = "hi"


# --- OpenAI chat completions -------------------------------------------------------------


def test_a_chat_completion_message_reads_as_the_dict_the_api_sent() -> None:
    chat = require_sdk("openai").types.chat
    sent = chat_completion(CALLING)["choices"][0]["message"]
    message = chat.ChatCompletionMessage.model_validate(sent)
    assert message.model_dump()["audio"] is None  # pydantic's own dump adds every field
    assert plain_object(message) == sent  # ours: exactly what the API sent, no more
    built = chat.ChatCompletionMessage(role="assistant", content="done")
    assert plain_object(built) == {"role": "assistant", "content": "done"}


def test_a_list_keeps_its_dicts_and_reads_its_objects() -> None:
    chat = require_sdk("openai").types.chat
    user = {"role": "user", "content": "find x"}
    answer = chat.ChatCompletionMessage.model_validate(CALLING)
    result = {"role": "tool", "tool_call_id": "c1", "content": "x.py"}
    messages = [user, answer, result]
    read = as_message_list(messages)
    assert read == [user, CALLING, result]
    assert read[0] is user and read[2] is result  # the host's dicts keep their identity
    plain_list = [user, result]
    assert as_message_list(plain_list) is plain_list  # nothing to read: the same list


def test_objects_nested_in_a_dict_are_read_too() -> None:
    chat = require_sdk("openai").types.chat
    calls = [chat.ChatCompletionMessageFunctionToolCall.model_validate(CALLING["tool_calls"][0])]
    built = {"role": "assistant", "content": None, "tool_calls": calls}
    assert plain(built) == CALLING
    assert hc.validate_messages([{"role": "user", "content": "q"}, built], **PENDING) == []


PENDING = {"allow_pending_tool_calls": True}


def test_a_whole_chat_completion_stands_for_its_message() -> None:
    openai = require_sdk("openai")
    body = chat_completion({"role": "assistant", "content": "hello"})
    response = openai.types.chat.ChatCompletion.model_validate(body)
    read = as_message_list([{"role": "user", "content": "hi"}, response])
    assert read[1] == body["choices"][0]["message"]
    two = {**body, "choices": [body["choices"][0], {**body["choices"][0], "index": 1}]}
    with pytest.raises(NotAMessage, match=r"2 choices; pass the one you keep"):
        as_message_list([openai.types.chat.ChatCompletion.model_validate(two)])


def test_chat_usage_with_cached_tokens() -> None:
    openai = require_sdk("openai")
    usage = openai.types.CompletionUsage.model_validate(chat_usage(1_200, cached=1_024))
    # cached tokens are part of prompt_tokens in OpenAI's count: not added again
    assert prompt_usage(usage) == PromptUsage(1_200, cached=1_024)
    whole = openai.types.chat.ChatCompletion.model_validate(
        chat_completion({"role": "assistant", "content": "x"}, chat_usage(50))
    )
    assert prompt_usage(whole) == PromptUsage(50, cached=0)  # the whole response: its usage


# --- OpenAI Responses -------------------------------------------------------------------


def test_responses_items_and_usage() -> None:
    responses = require_sdk("openai").types.responses
    items = [output_text("hi"), function_call("call_1", "grep", {"q": "x"})]
    response = responses.Response.model_validate(
        responses_response(items, input_tokens=900, cached=512)
    )
    assert as_message_list(response.output) == items
    assert as_message_list([{"role": "user", "content": "q"}, response])[1:] == items
    assert prompt_usage(response.usage) == PromptUsage(900, cached=512)  # cached inside
    assert prompt_usage(response) == PromptUsage(900, cached=512)


# --- Anthropic ----------------------------------------------------------------------------


def test_anthropic_message_blocks_and_usage() -> None:
    types = require_sdk("anthropic").types
    body = anthropic_message(
        [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "grep", "input": {"q": "x"}},
        ],
        input_tokens=30,
        read=4_000,
        written=200,
    )
    message = types.Message.model_validate(body)
    as_param = {"role": "assistant", "content": message.content}  # what the SDK's docs show
    assert plain(as_param) == {"role": "assistant", "content": body["content"]}
    assert as_message_list([message]) == [{"role": "assistant", "content": body["content"]}]
    # Anthropic's input_tokens exclude what the cache read and wrote: the prompt is the sum
    assert prompt_usage(message.usage) == PromptUsage(4_230, cached=4_000)
    assert prompt_usage(message) == PromptUsage(4_230, cached=4_000)
    bedrock = {"input_tokens": 12, "output_tokens": 3, "cache_read_input_tokens": None}
    assert prompt_usage(bedrock) == PromptUsage(12)


# --- duck typing and refusals ------------------------------------------------------------


def test_duck_typed_objects() -> None:
    assert plain_object(Dumps({"role": "user", "content": "a"})) == {"role": "user", "content": "a"}
    assert plain_object(ToDict({"role": "user", "content": "b"})) == {
        "role": "user",
        "content": "b",
    }
    for not_one in (VarsOnly(), Point(), Dumps, {"role": "user"}, "text", 3, None):
        assert not is_sdk_object(not_one)
    with pytest.raises(NotAMessage, match="Dumps's model_dump\\(\\) gave list, not a mapping"):
        as_message_list([Dumps([1, 2])])
    assert as_message_list([Dumps([1])], lenient=True)[0].data == [1]


@pytest.mark.parametrize(
    "bad", [VarsOnly(), Point(), object()], ids=["vars", "dataclass", "object"]
)
def test_an_item_that_is_neither_is_refused_by_every_call(bad: Any) -> None:
    kind = type(bad).__name__
    messages = [{"role": "user", "content": "hi"}, bad]
    calls = [
        lambda: hc.compress(messages, context_length=32_000, summarizer="fallback"),
        lambda: hc.count_tokens(messages),
        lambda: hc.to_wire(messages),
        lambda: hc.Compressor(context_length=32_000).update_from_usage(
            {"prompt_tokens": 5}, messages
        ),
    ]
    for call in calls:
        with pytest.raises(InvalidArgument) as err:
            call()
        assert isinstance(err.value, TypeError)
        assert kind in str(err.value) and ".model_dump()" in str(err.value)
    problems = hc.validate_messages(messages)  # reports, never raises
    assert problems == [
        f"message 1: expected a message object with a role, got a {kind}; pass a dict, or the "
        "SDK's object (with .model_dump())"
    ]


def test_the_old_error_types_still_hold() -> None:
    with pytest.raises(InvalidMessages) as err:
        hc.compress(["x"], context_length=32_000)  # type: ignore[list-item]
    assert isinstance(err.value, InvalidArgument) and isinstance(err.value, NotAMessage)
    assert err.value.problems == ["messages[0]: expected a message dict, got str"]


@pytest.mark.parametrize(
    ("usage", "said"),
    [
        (
            {"prompt_tokens": "120"},
            "usage['prompt_tokens'] must be a token count (an int >= 0) or None, got str '120'",
        ),
        (
            {"prompt_tokens": -1},
            "usage['prompt_tokens'] must be a token count (an int >= 0) or None, got int -1",
        ),
        ({"prompt_tokens": True}, "got bool True"),
        ({"prompt_tokens": 12.0}, "got float 12.0"),
        ({"input_tokens": 5, "cache_read_input_tokens": "9"}, "usage['cache_read_input_tokens']"),
        ({"prompt_tokens": 5, "completion_tokens": -2}, "usage['completion_tokens']"),
        (
            {"prompt_tokens": 5, "prompt_tokens_details": {"cached_tokens": "3"}},
            "usage['prompt_tokens_details']['cached_tokens'] must be a token count",
        ),
        (
            {"input_tokens": 5, "input_tokens_details": 3},
            "usage['input_tokens_details'] must be a mapping or None, got int 3",
        ),
        (
            Point(),
            "usage must be the API response's usage as a mapping ({'prompt_tokens': ...}) or "
            "the SDK's usage object (response.usage, anything with .model_dump()), got Point",
        ),
        (VarsOnly(), "got VarsOnly"),
        (None, "got None; with no usage reported, pass the whole response or skip"),
        (120, "got int 120"),
    ],
)
def test_a_bad_usage_record_is_refused(usage: Any, said: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        prompt_usage(usage)
    assert said in str(err.value)


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 0}, PromptUsage(0)),
        ({"completion_tokens": 4}, None),  # no prompt figure: nothing reported
        ({"prompt_tokens": None, "input_tokens": 7}, PromptUsage(7)),
        ({"id": "chatcmpl-1", "usage": None}, None),  # a whole response without usage
        ({"id": "x", "usage": {"prompt_tokens": 3}}, PromptUsage(3)),
        (Dumps({"input_tokens": 2, "cache_creation_input_tokens": 5}), PromptUsage(7)),
    ],
)
def test_usage_shapes(usage: Any, expected: PromptUsage | None) -> None:
    assert prompt_usage(usage) == expected


def test_deep_values_are_left_for_the_nesting_checks() -> None:
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = [deep]
    message = {"role": "user", "content": deep}
    assert as_message_list([message])[0] is message  # no RecursionError on the way
    assert hc.validate_messages([message])  # reported by the check that owns it


def test_reading_objects_imports_no_sdk() -> None:
    script = textwrap.dedent(
        """
        import sys
        import hermes_core as hc
        from hermes_core.tokens import prompt_usage

        class Usage:
            def model_dump(self, **options):
                return {"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 4}}

        class Message:
            def model_dump(self, **options):
                return {"role": "assistant", "content": "hi"}

        messages = [{"role": "user", "content": "q"}, Message()]
        assert hc.count_tokens(messages) > 0
        assert hc.validate_messages(messages) == []
        assert prompt_usage(Usage()).tokens == 9
        hc.compress(messages, context_length=32_000, summarizer="fallback")
        from hermes_core.formats import to_openai
        to_openai(messages, "openai")
        loaded = sorted(name for name in ("openai", "anthropic") if name in sys.modules)
        print(loaded)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip()) == []


def test_a_missing_sdk_skips_unless_the_sdks_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_SDKS_REQUIRED", raising=False)
    with pytest.raises(pytest.skip.Exception, match="tox's py3-all installs it"):
        require_sdk("hermes_no_such_sdk")
    monkeypatch.setenv("HERMES_SDKS_REQUIRED", "1")
    with pytest.raises(pytest.fail.Exception, match="hermes_no_such_sdk SDK is not installed"):
        require_sdk("hermes_no_such_sdk")


def test_the_compressor_refuses_a_bad_usage_record_and_keeps_its_count() -> None:
    compressor = hc.Compressor(context_length=32_000, summarizer="fallback")
    compressor.update_from_usage(Dumps({"prompt_tokens": 40}), [{"role": "user", "content": "hi"}])
    for bad in ({"prompt_tokens": "5"}, {"input_tokens": -1}, {"prompt_tokens": False}, Point()):
        with pytest.raises(InvalidArgument, match="usage"):
            compressor.update_from_usage(bad)
    assert compressor.last_prompt_tokens == 40 == compressor.running.anchored_tokens


def test_the_adapters_refuse_an_unknown_object_and_the_checks_report_it() -> None:
    from hermes_core.formats import payload_problems, to_openai

    payload = [{"role": "user", "content": "hi"}, Point()]
    for fmt in ("openai", "anthropic", "responses"):
        with pytest.raises(NotAMessage, match=r"message 1: expected a message dict, got Point"):
            to_openai(payload, fmt)
        assert any("Point" in problem for problem in payload_problems(payload, fmt))


class _Raises:
    def model_dump(self, **_options: Any) -> Any:
        raise ValueError("boom")


class _Nests:
    def model_dump(self, **_options: Any) -> Any:
        return {"role": "user", "content": [_Nests()]}


@pytest.mark.parametrize(
    ("bad", "said"), [(_Raises(), "model_dump() failed (ValueError: boom)"), (_Nests(), "nest")]
)
def test_an_object_whose_dump_fails_or_never_ends_is_refused(bad: Any, said: str) -> None:
    with pytest.raises(InvalidArgument, match="pass") as err:
        as_message_list([bad])
    assert said in str(err.value)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 200}},
        {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 11}},
    ],
)
def test_more_cached_tokens_than_the_prompt_is_refused(usage: Any) -> None:
    with pytest.raises(InvalidArgument, match="cannot exceed"):
        prompt_usage(usage)
