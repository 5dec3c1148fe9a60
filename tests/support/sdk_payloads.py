"""What the official ``openai`` and ``anthropic`` SDKs need from a test: the module (skipped
when missing, failed when ``HERMES_SDKS_REQUIRED=1``, as tox's py3-all sets), response bodies
as each API sends them, and clients pointed at the loopback server (``fake_openai.FakeLLM``).
"""

from __future__ import annotations

import importlib
import json
import os
from types import ModuleType
from typing import Any

import pytest
from fake_openai import FakeLLM, Step, raw


def require_sdk(name: str) -> ModuleType:
    """``openai`` or ``anthropic``; a skip without it, a failure when the SDKs are required."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        message = f"the {name} SDK is not installed ({exc}); tox's py3-all installs it"
        if os.environ.get("HERMES_SDKS_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)


def reply(body: dict[str, Any]) -> Step:
    """A 200 answer with ``body`` as JSON."""
    return raw(json.dumps(body))


def chat_completion(message: dict[str, Any], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A chat completion as OpenAI sends it (``refusal: null`` and ``annotations: []`` too)."""
    full = {"refusal": None, "annotations": [], **message}
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-sdk",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "fake-model",
        "choices": [{"index": 0, "message": full, "finish_reason": finish, "logprobs": None}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def chat_usage(prompt: int, cached: int = 0) -> dict[str, Any]:
    """A ``CompletionUsage`` body: ``cached`` of the ``prompt`` tokens came from the cache."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": 7,
        "total_tokens": prompt + 7,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def anthropic_message(
    content: list[dict[str, Any]], *, input_tokens: int, read: int = 0, written: int = 0
) -> dict[str, Any]:
    """A Messages API response; its ``input_tokens`` exclude the ``read`` and ``written``
    cache tokens, as Anthropic counts them."""
    uses_tool = any(block.get("type") == "tool_use" for block in content)
    return {
        "id": "msg_sdk",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": content,
        "stop_reason": "tool_use" if uses_tool else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": 9,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        },
    }


def responses_response(
    output: list[dict[str, Any]], *, input_tokens: int, cached: int = 0
) -> dict[str, Any]:
    """A Responses API response with ``output`` items."""
    return {
        "id": "resp_sdk",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": "completed",
        "model": "fake-model",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
            "output_tokens": 6,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + 6,
        },
    }


def output_text(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    """A Responses assistant ``message`` output item."""
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A Responses ``function_call`` output item."""
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def openai_client(llm: FakeLLM) -> Any:
    """The real ``openai.OpenAI`` pointed at the loopback server (no retries)."""
    openai = require_sdk("openai")
    return openai.OpenAI(base_url=llm.base_url, api_key="sk-test", max_retries=0, timeout=30)


def anthropic_client(llm: FakeLLM) -> Any:
    """The real ``anthropic.Anthropic`` pointed at the loopback server (``/v1/messages``)."""
    anthropic = require_sdk("anthropic")
    llm.add_route("/v1/messages")
    root = llm.base_url.removesuffix("/v1")
    return anthropic.Anthropic(base_url=root, api_key="sk-ant-test", max_retries=0, timeout=30)
