"""A session's active transcript as it is sent, with the store row behind each message.

Why its own object: ``prepare`` must cost O(new messages) per turn. The view keeps, per
message, the form the compressor and the trigger see (the API copy when recall was added),
the store's ``seq`` for it, and its wire form built once, so returning the list to send is a
list copy, never a deep copy or a recount of the transcript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.sessions.store import StoredMessage
from hermes_core.transcript.identity import message_digest
from hermes_core.transcript.messages import to_wire

__all__ = ["ActiveView", "api_content_of", "sent_form"]

Message = dict[str, Any]


def api_content_of(original: Mapping[str, Any], sent: Mapping[str, Any]) -> str | None:
    """What to keep in the store's ``api_content``: the sent content when it differs from the
    original (a string as is, a list of parts as JSON), else ``None``."""
    content = sent.get("content")
    if content == original.get("content"):
        return None
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def sent_form(row: StoredMessage) -> Message:
    """The message as it was sent, rebuilt from a stored row."""
    message = dict(row.message)
    if row.api_content is None:
        return message
    if isinstance(message.get("content"), list):
        try:
            parts = json.loads(row.api_content)
        except ValueError:
            parts = None
        if isinstance(parts, list):
            message["content"] = parts
            return message
    message["content"] = row.api_content
    return message


class ActiveView:
    """The messages of the active view, their store seqs and their cached wire forms."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.seqs: list[int | None] = []
        self._wire: list[Message] = []
        # the digest of the message as the host gave it (an API copy carries more: recall,
        # attachments), so a rewritten history finds its messages again
        self._given: list[bytes] = []

    def __len__(self) -> int:
        return len(self.sent)

    def extend(
        self,
        forms: Sequence[Message],
        seqs: Sequence[int | None],
        given: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """Append ``forms`` (as sent) with their store seqs; ``given``: the host's own form of
        each (default: the same)."""
        self.sent.extend(forms)
        self.seqs.extend(seqs)
        self._wire.extend(to_wire(forms))
        self._given.extend(message_digest(m) for m in (forms if given is None else given))

    def replace(self, forms: Sequence[Message], seqs: Sequence[int | None]) -> None:
        """A new view (after a compaction); wire forms of unchanged messages are reused."""
        known = {id(m): w for m, w in zip(self.sent, self._wire, strict=True)}
        given = {id(m): g for m, g in zip(self.sent, self._given, strict=True)}
        fresh = [m for m in forms if id(m) not in known]
        built = iter(to_wire(fresh))
        self._wire = [known[id(m)] if id(m) in known else next(built) for m in forms]
        self._given = [given[id(m)] if id(m) in given else message_digest(m) for m in forms]
        self.sent = list(forms)
        self.seqs = list(seqs)

    def origins(self, messages: Sequence[Mapping[str, Any]]) -> list[int | None]:
        """For each message, the seq of the view entry it is (by identity), else ``None``."""
        by_id = {id(m): s for m, s in zip(self.sent, self.seqs, strict=True)}
        return [by_id.get(id(m)) for m in messages]

    def reuse(self, messages: Sequence[Mapping[str, Any]]) -> tuple[list[Message], list[bool]]:
        """``messages`` with each one that equals (on the wire) an entry of the view, as the
        host gave it or as it was sent, replaced by that entry, in order, so its seq and API
        copy survive a history rewrite; and for each, whether it was found."""
        by_digest: dict[bytes, list[int]] = {}
        for index, digest in enumerate(self._given):
            by_digest.setdefault(digest, []).append(index)
        for index, form in enumerate(self.sent):
            digest = message_digest(form)
            if digest != self._given[index]:
                by_digest.setdefault(digest, []).append(index)
        taken: set[int] = set()
        out: list[Message] = []
        found: list[bool] = []
        for message in messages:
            matches = [i for i in by_digest.get(message_digest(message), []) if i not in taken]
            if matches:
                taken.add(matches[0])
                out.append(self.sent[matches[0]])
            else:
                out.append(dict(message))
            found.append(bool(matches))
        return out, found

    def wire(self) -> list[Message]:
        """The list to send: a new list of the cached wire dicts (treat them as read-only)."""
        return list(self._wire)
