"""Turning Mem0 records into recall text and tool results, and checking who owns them.

Ownership is read from the record itself (Mem0 stores ``user_id`` on every memory), so a
record whose owner is missing or different is never shown: fail closed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def owner(record: Mapping[str, Any]) -> str | None:
    value = record.get("user_id")
    return value if isinstance(value, str) else None


def text_of(record: Mapping[str, Any]) -> str:
    value = record.get("memory")
    return value if isinstance(value, str) else ""


def owned(records: Iterable[Mapping[str, Any]], user_id: str) -> list[Mapping[str, Any]]:
    """Only the records the backend says belong to ``user_id`` and that hold text."""
    return [r for r in records if owner(r) == user_id and text_of(r).strip()]


def recall_text(records: Iterable[Mapping[str, Any]]) -> str | None:
    """One memory a line (``- ...``); line breaks inside a memory become spaces."""
    lines = [f"- {' '.join(text_of(record).split())}" for record in records]
    return "\n".join(lines) or None


def tool_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """What a model needs to act on a memory: its id, text and (when searched) score."""
    item: dict[str, Any] = {"id": str(record.get("id", "")), "memory": text_of(record)}
    score = record.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        item["score"] = round(float(score), 4)
    return item


def as_json(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def error(message: str, **extra: Any) -> str:
    """A JSON error a model can act on."""
    return as_json({"error": message, **extra})
