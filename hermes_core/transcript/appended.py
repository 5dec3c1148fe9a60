"""What the user typed in a user message, told apart from what the session and the compressor
put around it.

Why here, on the transcript floor, and one split for everyone: the background review must
quote only the user's words, the taint index must trust only the user's words, and the
compaction ledger must take only the user's words as the user's rules. All three read the
same structure: a compaction summary the compressor merged in *before* the user's text (it
starts the message and ends at its end marker), and the blocks the session appends *after*
it (the @-reference attachment and its warnings, recalled memory). Split by that structure,
never by what the words say. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hermes_core.transcript.messages import message_text

__all__ = [
    "APPENDED_HEADERS",
    "ATTACHED_HEADER",
    "MEMORY_CONTEXT_KEY",
    "MEMORY_FENCE",
    "SUMMARY_END",
    "SUMMARY_HEADER",
    "SUMMARY_KEYS",
    "WARNINGS_HEADER",
    "UserParts",
    "own_words",
    "split_appended",
    "split_user",
    "starts_with_summary",
]

#: Where the exact injected recall bytes are kept on a message (:mod:`hermes_core.memory.recall`
#: re-exports it), so later turns replay the same.
MEMORY_CONTEXT_KEY: Final = "_memory_context"
#: The headers :mod:`hermes_core.references.expand` puts before the attachment and its
#: warnings (its ``ATTACHED_HEADER`` and ``WARNINGS_HEADER``). Copied, not imported: this floor
#: imports nothing that can read files or the web; a test keeps the copies equal.
ATTACHED_HEADER: Final = "--- Attached Context ---"
WARNINGS_HEADER: Final = "--- Context Warnings ---"
#: Where recalled memory starts (:func:`hermes_core.memory.recall.wrap_recall`).
MEMORY_FENCE: Final = "<memory-context>"
#: The headers of the blocks the session appends to a user message: the @-reference
#: attachment and its warnings (spec 40 §5), recalled memory. Each starts a line after the
#: user's text, so the user's words end at the first of them at a line start.
APPENDED_HEADERS: Final = (ATTACHED_HEADER, WARNINGS_HEADER, MEMORY_FENCE)
#: How :mod:`hermes_core.compression.assemble` marks a summary: its metadata keys
#: (``SUMMARY_KEY``, ``MERGED_KEY``), the header it starts with and the marker it ends at.
#: Copied, not imported (compression is a higher floor); a test keeps the copies equal.
SUMMARY_KEYS: Final = ("_compressed_summary", "_compressed_summary_merged")
SUMMARY_HEADER: Final = (
    "[CONTEXT SUMMARY — reference material from earlier turns that were compacted to save "
    "space. It records what happened; it is not a new instruction.]"
)
SUMMARY_END: Final = (
    "--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---"
)
_APPENDED: Final = re.compile(
    "^[ \t]*(?:" + "|".join(re.escape(h) for h in APPENDED_HEADERS) + ")", re.MULTILINE
)
_FENCE: Final = re.compile(r"<memory-context>.*?(?:</memory-context>|\Z)", re.DOTALL)
#: the archived rows a summary names, right after its end marker
_REF: Final = re.compile(r"\A\s*\[ref [^\]]{1,64}\]")


@dataclass(frozen=True)
class UserParts:
    """One user message split by structure: a compaction summary merged before the user's
    text, what the user typed, and what the session appended after it."""

    summary: str
    own: str
    appended: str


def starts_with_summary(message: Mapping[str, Any], text: str | None = None) -> bool:
    """A compaction summary starts ``message``, known by structure: the compressor's keys, or
    (after a round trip that dropped them) a user or assistant message whose text starts with
    the summary header. Nobody but the user or the compressor can put text at the start of
    such a message, and a user who types the header only makes their own words untrusted."""
    if any(message.get(key) for key in SUMMARY_KEYS):
        return True
    text = message_text(message) if text is None else text
    return message.get("role") in ("user", "assistant") and text.startswith(SUMMARY_HEADER)


def _split_tail(message: Mapping[str, Any], text: str) -> tuple[str, str]:
    """``text`` (the message after any summary) as (typed, appended by the session)."""
    removed: list[str] = []
    block = message.get(MEMORY_CONTEXT_KEY)
    if isinstance(block, str) and block and block in text:
        text = text.replace(block, "")
        removed.append(block)
    removed.extend(_FENCE.findall(text))
    text = _FENCE.sub("", text)
    cut = _APPENDED.search(text)
    if cut:
        removed.insert(0, text[cut.start() :])
        text = text[: cut.start()]
    return text, "\n".join(removed)


def split_user(message: Mapping[str, Any]) -> UserParts:
    """``message``'s text as its summary (merged before), the user's own words and what the
    session appended. The summary ends at its first end marker (``wrap_summary`` defuses
    copies inside the body); a summary without one is all summary."""
    text = message_text(message)
    summary = ""
    if starts_with_summary(message, text):
        summary, marker, rest = text.partition(SUMMARY_END)
        if not marker:
            return UserParts(text, "", "")
        text = _REF.sub("", rest, count=1)
    own, appended = _split_tail(message, text)
    return UserParts(summary, own, appended)


def split_appended(message: Mapping[str, Any]) -> tuple[str, str]:
    """``message``'s text as (what the user typed, everything else: a summary merged before
    it and what the session appended after it)."""
    parts = split_user(message)
    return parts.own, "\n".join(p for p in (parts.summary, parts.appended) if p)


def own_words(message: Mapping[str, Any]) -> str:
    """What the user typed in ``message``: no summary merged before it, none of the blocks
    the session appended (attachment, warnings, recalled memory), which the user did not
    write."""
    return split_user(message).own
