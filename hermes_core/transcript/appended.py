"""What the session appended to a user message, told apart from what the user typed.

Why here, on the transcript floor: the background review must quote only the user's words,
and the compaction ledger must take only the user's words as the user's rules; both read the
same blocks the session appends after the user's text (the @-reference attachment and its
warnings, recalled memory), so both use this one split. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from hermes_core.transcript.messages import message_text

__all__ = [
    "APPENDED_HEADERS",
    "ATTACHED_HEADER",
    "MEMORY_CONTEXT_KEY",
    "MEMORY_FENCE",
    "WARNINGS_HEADER",
    "own_words",
    "split_appended",
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
_APPENDED: Final = re.compile(
    "^[ \t]*(?:" + "|".join(re.escape(h) for h in APPENDED_HEADERS) + ")", re.MULTILINE
)

_FENCE: Final = re.compile(r"<memory-context>.*?(?:</memory-context>|\Z)", re.DOTALL)


def split_appended(message: Mapping[str, Any]) -> tuple[str, str]:
    """``message``'s text as (what the user typed, what the session appended to it)."""
    text = message_text(message)
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


def own_words(message: Mapping[str, Any]) -> str:
    """What the user typed in ``message``: its text up to the first block the session appended
    (attachment, warnings, recalled memory), which the user did not write."""
    return split_appended(message)[0]
