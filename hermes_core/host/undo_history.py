"""A conversation's compaction history: what an undo needs to bring a transcript back.

Why in the session's JSON state: it must survive a restart and travel with the conversation
into a child session (``compression.in_place: false``), and it must be written in the same
transaction as whatever it describes. Why compact: the state is written every turn, so a
record keeps the active view's seqs as runs (``[[1, 180], [204, 204]]``), never as lists of
thousands of integers, and only the newest :data:`UNDO_DEPTH` records keep the compressor's
state (the previous summary is the bulk of it) and their seqs: older compactions are listed,
but cannot be undone.

Read defensively like the rest of the state: a record that does not parse is dropped (an old
state without history loads as an empty one), never an exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

__all__ = [
    "MAX_RECORDS",
    "UNDO_DEPTH",
    "UNDO_SECTIONS",
    "CompactionRecord",
    "History",
    "Undone",
    "from_runs",
    "to_runs",
]

#: the newest compactions that keep their compressor state, so can be undone
UNDO_DEPTH: Final = 5
#: the parts of the compressor's exported state a record keeps: what an undo puts back (the
#: token ratio and a learned window are knowledge about the model: an undo keeps the current)
UNDO_SECTIONS: Final = frozenset({"v", "saved_at", "guard", "summary", "backoff"})
#: records kept at all (the oldest go first): the numbering goes on past them
MAX_RECORDS: Final = 50
#: seqs one record may name once its runs are expanded (a damaged row must not eat memory)
MAX_SEQS: Final = 1_000_000

Runs = tuple[tuple[int, int], ...]


def to_runs(seqs: Iterable[int]) -> Runs:
    """``seqs`` in their order as runs of consecutive ascending seqs: ``[3, 4, 5, 9]`` ->
    ``((3, 5), (9, 9))``."""
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and seq == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return tuple(runs)


def from_runs(runs: object) -> Runs:
    """Runs read back from JSON; :class:`ValueError` when they are not ``[[first, last], ...]``
    of positive integers with ``first <= last``."""
    if not isinstance(runs, list):
        raise ValueError("runs must be a list")
    out: list[tuple[int, int]] = []
    total = 0
    for run in runs:
        if not (isinstance(run, list) and len(run) == 2 and all(_is_seq(s) for s in run)):
            raise ValueError(f"bad run {run!r}")
        first, last = int(run[0]), int(run[1])
        if first > last:
            raise ValueError(f"bad run {run!r}")
        total += last - first + 1
        if total > MAX_SEQS:
            raise ValueError("runs name too many seqs")
        out.append((first, last))
    return tuple(out)


def expand(runs: Runs) -> Iterator[int]:
    for first, last in runs:
        yield from range(first, last + 1)


def _is_seq(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _runs_json(runs: Runs) -> list[list[int]]:
    return [[first, last] for first, last in runs]


@dataclass(frozen=True)
class Undone:
    """How a compaction was undone: when, by the undo of which one (``by``: itself, or an
    older one whose undo took it along). For ``by`` itself also: the session the restore was
    committed in and the seqs it inserted there (copies of archived rows), the active view
    just before the undo (``view`` in ``view_session``: the only record of messages that a
    child session held when the undo went back to its parent), the newest compaction number
    at the time (``after``) and the undo's own number over the conversation (``k``), which
    order that view among the records' views."""

    at: float
    by: int
    session: str | None = None
    inserted: Runs = ()
    view_session: str | None = None
    view: Runs = ()
    after: int = 0
    k: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"at": self.at, "by": self.by}
        if self.session is not None:
            out.update(
                sid=self.session,
                new=_runs_json(self.inserted),
                view_sid=self.view_session,
                view=_runs_json(self.view),
                after=self.after,
                k=self.k,
            )
        return out

    @classmethod
    def from_json(cls, data: object) -> Undone:
        if not isinstance(data, Mapping):
            raise ValueError("undone must be an object")
        at, by, sid = data.get("at"), data.get("by"), data.get("sid")
        if not isinstance(by, int) or not _is_seq(by):
            raise ValueError("bad undone record")
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            raise ValueError("bad undone record")
        view_sid, after, k = data.get("view_sid"), data.get("after", 0), data.get("k", 0)
        if sid is not None and not isinstance(sid, str):
            raise ValueError("bad undone session")
        if view_sid is not None and not isinstance(view_sid, str):
            raise ValueError("bad undone view")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (after, k)):
            raise ValueError("bad undone order")
        return cls(
            float(at),
            by,
            sid,
            from_runs(data.get("new", [])),
            view_sid,
            from_runs(data.get("view", [])),
            after,
            k,
        )


