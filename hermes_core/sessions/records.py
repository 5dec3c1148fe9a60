"""Rows as the records of :mod:`hermes_core.sessions.store`, and search hits with their excerpts,
the same way in every backend.

Why here: a backend reads its own columns with its own SQL, but what it hands back (a
:class:`SessionRecord`, a :class:`StoredMessage`, a :class:`SearchHit` whose snippet is cut
from the redacted text) must not depend on which backend it was. Each builder takes the row's
values in the order of the shared column lists, and ``text``: how the backend turns a stored
string back into the one it was given (the SQLite store stores strings as they are; the
PostgreSQL store unescapes NUL). Pure functions: no SQL, no connection.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hermes_core.redact import redact
from hermes_core.sessions.query import contains_any, mark_matches
from hermes_core.sessions.store import SearchHit, SessionRecord, SnippetLine, StoredMessage

__all__ = [
    "EXCERPT_WIDTH",
    "BestMatch",
    "appended_rows",
    "context_line",
    "preview",
    "session_record",
    "snippet",
    "stored_message",
]

M = TypeVar("M")
Text = Callable[[Any], "str | None"]
#: the message dict of a row, from the values of its message columns and its ``extra`` JSON
Decode = Callable[[Sequence["str | None"], "str | None"], dict[str, Any]]

#: how wide a snippet or a context line may be, in characters
EXCERPT_WIDTH = 160


def _same(value: Any) -> Any:
    return value


def appended_rows(
    encoded: Sequence[M],
    apis: Sequence[str | None],
    tokens: Sequence[int | None],
    *,
    seq: int,
    pos: int,
) -> list[tuple[int, int, M, str | None, int | None]]:
    """``(seq, pos, message, api_content, token_count)`` of appended messages: numbered on
    from the session's newest ``seq`` and the active view's last ``pos``."""
    return [
        (seq + n, pos + n, enc, api, count)
        for n, (enc, api, count) in enumerate(zip(encoded, apis, tokens, strict=True), start=1)
    ]


def session_record(
    row: Sequence[Any],
    *,
    counters: Callable[[Any], Mapping[str, int]],
    text: Text = _same,
) -> SessionRecord:
    """The record of a ``sessions`` row (``SESSION_COLUMNS`` order); ``counters`` reads the
    counters column (JSON text or ``jsonb``); the state column is JSON text in both."""
    sid, user, parent, title, model, started, ended, reason, counts, state = row
    return SessionRecord(
        id=text(sid) or "",
        user_id=text(user),
        parent_session_id=text(parent),
        title=text(title),
        model=text(model),
        started_at=float(started),
        ended_at=None if ended is None else float(ended),
        end_reason=text(reason),
        counters=counters(counts),
        state=json.loads(state or "{}"),
    )


def stored_message(row: Sequence[Any], decode: Decode, text: Text = _same) -> StoredMessage:
    """The record of a ``messages`` row (``MESSAGE_COLUMNS`` order)."""
    session_id, seq, *columns, extra, active, compacted, api, timestamp, tokens = row
    return StoredMessage(
        session_id=text(session_id) or "",
        seq=int(seq),
        message=decode([text(value) for value in columns], extra),
        active=bool(active),
        compacted=bool(compacted),
        api_content=text(api),
        timestamp=float(timestamp),
        token_count=None if tokens is None else int(tokens),
    )


def preview(content: str | None, tools: str | None, width: int = EXCERPT_WIDTH) -> str:
    """A one-line excerpt of a row for search context: its text, else the tools it names."""
    text = " ".join((content or "").split())
    if not text and tools and tools.strip():
        text = f"[tools: {tools.strip()}]"
    return text if len(text) <= width else text[: width - 1] + "…"


def snippet(texts: Sequence[str | None], terms: Sequence[str]) -> str:
    """An excerpt of the first of ``texts`` (content, tool names, tool arguments) that matched,
    terms marked, cut from the *redacted* text: an excerpt cut first (as an index's own snippet
    function does) can keep half a key that the redactor no longer recognises."""
    clean = [redact(t) if t else t for t in texts]
    source = next((t for t in clean if t and contains_any(t, terms)), None)
    source = source or next((t for t in clean if t), "")
    return mark_matches(source, terms, width=EXCERPT_WIDTH)


def context_line(seq: int, role: str | None, content: str | None, tools: str | None) -> SnippetLine:
    """A neighbour of the hit: its redacted text in one line, else the tools it names."""
    return SnippetLine(
        int(seq), role or "", preview(redact(content) if content else content, tools)
    )


@dataclass(frozen=True)
class BestMatch:
    """The best-scoring message of one session, as a backend's grouping query returns it."""

    session_id: str
    user_id: str | None
    title: str | None
    started_at: float
    seq: int
    role: str | None
    score: float
    matches: int

    def hit(self, snippet: str, context: Sequence[SnippetLine], text: Text = _same) -> SearchHit:
        """The hit, with the snippet of the matching message and its neighbours."""
        return SearchHit(
            session_id=text(self.session_id) or "",
            user_id=text(self.user_id),
            title=text(self.title),
            started_at=float(self.started_at),
            score=float(self.score),
            seq=int(self.seq),
            role=text(self.role) or "",
            snippet=snippet,
            context=tuple(context),
            matches=int(self.matches),
        )
