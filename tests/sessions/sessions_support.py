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
