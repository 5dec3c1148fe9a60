"""Message shapes and small builders the session-store tests share (a module of its own:
``from conftest import`` is ambiguous once several test folders have a conftest.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hermes_core.sessions.sqlite import SQLiteSessionStore


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str | None, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_result(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": text}


#: every shape a transcript holds, and a few it should not but might
SHAPES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a careful assistant."},
    user("plain text"),
    user(""),
    user("unicode: 日本語のテキスト, émoji 🎉, RTL עברית, zero\u200bwidth, nul \x00 byte"),
    user("a lone surrogate \ud800 survives"),
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "and this"},
        ],
    },
    assistant(None, tool_calls=[call("c1", "read_file", '{"path": "src/app.py"}')]),
    assistant(
        "two at once",
        tool_calls=[
            call("c2", "terminal", '{"command": "pytest -k \\"foo\\""}'),
            {"id": "c3", "type": "function", "function": {"name": "grep", "arguments": {"q": 1}}},
        ],
    ),
    tool_result("c1", "read_file", "def main():\n    return 0\n"),
    {"role": "tool", "tool_call_id": "c2", "content": None},
    {"content": "no role at all"},
    {"role": "assistant"},
    {"role": "assistant", "content": "meta keys", "_compressed_summary": True, "x": [1, 2.5]},
    {"tool_calls": [], "role": "assistant", "content": "keys in an unusual order"},
    {"role": 7, "content": 3.5, "name": None, "tool_call_id": 12, "tool_calls": {"odd": True}},
    {"role": "user", "content": {"not": "a list"}, "reasoning": {"steps": ["a", "b"]}},
    {"role": "assistant", "content": "nan and big ints", "n": float("inf"), "big": 2**70},
]


def raw(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows straight from the file, through a connection of the test's own."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def snapshot(store: SQLiteSessionStore, session_id: str) -> list[tuple[Any, ...]]:
    """Everything the store holds for one session, for before/after comparisons."""
    return [
        (m.seq, m.active, m.compacted, dict(m.message), m.api_content, m.token_count)
        for m in store.messages(session_id, include_archived=True)
    ]
