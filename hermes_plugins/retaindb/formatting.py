"""Turning RetainDB records into recall text and tool answers, for this user only.

The owner filter lives here so that every path that shows records (recall, search tool)
drops what the server should not have returned: another user's or another project's data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_WORD = re.compile(r"\w{3,}")


def owned(records: Iterable[dict[str, Any]], user_id: str, project: str) -> list[dict[str, Any]]:
    """Only records the server marks as this user's (and this project's, when it says)."""
    mine = []
    for record in records:
        if record.get("user_id") != user_id:
            continue
        if record.get("project", project) != project:
            continue
        if not isinstance(record.get("content"), str) or record.get("id") is None:
            continue
        mine.append(record)
    return mine


def snippet(content: str, query: str, limit: int) -> str:
    """At most ``limit`` characters of ``content``, around the rarest query word it holds.

    The rarest word, because "what" or "about" says little about where the answer is.
    """
    text = " ".join(content.split())
    if len(text) <= limit:
        return text
    lowered = text.lower()
    counts = {word: lowered.count(word) for word in set(_WORD.findall(query.lower()))}
    found = [(count, -len(word), word) for word, count in counts.items() if count]
    anchor = lowered.find(min(found)[2]) if found else 0
    start = max(0, anchor - limit // 3)
    start = min(start, len(text) - limit)
    body = text[start : start + limit].strip()
    return ("…" if start > 0 else "") + body + ("…" if start + limit < len(text) else "")


def recall_text(records: list[dict[str, Any]], query: str, limit: int) -> str | None:
    """One memory per line, as plain text; None when there is nothing."""
    lines = [f"- {snippet(record['content'], query, limit)}" for record in records]
    lines = [line for line in lines if line != "- "]
    return "\n".join(lines) or None


def tool_record(record: dict[str, Any]) -> dict[str, Any]:
    """What the model sees of a record: id, content, and the score/time when given."""
    shown = {"id": str(record["id"]), "content": record["content"]}
    for key in ("score", "created_at", "session_id"):
        if record.get(key) is not None:
            shown[key] = record[key]
    return shown
