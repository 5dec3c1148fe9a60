"""Helpers for the review tests: completions that carry tool calls, built with the shared fake's
public ``raw()`` step, and a real file memory in a temporary home."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_openai import Step, raw

from hermes_core.memory.approval import MemoryWriter, PendingWrites
from hermes_core.memory.store import MemoryStore
from hermes_core.memory.tool import MEMORY_TOOL_SCHEMA, MemoryTool


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "c1") -> dict[str, Any]:
    """One OpenAI tool call as a server sends it (arguments as JSON text)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def tool_calls(*calls: Any, content: Any = None, finish_reason: str = "tool_calls") -> Step:
    """A completion whose message asks for ``calls`` (any shape: malformed ones too)."""
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "tool_calls": list(calls)},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return raw(json.dumps(payload))


@dataclass
class Memory:
    """A real store, writer (approval ``allow``) and memory tool with origin background_review."""

    home: Path
    store: MemoryStore
    writer: MemoryWriter
    tool: MemoryTool
    schema: dict[str, Any] = field(default_factory=lambda: MEMORY_TOOL_SCHEMA)

    @property
    def pending_dir(self) -> Path:
        return self.home / "pending" / "memory"

    def pending(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted(self.pending_dir.glob("*.json"))]

    def file(self, target: str) -> Path:
        return self.home / "memories" / ("USER.md" if target == "user" else "MEMORY.md")


def real_memory(home: Path, *, mode: str = "allow") -> Memory:
    store = MemoryStore(home / "memories")
    writer = MemoryWriter(store, PendingWrites(home / "pending" / "memory"), mode=mode)
    return Memory(home, store, writer, MemoryTool(writer, origin="background_review"))
