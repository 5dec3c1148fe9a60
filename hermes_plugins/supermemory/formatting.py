"""Text in and out of Supermemory: the stored form of a turn and the recalled block.

Recall is plain text, one memory per line, bounded in size; the core scans it and wraps it
in ``<memory-context>``, so nothing here adds fences or instructions.
"""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core.types import Turn
from hermes_plugins.supermemory.backend import Hit

#: longest single recalled item, and the whole recalled block, in characters
HIT_MAX_CHARS = 2_000
RECALL_MAX_CHARS = 8_000


def turn_content(turn: Turn) -> str:
    """The document stored for one completed turn."""
    parts = []
    if turn.user.strip():
        parts.append(f"User: {turn.user.strip()}")
    if turn.assistant.strip():
        parts.append(f"Assistant: {turn.assistant.strip()}")
    return "\n\n".join(parts)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def recall_text(hits: Sequence[Hit]) -> str | None:
    """``- memory`` lines, de-duplicated, within :data:`RECALL_MAX_CHARS`; ``None`` if empty."""
    lines: list[str] = []
    seen: set[str] = set()
    used = 0
    for hit in hits:
        line = "- " + _one_line(hit.text, HIT_MAX_CHARS)
        if line in seen:
            continue
        if used + len(line) + 1 > RECALL_MAX_CHARS:
            break
        seen.add(line)
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines) or None
