"""The provenance a review's write carries: source ``review``, and backed by the user only
when the gate checked a quote of the user's own words.

Why set here, around the handler call: the review runs on a thread of its own, so no
session's write context reaches it; and the model writes the tool arguments, so what backs a
write must come from the gate, never from an argument. The index is built from the snapshot
the review read: the user's own words are trusted, tool results and what the session appended
to a user message (attachments, recalled memory) are not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.provenance import TaintIndex, WriteContext
from hermes_core.redact import redact
from hermes_core.transcript.appended import split_user
from hermes_core.transcript.messages import message_text

__all__ = ["IndexOf", "review_context", "snapshot_index"]

IndexOf = Callable[[Sequence[Mapping[str, Any]]], TaintIndex]


def snapshot_index(snapshot: Sequence[Mapping[str, Any]]) -> TaintIndex:
    """A taint index of ``snapshot`` (a host gives a finer one, with tool names and kinds)."""
    index = TaintIndex()
    for message in snapshot:
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "user":
            parts = split_user(message)  # a merged summary before, appended blocks after
            index.add_untrusted(parts.summary, "summary")
            index.add_trusted(parts.own)
            index.add_untrusted(parts.appended, "attachment")
        elif message.get("role") == "tool":
            name = message.get("name")
            index.add_untrusted(
                message_text(message), "tool", name if isinstance(name, str) else None
            )
    return index


def review_context(
    index: TaintIndex,
    *,
    backed: bool,
    note: str,
    session_id: str | None = None,
    user_id: str | None = None,
) -> WriteContext:
    """The write context of one review call."""
    return WriteContext(
        index,
        session_id=session_id,
        user_id=user_id,
        source="review",
        backed=backed,
        note=redact(note) or None,  # the gate's notes carry counts, never the fact's words
    )
