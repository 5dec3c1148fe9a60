"""What a compaction commit will do, decided before its first row changes.

Why apart from the backends: the rules of :meth:`SessionStore.commit_compaction
<hermes_core.sessions.SessionStore.commit_compaction>` (which origins are allowed, which rows
stay, which are archived, where each message lands) are the same in every backend; only the
reads and writes around them are SQL. A backend reads the session's active rows, asks
:func:`kept_origins`, and then writes what :func:`child_rows` or :func:`in_place` lay out.

A message named by an origin is expected unchanged from that row. When its encoding differs
after all, the stored row cannot stand for it: it is treated as new (inserted; the old row
is archived in place), so the text the caller gave is what the active view holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from hermes_core.errors import SessionError
from hermes_core.sessions.checks import check_origins, origins_count
from hermes_core.sessions.store import CompactionCommit

__all__ = [
    "Active",
    "InPlace",
    "abandoned",
    "child_commit",
    "child_rows",
    "in_place",
    "kept_origins",
]


class Encoded(Protocol):
    """A message as its backend encodes it: :meth:`columns` is what it is made of."""

    def columns(self) -> tuple[str | None, ...]: ...


E = TypeVar("E", bound=Encoded)
#: the session's active rows: seq -> (the message's columns, its token count)
Active = Mapping[int, tuple[tuple[str | None, ...], int | None]]
#: ``(seq, pos, message, api_content, token_count)`` of a row to insert
Row = tuple[int, int, E, str | None, int | None]


def kept_origins(
    session_id: str, encoded: Sequence[E], origins: Sequence[int | None], active: Active
) -> list[int | None]:
    """The origins that stand for their messages (``None`` where a message is new, or changed
    from the row its origin names); :class:`SessionError
    <hermes_core.errors.SessionError>` for origins that are not one per message, each a
    distinct active seq."""
    origins_count(len(encoded), len(origins))
    check_origins(session_id, origins, active)
    return [
        origin if origin is not None and active[origin][0] == enc.columns() else None
        for enc, origin in zip(encoded, origins, strict=True)
    ]


def child_rows(encoded: Sequence[E], kept: Sequence[int | None], active: Active) -> list[Row[E]]:
    """The child session's rows (seq and pos 1..n); a kept row's token count goes with it."""
    return [
        (n, n, enc, None, active[origin][1] if origin is not None else None)
        for n, (enc, origin) in enumerate(zip(encoded, kept, strict=True), start=1)
    ]


def child_commit(child_session_id: str, count: int) -> CompactionCommit:
    return CompactionCommit(
        session_id=child_session_id, seqs=tuple(range(1, count + 1)), archived=0
    )


@dataclass(frozen=True)
class InPlace(Generic[E]):
    """An in-place commit: the rows to archive, the kept rows' new ``(pos, seq)``, the rows to
    insert, and the seq of each committed message (``seqs[i]`` stores ``messages[i]``)."""

    archive: list[int]
    moved: list[tuple[int, int]]
    new_rows: list[Row[E]]
    seqs: tuple[int, ...]

    def commit(self, session_id: str) -> CompactionCommit:
        return CompactionCommit(session_id=session_id, seqs=self.seqs, archived=len(self.archive))


def in_place(
    encoded: Sequence[E],
    kept: Sequence[int | None],
    active: Active,
    next_seq: int,
    api_contents: Sequence[str | None] | None = None,
) -> InPlace[E]:
    """Lay out an in-place commit: the active rows not kept are archived, the kept ones get
    ``pos`` 1..n in the new order, new messages get seqs from ``next_seq`` on (with their
    ``api_contents`` when given: a restored row keeps the copy that was sent)."""
    archive = sorted(set(active) - {seq for seq in kept if seq is not None})
    seqs: list[int] = []
    moved: list[tuple[int, int]] = []
    new_rows: list[Row[E]] = []
    for pos, (enc, origin) in enumerate(zip(encoded, kept, strict=True), start=1):
        if origin is None:
            api = api_contents[pos - 1] if api_contents is not None else None
            new_rows.append((next_seq, pos, enc, api, None))
            seqs.append(next_seq)
            next_seq += 1
        else:
            moved.append((pos, origin))
            seqs.append(origin)
    return InPlace(archive=archive, moved=moved, new_rows=new_rows, seqs=tuple(seqs))


def abandoned(
    session_id: str,
    abandon: Sequence[str],
    found: Mapping[str, tuple[str | None, str | None]],
    user_id: str | None,
) -> list[str]:
    """The sessions a restore ends as ``"undone"``, checked: each exists (``found``: id ->
    ``(parent_session_id, user_id)``), belongs to the same user and continues ``session_id``
    (its parent is ``session_id`` or another abandoned session); else :class:`SessionError
    <hermes_core.errors.SessionError>` and nothing changes."""
    ids = list(dict.fromkeys(abandon))
    allowed = {session_id, *ids}
    for sid in ids:
        row = found.get(sid)
        if row is None or row[1] != user_id or row[0] not in allowed or sid == session_id:
            raise SessionError(
                f"restore_view: {sid!r} is not a session that continued {session_id!r}; "
                "nothing was changed"
            )
    return ids