@dataclass(frozen=True)
class CompactionRecord:
    """One committed compaction: its number over the conversation, the session it was
    committed in (``session``) and the one that continued (``into``: the same, or a child),
    the active view's seqs before it (in order, in ``session``), the seqs it inserted (in
    ``into``), tokens before and after, the summariser, the compressor's exported state
    before it (``None`` once too old to undo), ``session``'s newest seq when it was
    committed (``last``: a child leaves its parent at that seq, which an undo going back
    checks; ``None`` in records written before it was kept) and, when undone, how."""

    n: int
    session: str
    into: str
    at: float
    before: Runs
    inserted: Runs
    tokens_before: int = 0
    tokens_after: int = 0
    summarizer: str | None = None
    compressor: Mapping[str, Any] | None = None
    undone: Undone | None = None
    last: int | None = None

    def before_seqs(self) -> list[int]:
        return list(expand(self.before))

    def inserted_seqs(self) -> set[int]:
        return set(expand(self.inserted))

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "sid": self.session,
            "into": self.into,
            "at": self.at,
            "before": _runs_json(self.before),
            "new": _runs_json(self.inserted),
            "tokens": [self.tokens_before, self.tokens_after],
            "summarizer": self.summarizer,
            "compressor": None if self.compressor is None else dict(self.compressor),
            "undone": None if self.undone is None else self.undone.to_json(),
            "last": self.last,
        }

    @classmethod
    def from_json(cls, data: object) -> CompactionRecord:
        if not isinstance(data, Mapping):
            raise ValueError("a record must be an object")
        n, sid, into, at = data.get("n"), data.get("sid"), data.get("into"), data.get("at")
        tokens, summarizer = data.get("tokens"), data.get("summarizer")
        compressor, undone = data.get("compressor"), data.get("undone")
        last = data.get("last")
        if not isinstance(n, int) or not _is_seq(n):
            raise ValueError("bad record number")
        if not isinstance(sid, str) or not isinstance(into, str):
            raise ValueError("bad record identity")
        if isinstance(at, bool) or not isinstance(at, (int, float)):
            raise ValueError("bad record time")
        if not (isinstance(tokens, list) and len(tokens) == 2):
            raise ValueError("bad token counts")
        if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in tokens):
            raise ValueError("bad token counts")
        if summarizer is not None and not isinstance(summarizer, str):
            raise ValueError("bad summariser")
        if compressor is not None and not isinstance(compressor, Mapping):
            raise ValueError("bad compressor state")
        if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 0):
            raise ValueError("bad last seq")
        return cls(
            n=int(n),
            session=sid,
            into=into,
            at=float(at),
            before=from_runs(data.get("before")),
            inserted=from_runs(data.get("new")),
            tokens_before=tokens[0],
            tokens_after=tokens[1],
            summarizer=summarizer,
            compressor=compressor,
            undone=None if undone is None else Undone.from_json(undone),
            last=last,
        )


@dataclass
class History:
    """The conversation's compaction records, oldest first."""

    records: list[CompactionRecord] = field(default_factory=list)

    def next_number(self) -> int:
        return self.records[-1].n + 1 if self.records else 1

    def add(self, record: CompactionRecord) -> None:
        """Append ``record``; beyond :data:`MAX_RECORDS` the oldest go, and beyond
        :data:`UNDO_DEPTH` the older ones keep only what ``--list`` shows (an undo reads the
        record it undoes and the later ones only)."""
        self.records.append(record)
        del self.records[:-MAX_RECORDS]
        cut = len(self.records) - UNDO_DEPTH
        for index in range(max(0, cut)):
            old = self.records[index]
            if old.compressor is not None or old.before:
                undone = None if old.undone is None else Undone(old.undone.at, old.undone.by)
                self.records[index] = replace(
                    old, compressor=None, before=(), inserted=(), undone=undone
                )

    def find(self, n: int) -> CompactionRecord | None:
        return next((r for r in self.records if r.n == n), None)

    def newest_undoable(self) -> CompactionRecord | None:
        return next((r for r in reversed(self.records) if r.undone is None), None)

    def undos(self) -> int:
        """How many undos the history knows of (each numbers its own, ``Undone.k``)."""
        return max((r.undone.k for r in self.records if r.undone is not None), default=0)

    def since(self, n: int) -> list[CompactionRecord]:
        """Record ``n`` and every later one, oldest first."""
        return [r for r in self.records if r.n >= n]

    def mark_undone(self, n: int, undone: Sequence[int], by: Undone) -> None:
        """Record that the undo of ``n`` (``by``) undid the compactions numbered ``undone``."""
        for index, record in enumerate(self.records):
            if record.n == n:
                self.records[index] = replace(record, undone=by)
            elif record.n in undone and record.undone is None:
                self.records[index] = replace(record, undone=Undone(by.at, n))

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.records]

    @classmethod
    def from_json(cls, data: object) -> History:
        """The history a state row holds; records that do not parse are left out."""
        records: list[CompactionRecord] = []
        for item in data if isinstance(data, list) else ():
            try:
                record = CompactionRecord.from_json(item)
            except (ValueError, TypeError):
                continue
            if not records or record.n > records[-1].n:
                records.append(record)
        return cls(records[-MAX_RECORDS:])
