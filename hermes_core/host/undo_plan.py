"""Which rows an undo brings back, decided from the compaction history alone (pure).

The transcript before compaction ``n`` is its record's ``before`` view. What the host added
after it follows, in order: they are the user's real conversation, not the compaction's.
Those rows are found by walking the views the history saw since ``n`` in the order they were
seen (each later record's ``before`` view, the view just before each undo since, then the
active view now) and keeping the rows that no compaction or undo
since ``n`` inserted (summaries, stand-ins, a child's copies, an undo's copies) and that the
transcript before ``n`` does not already hold. A row is named by ``(session, seq)``, so the
walk crosses child sessions (``compression.in_place: false``) the same way. Every compaction
after ``n`` that is not undone yet is undone with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hermes_core.errors import InvalidArgument, SessionError
from hermes_core.host.undo_history import CompactionRecord, History, expand

__all__ = ["RowKey", "UndoPlan", "plan_undo"]

#: a stored row: the session holding it and its seq there
RowKey = tuple[str, int]


@dataclass(frozen=True)
class UndoPlan:
    """``target``: the rows of the restored view in order (``before`` rows first, then
    ``appended`` more); ``undone``: the numbers of the compactions it undoes; ``session``:
    where the conversation continues (the session compaction ``n`` was committed in);
    ``abandon``: the child sessions made since, which the restore ends ``"undone"``."""

    record: CompactionRecord
    target: list[RowKey]
    appended: int
    undone: list[int]
    session: str
    abandon: list[str]

    @property
    def sessions(self) -> list[str]:
        """Every session whose rows the plan names."""
        return list(dict.fromkeys(sid for sid, _ in self.target))


def pick(history: History, n: int | None) -> CompactionRecord:
    """The record to undo (``None``: the newest not undone), or a refusal saying why not."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int)):
        raise InvalidArgument(f"the compaction number must be an integer, got {type(n).__name__}")
    if n is None:
        record = history.newest_undoable()
        if record is None:
            raise SessionError(
                "nothing to undo: this conversation has no compaction that is not undone "
                "already (the history lists compactions committed through a session store)"
            )
    else:
        found = history.find(n)
        if found is None:
            known = ", ".join(str(r.n) for r in history.records[-10:]) or "none"
            raise SessionError(
                f"no compaction {n} in this conversation's history (recent ones: {known}); "
                "nothing was changed"
            )
        record = found
    if record.undone is not None:
        raise SessionError(
            f"compaction {record.n} is undone already (by the undo of compaction "
            f"{record.undone.by}); nothing was changed"
        )
    if record.compressor is None:
        raise SessionError(
            f"compaction {record.n} is too old to undo: only the newest ones keep the state "
            "an undo puts back; nothing was changed"
        )
    return record


def _views(since: list[CompactionRecord]) -> list[tuple[tuple[int, int], list[RowKey]]]:
    """The views the history saw after the first of ``since``, each with its place in time:
    the views before the later compactions, and the views just before each undo since."""
    out = [((r.n, 0), [(r.session, seq) for seq in expand(r.before)]) for r in since[1:]]
    for record in since:
        undone = record.undone
        if undone is not None and undone.by == record.n and undone.view_session is not None:
            view = [(undone.view_session, seq) for seq in expand(undone.view)]
            out.append(((undone.after, undone.k), view))
    return out


def plan_undo(history: History, n: int | None, *, session: str, active: Sequence[int]) -> UndoPlan:
    """The plan to undo compaction ``n`` of a conversation whose active view is ``active``
    (seqs) in ``session``; refusals as :class:`SessionError` (nothing to undo, unknown,
    undone already, too old)."""
    record = pick(history, n)
    since = history.since(record.n)
    before = [(record.session, seq) for seq in expand(record.before)]
    made: set[RowKey] = set(before)
    for later in since:
        made.update((later.into, seq) for seq in expand(later.inserted))
        if later.undone is not None and later.undone.session is not None:
            made.update((later.undone.session, seq) for seq in expand(later.undone.inserted))
    views = [view for _, view in sorted(_views(since), key=lambda item: item[0])]
    views.append([(session, seq) for seq in active])
    appended: list[RowKey] = []
    for view in views:
        for key in view:
            if key not in made:
                made.add(key)
                appended.append(key)
    # a child of a compaction undone already was abandoned by that undo: the store refuses
    # to abandon a session twice (the second would be an undo that did not see the first)
    abandon = [r.into for r in since if r.into != r.session and r.undone is None]
    return UndoPlan(
        record=record,
        target=before + appended,
        appended=len(appended),
        undone=[r.n for r in since if r.undone is None],
        session=record.session,
        abandon=list(dict.fromkeys(abandon)),
    )
