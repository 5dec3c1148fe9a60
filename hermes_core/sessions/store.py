"""The session store seam: what every backend keeps and answers (spec 40 §1).

Why a protocol: the SQLite store is the single-machine default, but a gateway that runs many
hosts needs a shared database. The host only ever talks to this interface; a backend is
chosen through the ``session_store`` hook (first answer wins, the built-in SQLite store last).

Rules every backend keeps:

* Nothing committed is ever lost: a failed or interrupted write leaves the store as it was.
* A compaction commit is one transaction: the replaced rows become ``active=0,
  compacted=1`` (still searchable and restorable) and the new rows appear together, or
  nothing changes (never a doubled transcript).
* Every read that can cross sessions (``search``, ``list_sessions``) is filtered by the
  caller's user id; ``None`` is the anonymous principal of a single-user home and never
  matches a named user, nor a named user ``None``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "CompactionCommit",
    "SearchHit",
    "SessionRecord",
    "SessionStore",
    "SnippetLine",
    "StoredMessage",
    "UndoableSessionStore",
]


@dataclass(frozen=True)
class SessionRecord:
    """One row of ``sessions``.

    ``counters`` holds running totals (``messages``, ``compactions``, ``prune_only``,
    ``prompt_tokens``, ``summarizer_calls``, ``summarizer_input_chars``,
    ``summarizer_input_tokens``, ``summarizer_prompt_tokens``,
    ``summarizer_completion_tokens``, ...): any name, integer values, added to with
    :meth:`SessionStore.add_counters`. ``state`` is the host's JSON state for the session
    (the compressor's anti-thrash guard, previous summary, learned token ratio), replaced
    whole by :meth:`SessionStore.save_state`.
    """

    id: str
    user_id: str | None
    parent_session_id: str | None = None
    title: str | None = None
    model: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    end_reason: str | None = None
    counters: Mapping[str, int] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredMessage:
    """One row of ``messages``: the message exactly as given, and its bookkeeping.

    ``seq`` numbers a session's rows in insertion order (1, 2, ...; never reused);
    ``message`` round-trips losslessly (every key, list contents, ``None`` content);
    ``api_content`` is the exact text sent when it differed from the content (recall or
    attachments added to the API copy of a user message), else ``None``.
    """

    session_id: str
    seq: int
    message: Mapping[str, Any]
    active: bool = True
    compacted: bool = False
    api_content: str | None = None
    timestamp: float = 0.0
    token_count: int | None = None


@dataclass(frozen=True)
class CompactionCommit:
    """What a compaction commit did: the session that continues, and the seqs of its active
    rows in the order of the committed ``messages`` (``seqs[i]`` stores ``messages[i]``)."""

    session_id: str
    seqs: tuple[int, ...]
    archived: int = 0


@dataclass(frozen=True)
class SnippetLine:
    """A message around a hit: ``seq``, ``role`` and a short excerpt."""

    seq: int
    role: str
    text: str


@dataclass(frozen=True)
class SearchHit:
    """One session that matched, best first: its best-matching message and its neighbours.

    ``score`` is higher for better matches (BM25 negated where the backend uses it).
    ``snippet`` is the match with the matching terms marked ``>>like this<<``; ``context`` the
    matching message and one neighbour on each side (archived rows included).
    """

    session_id: str
    user_id: str | None
    title: str | None
    started_at: float
    score: float
    seq: int
    role: str
    snippet: str
    context: tuple[SnippetLine, ...] = ()
    matches: int = 1


@runtime_checkable
class SessionStore(Protocol):
    """A session store backend; all methods are safe to call from several threads and, for
    backends that say so, several processes."""

    #: short name shown by ``config check`` and ``plugins`` (``"sqlite"``, ``"postgres"``)
    backend: str

    def open_session(
        self,
        session_id: str,
        *,
        user_id: str | None,
        model: str | None = None,
        parent_session_id: str | None = None,
        title: str | None = None,
    ) -> SessionRecord:
        """Create the session, or return it when it exists. A session that exists under
        another user id raises :class:`~hermes_core.errors.SessionError` (never resumed)."""
        ...

    def get_session(self, session_id: str, *, user_id: str | None) -> SessionRecord | None:
        """The session when it exists *and belongs to* ``user_id``; else ``None``."""
        ...

    def list_sessions(self, *, user_id: str | None, limit: int = 50) -> list[SessionRecord]:
        """``user_id``'s sessions, newest first."""
        ...

    def append_messages(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        api_contents: Sequence[str | None] | None = None,
        token_counts: Sequence[int | None] | None = None,
        state: Mapping[str, Any] | None = None,
        after_seq: int | None = None,
    ) -> list[int]:
        """Add active rows at the end of the session's active view in one transaction;
        returns their seqs. ``state`` (optional) replaces the session's JSON state in the
        same transaction, so a crash cannot leave the rows without the state that knows
        about them (a resumed host would hand them in again). ``after_seq``: the newest seq
        the caller knows; if the session's newest seq differs (another process wrote), raise
        :class:`~hermes_core.errors.StaleSessionError` and change nothing. A session an undo
        ended ``"undone"`` takes no more rows (nor compactions): stale, with or without
        ``after_seq`` (the conversation went back to an earlier session)."""
        ...

    def set_api_content(self, session_id: str, seq: int, api_content: str | None) -> None:
        """Record the exact text sent for a stored message (``None``: same as content)."""
        ...

    def last_seq(self, session_id: str) -> int:
        """The session's newest seq, archived rows included (0 when it has no rows)."""
        ...

    def messages(self, session_id: str, *, include_archived: bool = False) -> list[StoredMessage]:
        """The active view in order; with ``include_archived`` every row in seq order."""
        ...

    def commit_compaction(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        origins: Sequence[int | None],
        *,
        in_place: bool,
        child_session_id: str | None = None,
        after_seq: int | None = None,
    ) -> CompactionCommit:
        """Replace the active view with ``messages`` in one transaction (``after_seq`` as for
        :meth:`append_messages`).

        ``origins[i]`` is the seq of the active row that ``messages[i]`` is unchanged from,
        or ``None`` for a new message (the summary, a pruned result). ``in_place``: active
        rows not named in ``origins`` become ``active=0, compacted=1``, named rows stay and
        are reordered, new ones are inserted. Not ``in_place``: the session is ended with
        ``end_reason="compression"`` and ``child_session_id`` is created (same user,
        ``parent_session_id`` set) holding ``messages`` as its rows; the parent's rows are
        left as they were.
        """
        ...

    def end_session(self, session_id: str, reason: str) -> None:
        """Set ``ended_at`` and ``end_reason`` (a second call keeps the first reason)."""
        ...

    def save_state(self, session_id: str, state: Mapping[str, Any]) -> None:
        """Replace the session's JSON state."""
        ...

    def add_counters(self, session_id: str, deltas: Mapping[str, int]) -> None:
        """Add ``deltas`` to the session's counters (created at 0)."""
        ...

    def lineage(self, session_id: str) -> list[str]:
        """The session, its ancestors (``parent_session_id`` chain) and its descendants."""
        ...

    def search(
        self,
        query: str,
        *,
        user_id: str | None,
        limit: int = 3,
        exclude_sessions: Collection[str] = (),
    ) -> list[SearchHit]:
        """Full-text search over ``user_id``'s sessions only, best first, at most ``limit``
        sessions. Any query text is accepted (sanitised; never raises on syntax)."""
        ...

    def close(self) -> None:
        """Release connections; safe to call twice."""
        ...


@runtime_checkable
class UndoableSessionStore(SessionStore, Protocol):
    """A store that can undo a compaction (``Session.undo_compaction``, ``sessions restore``).

    Apart from :class:`SessionStore` so a backend written before undo existed still loads:
    undo asks for this capability and, where it is missing, refuses with a clear error.
    The built-in SQLite and PostgreSQL stores have it."""

    def restore_view(
        self,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        origins: Sequence[int | None],
        *,
        api_contents: Sequence[str | None] | None = None,
        state: Mapping[str, Any] | None = None,
        abandon: Sequence[str] = (),
        after_seq: int | None = None,
        abandon_after_seq: Mapping[str, int] | None = None,
    ) -> CompactionCommit:
        """Undo a compaction, in one transaction: make ``messages`` the active view of
        ``session_id`` as an in-place :meth:`commit_compaction` does (``origins`` alike; a
        new row carries its ``api_contents[i]``, so a restored message keeps the copy that was
        sent), replace its JSON ``state`` (when given), and end each session of ``abandon``
        (sessions that continued ``session_id``: its children, theirs) with
        ``end_reason="undone"`` whatever other reason it had, which opens ``session_id`` again
        (``ended_at`` cleared): a child ended ``"undone"`` no longer makes writes to its
        parent stale, and resuming does not follow it.

        :class:`~hermes_core.errors.StaleSessionError`, and nothing changes, when the store
        is not as the undoing caller knew it: ``session_id``'s newest seq is not ``after_seq``
        (when given), or a session of ``abandon``'s is not its ``abandon_after_seq`` (for
        those it names); ``session_id`` or a session of ``abandon`` ended ``"undone"`` already
        (another undo went back past it); a live child of any of them is left out of
        ``abandon``. Writes to a session ended ``"undone"`` (:meth:`append_messages`,
        :meth:`commit_compaction`, this) are stale too. Nothing changes on any error."""
        ...
