"""Helpers for the review tests: completions that carry tool calls (the shared fake's
``call()`` and ``tool_calls()``), and a real file memory in a temporary home."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_openai import call, tool_calls  # noqa: F401 - re-exported for the review tests

from hermes_core.memory.approval import MemoryWriter, PendingWrites
from hermes_core.memory.store import MemoryStore
from hermes_core.memory.tool import MEMORY_TOOL_SCHEMA, MemoryTool


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
