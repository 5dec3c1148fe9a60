"""A session's taint index: what of the view the model read came from untrusted text.

Why here, next to the view: the view is everything the model can copy from. Each message is
indexed once, when it enters the view (taken in, read back on resume, restored by an undo,
rewritten by a compaction; a reload after another host wrote indexes only the rows it had not
seen), so judging a write costs O(its length). Tool results (by tool
name; ``session_search`` and ``session_recall`` results are ``recalled``), the attachment and
recalled memory appended to a user message, and compaction summaries are untrusted; the
user's own words are trusted; the assistant's words are the model's own and count as neither.
The index never shrinks: a summary replacing a page must not make the page's words clean.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core.host.view import ActiveView
from hermes_core.provenance import TaintIndex
from hermes_core.transcript.appended import SUMMARY_END, split_user, starts_with_summary
from hermes_core.transcript.messages import message_text, tool_name_for_results

__all__ = ["RECALL_TOOLS", "SessionTaint", "WatchedView"]

Message = dict[str, Any]
#: tools whose results are stored conversation text: ``recalled``, not a fresh tool result
RECALL_TOOLS: Final = frozenset({"session_search", "session_recall"})
_FENCE: Final = re.compile(r"<memory-context>.*?(?:</memory-context>|\Z)", re.DOTALL)


class SessionTaint:
    """The index of one session, fed message by message."""

    def __init__(self, index: TaintIndex | None = None) -> None:
        self.index = index if index is not None else TaintIndex()
        self._tool_names: dict[str, str] = {}
        self._seen: set[int] = set()  # stored rows indexed already: (seq, role, text) hashed
        self.indexed = 0  # messages indexed so far (a reload must not index them again)

    def absorb(
        self, messages: Sequence[Mapping[str, Any]], seqs: Sequence[int | None] = ()
    ) -> None:
        """Index each message; a stored row (its ``seqs`` entry not None) that was indexed
        before, with the same text, is skipped (a reload reads the whole session back)."""
        for message in self.unseen(messages, seqs):
            self.indexed += 1
            self._one(message)

    def unseen(
        self, messages: Sequence[Mapping[str, Any]], seqs: Sequence[int | None]
    ) -> list[Mapping[str, Any]]:
        """The messages not indexed yet (and noted as indexed now)."""
        fresh = []
        for position, message in enumerate(messages):
            if not isinstance(message, Mapping):
                continue
            seq = seqs[position] if position < len(seqs) else None
            if seq is not None:
                key = hash((seq, message.get("role"), message_text(message)))
                if key in self._seen:
                    continue
                self._seen.add(key)
            fresh.append(message)
        return fresh

    def _one(self, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        text = message_text(message)
        if role == "user":
            parts = split_user(message)  # summary merged before, the user's words, appended
            self.index.add_untrusted(parts.summary, "summary")
            self.index.add_trusted(parts.own)
            self._appended(parts.appended)
            return
        if starts_with_summary(message, text):
            # the summary ends at its first end marker (wrap_summary defuses copies inside
            # the body); only what the compressor merged it into, after the marker, is judged
            # by its role. A marker anywhere else is just text of whoever wrote it.
            summary, marker, rest = text.partition(SUMMARY_END)
            self.index.add_untrusted(summary, "summary")
            if not marker or not rest.strip():
                return
            message = {**message, "content": rest}  # the message the summary was merged into
            text = rest
        if role == "assistant":
            self._tool_names.update(tool_name_for_results([message]))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            name = self._tool_names.get(call_id) if isinstance(call_id, str) else None
            if name is None and isinstance(message.get("name"), str):
                name = message["name"]
            kind = "recalled" if name in RECALL_TOOLS else "tool"
            self.index.add_untrusted(text, kind, name)

    def _appended(self, appended: str) -> None:
        """What the session appended to a user message: recalled memory, the attachment."""
        recalled = "\n".join(_FENCE.findall(appended))
        self.index.add_untrusted(recalled, "recalled")
        self.index.add_untrusted(_FENCE.sub("", appended).strip(), "attachment")


class WatchedView(ActiveView):
    """An :class:`ActiveView` that hands every message entering it to the taint index."""

    def __init__(self, taint: SessionTaint) -> None:
        super().__init__()
        self.taint = taint

    @classmethod
    def adopt(cls, view: ActiveView, taint: SessionTaint) -> WatchedView:
        """``view`` watched from now on (what it holds already is indexed)."""
        watched = cls(taint)
        watched.__dict__.update({k: v for k, v in vars(view).items() if k != "taint"})
        taint.absorb(taint.unseen(watched.sent, watched.seqs))  # a reload: only rows not seen
        return watched

    def extend(
        self,
        forms: Sequence[Message],
        seqs: Sequence[int | None],
        given: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        super().extend(forms, seqs, given)
        self.taint.absorb(self.taint.unseen(forms, seqs))

    def replace(self, forms: Sequence[Message], seqs: Sequence[int | None]) -> None:
        known = {id(m) for m in self.sent}
        fresh = [i for i, m in enumerate(forms) if id(m) not in known]
        super().replace(forms, seqs)
        fresh_seqs = [seqs[i] if i < len(seqs) else None for i in fresh]
        self.taint.absorb(self.taint.unseen([forms[i] for i in fresh], fresh_seqs))
