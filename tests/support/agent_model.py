"""A deterministic *agent model* behind :class:`fake_openai.FakeLLM`, for driving a real host.

It answers what it is sent, as a provider would: a user turn ``"turn N: ..."`` gets a tool
call on the turns the script says (``read_file`` of a workspace file, or a tool the test
names), a tool result gets a short text answer; ``usage`` carries ``prompt_tokens`` counted
from the request (messages and tool schemas, about four characters a token) and
``prompt_tokens_details.cached_tokens`` (the prefix shared with the previous request, as a
provider's prompt cache bills it). A request over ``window`` tokens is refused with HTTP 400
"maximum context length", like a real provider, and counted in ``rejected``. A summary
request (a host's compressor asking the same endpoint, no tools and "summar" in it) gets a
short summary. Every request's size is kept in ``sizes``.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fake_openai import Recorded, Step, call, http_error, raw

__all__ = ["AgentModel", "count_tokens"]

TURN = re.compile(r"turn (\d+)\b", re.IGNORECASE)


def count_tokens(payload: Any) -> int:
    """About four characters a token over the request's messages and tools (stable, cheap)."""
    messages = payload.get("messages") or []
    tools = payload.get("tools") or []
    text = json.dumps(messages, ensure_ascii=False) + json.dumps(tools, ensure_ascii=False)
    return math.ceil(len(text) / 4) + 3 * len(messages)


def _prefix_tokens(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n // 4


@dataclass
class AgentModel:
    """``llm.responder = AgentModel(...)``; see the module docstring."""

    window: int = 16_384
    #: turn number -> (tool name, arguments) for turns that call a tool first
    tool_for_turn: Callable[[int], tuple[str, dict[str, Any]] | None] = lambda _n: None
    answer_chars: int = 200
    sizes: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)
    summaries: int = 0
    cached: list[int] = field(default_factory=list)
    _last_text: str = ""
    _calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, recorded: Recorded) -> Step:
        payload = recorded.json if isinstance(recorded.json, dict) else {}
        messages = payload.get("messages") or []
        tokens = count_tokens(payload)
        with self._lock:
            if self._summary_request(payload):
                self.summaries += 1
                summary = {"role": "assistant", "content": _SUMMARY}
                return self._reply(summary, tokens, 0, stream=bool(payload.get("stream")))
            self.sizes.append(tokens)
            if tokens > self.window:
                self.rejected.append(tokens)
                return http_error(
                    400,
                    f"This model's maximum context length is {self.window} tokens. However, "
                    f"your messages resulted in {tokens} tokens. Please reduce the length.",
                )
            text = json.dumps(messages, ensure_ascii=False)
            cached = _prefix_tokens(self._last_text, text)
            self._last_text = text
            self.cached.append(cached)
            message = self._message_for(messages)
            return self._reply(message, tokens, cached, stream=bool(payload.get("stream")))

    @staticmethod
    def _summary_request(payload: dict[str, Any]) -> bool:
        if payload.get("tools"):
            return False
        blob = json.dumps(payload.get("messages") or [])[:4000].lower()
        return "summar" in blob and "turn" not in blob[:40]

    def _message_for(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        last = messages[-1] if messages else {}
        user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        found = TURN.search(str(user.get("content") or ""))
        number = int(found.group(1)) if found else 0
        if last.get("role") == "user":
            planned = self.tool_for_turn(number)
            if planned is not None:
                self._calls += 1
                name, arguments = planned
                return {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call(name, arguments, call_id=f"call_{self._calls}")],
                }
        body = f"Turn {number} done. " + ("Noted the details of this step. " * 20)
        return {"role": "assistant", "content": body[: self.answer_chars]}

    @staticmethod
    def _reply(message: dict[str, Any], prompt: int, cached: int, *, stream: bool) -> Step:
        completion = max(1, len(json.dumps(message)) // 4)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        base = {"id": "chatcmpl-agent", "created": 0, "model": "agent-model"}
        if not stream:
            choice = {"index": 0, "message": message, "finish_reason": finish}
            body = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            return raw(json.dumps(body))
        # server-sent events, as a provider streams: the delta, the finish, then the usage
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": i, **tc} for i, tc in enumerate(message["tool_calls"])]
        chunks = [
            {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {"choices": [], "usage": usage},
        ]
        lines = [
            f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', **c})}\n\n"
            for c in chunks
        ]
        return raw("".join(lines) + "data: [DONE]\n\n", content_type="text/event-stream")


_SUMMARY = (
    "## Goal\nWork through the numbered turns.\n\n## Progress\nEarlier turns read files and "
    "answered; nothing is open.\n\n## Active Task\nThe next numbered turn."
)
