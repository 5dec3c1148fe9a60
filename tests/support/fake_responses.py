"""OpenAI Responses answers for the loopback server, and a scripted agent model behind both
protocols (Responses and chat completions) that answers what it is sent.

The builders (``response``, ``message_item``, ``function_call_item``, ``usage``) make the
JSON bodies ``POST /v1/responses`` returns. ``AgentModel`` is a ``FakeLLM.responder``: it
reads the request (Responses ``input`` or chat ``messages``), prices it in tokens from its
size, refuses anything over its window with the provider's 400 "maximum context length",
checks the tool pairs a provider checks, and answers from directives in the newest user
text (``[tool NAME ARGS-JSON]`` calls a tool, ``xN`` repeats the call N times), otherwise
with text. Cached tokens are the prompt prefix shared with the previous request, in steps
of 128 tokens from 1,024 as OpenAI bills them.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fake_openai import Recorded, Step, http_error, raw

RESPONSES = "/v1/responses"
CHAT = "/v1/chat/completions"
_DIRECTIVE = re.compile(r"\[tool (\w+) (\{.*?\})(?: x(\d+))?\]")


def usage(input_tokens: int, output_tokens: int, cached: int = 0) -> dict[str, Any]:
    """A Responses usage record (chat form: see ``chat_usage``)."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }


def chat_usage(prompt: int, completion: int, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def message_item(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    """An assistant output message."""
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call_item(
    name: str, arguments: Mapping[str, Any] | str, call_id: str, item_id: str = "fc_1"
) -> dict[str, Any]:
    """A function call the model asks for (arguments as JSON text, as the API sends them)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": item_id,
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": text,
        "status": "completed",
    }


def response(
    output: list[dict[str, Any]],
    *,
    usage_record: dict[str, Any] | None = None,
    response_id: str = "resp_1",
    model: str = "fake-agent",
    stream: bool = False,
) -> Step:
    """A completed Responses API answer with ``output`` items; ``stream``: as server-sent
    events (``response.created``, one ``response.output_item.done`` per item,
    ``response.completed``), what ``stream: true`` requests get."""
    body = {
        "id": response_id,
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage_record or usage(10, 5),
    }
    if not stream:
        return raw(json.dumps(body))
    started = {**body, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    for index, item in enumerate(output):
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": body})
    lines = []
    for number, event in enumerate(events):
        data = json.dumps({**event, "sequence_number": number})
        lines.append(f"event: {event['type']}\ndata: {data}\n\n")
    return raw("".join(lines), content_type="text/event-stream")


def too_long(tokens: int, window: int) -> Step:
    """The provider's refusal of a prompt over its window."""
    return http_error(
        400,
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages.",
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") or p.get("output") or "" for p in content if isinstance(p, dict)]
        return " ".join(str(p) for p in parts)
    return "" if content is None else str(content)


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class Unit:
    """One item of a request, reduced to what the model reads: kind, text, call id."""

    kind: str  # user, assistant, call, output, system
    text: str
    call_id: str = ""
    name: str = ""


def responses_units(body: Mapping[str, Any]) -> list[Unit]:
    units = []
    if body.get("instructions"):
        units.append(Unit("system", str(body["instructions"])))
    for item in body.get("input") or []:
        kind = item.get("type", "message")
        if kind == "function_call":
            text = f"{item.get('name')} {item.get('arguments')}"
            units.append(Unit("call", text, item.get("call_id", ""), item.get("name", "")))
        elif kind == "function_call_output":
            units.append(Unit("output", _text_of(item.get("output")), item.get("call_id", "")))
        else:
            role = item.get("role", "user")
            role = "system" if role == "developer" else role
            units.append(Unit(role, _text_of(item.get("content"))))
    return units


def chat_units(body: Mapping[str, Any]) -> list[Unit]:
    units = []
    for message in body.get("messages") or []:
        role = message.get("role")
        if role == "tool":
            units.append(Unit("output", _text_of(message.get("content")), message["tool_call_id"]))
            continue
        units.append(Unit(role or "user", _text_of(message.get("content"))))
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            text = f"{function.get('name')} {function.get('arguments')}"
            units.append(Unit("call", text, call.get("id", ""), function.get("name", "")))
    return units


def pair_problems(units: list[Unit]) -> list[str]:
    """What a provider refuses: an output for no earlier call, a call never answered (except
    in the model's last turn: a request never ends with one, so any is a problem)."""
    problems, open_calls = [], set()
    for index, unit in enumerate(units):
        if unit.kind == "call":
            open_calls.add(unit.call_id)
        elif unit.kind == "output":
            if unit.call_id not in open_calls:
                problems.append(f"item {index}: function_call_output {unit.call_id} has no call")
            open_calls.discard(unit.call_id)
    problems += [f"function_call {c} has no output" for c in sorted(open_calls)]
    return problems


@dataclass
class AgentModel:
    """A deterministic agent model for ``FakeLLM.responder`` (thread-safe)."""

    window: int = 16_384
    reply_chars: int = 900
    prompts: list[int] = field(default_factory=list)  # every request's size in tokens
    cached: list[int] = field(default_factory=list)  # the cached part of each answered one
    refused: list[int] = field(default_factory=list)  # sizes refused as over the window
    broken: list[str] = field(default_factory=list)  # tool-pair problems seen
    _previous: list[str] = field(default_factory=list)
    _calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, recorded: Recorded) -> Step:
        body = recorded.json or {}
        chat = recorded.path.startswith(CHAT)
        units = chat_units(body) if chat else responses_units(body)
        tools = json.dumps(body.get("tools") or [], sort_keys=True)
        keys = [f"{u.kind}:{u.call_id}:{u.text}" for u in units]
        sizes = [_tokens(u.text) + 4 for u in units]
        tokens = _tokens(tools) + sum(sizes)
        with self._lock:
            self.prompts.append(tokens)
            shared = 0
            for mine, theirs in zip(keys, self._previous, strict=False):
                if mine != theirs:
                    break
                shared += 1
            self._previous = keys
            problems = pair_problems(units)
            self.broken += problems
            if tokens > self.window:
                self.refused.append(tokens)
                return too_long(tokens, self.window)
            if problems:
                return http_error(400, "; ".join(problems))
            self._calls += 1
            number = self._calls
            prefix = _tokens(tools) + sum(sizes[:shared])
            cached = 0 if prefix < 1024 else prefix - prefix % 128
            self.cached.append(cached)
        stream = bool(body.get("stream"))
        return self._answer(units, tokens, cached, number, chat=chat, stream=stream)

    def _answer(
        self, units: list[Unit], tokens: int, cached: int, number: int, *, chat: bool, stream: bool
    ) -> Step:
        user_at = max((i for i, u in enumerate(units) if u.kind == "user"), default=-1)
        ask = units[user_at].text if user_at >= 0 else ""
        done = [u for u in units[user_at + 1 :] if u.kind == "output"]
        wanted = _DIRECTIVE.search(ask)
        if wanted is not None and len(done) < int(wanted.group(3) or 1):
            name, args = wanted.group(1), wanted.group(2)
            call_id = f"call_{number}"
            if chat:
                return self._chat(None, [(name, args, call_id)], tokens, cached)
            item = function_call_item(name, args, call_id, item_id=f"fc_{number}")
            record = usage(tokens, 20, cached)
            return response([item], usage_record=record, response_id=f"r{number}", stream=stream)
        seen = done[-1].text[:80] if done else ask[:80]
        filler = " ".join(f"note{number}-{k}" for k in range(self.reply_chars // 12))
        text = f"Answer {number} to: {seen} | {filler}"
        if chat:
            return self._chat(text, [], tokens, cached)
        out = _tokens(text)
        item = message_item(text, item_id=f"msg_{number}")
        record = usage(tokens, out, cached)
        return response([item], usage_record=record, response_id=f"r{number}", stream=stream)

    def _chat(
        self, text: str | None, calls: list[tuple[str, str, str]], tokens: int, cached: int
    ) -> Step:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [
                {"id": c, "type": "function", "function": {"name": n, "arguments": a}}
                for n, a, c in calls
            ]
        body = {
            "id": "chatcmpl-agent",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "fake-agent",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": chat_usage(tokens, _tokens(text or "") + 20, cached),
        }
        return raw(json.dumps(body))
