"""References from a compaction's stand-ins to the archived originals (``[ref 42]``).

Why: a compaction replaces messages by shorter stand-ins (a pruned result's one line, a
duplicate note, cut arguments, an image note, a summary), while the session store keeps every
original row unchanged (``active=0, compacted=1``). A short reference in the stand-in lets the
model fetch the original with the ``session_recall`` tool. Pure: no store, no I/O; a message
without a stored row (bare ``compress``) gets no reference, so none can dangle.

Format: ``[ref R]`` with ``R := [DEPTH ":"] RANGES``, ``RANGES := RANGE ("," RANGE)*``,
``RANGE := SEQ | SEQ "-" SEQ``. SEQ is the store's ``seq`` of the archived row; DEPTH the
number of ancestors of the session that holds it, written only when above 0.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from hermes_core.errors import InvalidArgument

__all__ = [
    "MAX_REF_CHARS",
    "MAX_SPAN_RUNS",
    "ArchiveRefs",
    "Ref",
    "check_refs",
    "format_ref",
    "format_runs",
    "parse_ref",
    "ranges",
    "ref_tag",
    "span_runs",
    "tagger",
]

#: the longest reference text the tool accepts (a summary's ref stays far below: MAX_SPAN_RUNS)
MAX_REF_CHARS: Final = 2_000
#: the most runs a summary's span reference prints, so it stays a few tokens whatever the span
MAX_SPAN_RUNS: Final = 6
_MAX_SEQ: Final = 2**53  # JSON-safe, far above any session's rows
# ASCII digits only: ``str.isdigit`` and ``\d`` accept "²" or "①", which ``int`` refuses
_RANGE: Final = re.compile(r"([0-9]{1,16})(?:-([0-9]{1,16}))?")
_DEPTH: Final = re.compile(r"[0-9]{1,4}")
_WRAPPED: Final = re.compile(r"^\s*\[ref\s+([^\]]*)\]\s*$")


@dataclass(frozen=True)
class Ref:
    """A parsed reference: the session depth and the inclusive seq ranges it names."""

    depth: int
    spans: tuple[tuple[int, int], ...]

    def seqs(self) -> list[int]:
        """Every seq named, ascending, without repeats (a small ref's: a range may be huge)."""
        return sorted({s for low, high in self.spans for s in range(low, high + 1)})

    def runs(self) -> list[tuple[int, int]]:
        """The spans sorted and merged (overlapping or adjacent ones joined): never expanded."""
        out: list[tuple[int, int]] = []
        for low, high in sorted(self.spans):
            if out and low <= out[-1][1] + 1:
                out[-1] = (out[-1][0], max(out[-1][1], high))
            else:
                out.append((low, high))
        return out

    def text(self) -> str:
        return format_runs(self.runs(), self.depth)


def format_runs(runs: Sequence[tuple[int, int]], depth: int = 0) -> str:
    """``R`` for sorted, disjoint inclusive ``runs`` (non-empty)."""
    body = ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    if not body:
        raise ValueError("a reference needs at least one seq")
    return f"{depth}:{body}" if depth > 0 else body


def ranges(seqs: Iterable[int]) -> list[tuple[int, int]]:
    """``seqs`` (sorted, without repeats) as inclusive runs: [3, 1, 2, 7] -> [(1, 3), (7, 7)]."""
    runs: list[tuple[int, int]] = []
    for seq in sorted(set(seqs)):
        if runs and seq == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


def format_ref(seqs: Iterable[int], depth: int = 0) -> str:
    """``R`` for ``seqs`` (non-empty): ``"120-181,300"``, or ``"1:7"`` at depth 1."""
    return format_runs(ranges(seqs), depth)


def ref_tag(seqs: Iterable[int | None], depth: int = 0) -> str:
    """`` [ref R]`` to append to a stand-in, or ``""`` when no seq is known."""
    known = [s for s in seqs if s is not None]
    return f" [ref {format_ref(known, depth)}]" if known else ""


def _bad(given: str, why: str) -> InvalidArgument:
    shown = given if len(given) <= 60 else given[:57] + "..."
    return InvalidArgument(
        f"ref {shown!r} is not a reference: {why}; pass it as printed in a stand-in, "
        "e.g. '42', '120-181,300' or '1:7' (the '[ref ...]' around it is optional)"
    )


def parse_ref(text: object) -> Ref:
    """The reference in ``text`` (``"42"``, ``"[ref 1:7]"``, ``"120-181,300"``); strict:
    anything else raises :class:`InvalidArgument` saying what is wrong. Bounded: at most
    :data:`MAX_REF_CHARS` characters (a range may name many rows: it is never expanded)."""
    if not isinstance(text, str):
        raise InvalidArgument(f"ref must be text such as '42' or '1:7', got {type(text).__name__}")
    if len(text) > MAX_REF_CHARS:
        raise _bad(text, f"longer than {MAX_REF_CHARS:,} characters")
    wrapped = _WRAPPED.match(text)
    body = (wrapped.group(1) if wrapped else text).strip()
    if not body:
        raise _bad(text, "it is empty")
    depth = 0
    if ":" in body:
        head, _, body = body.partition(":")
        if _DEPTH.fullmatch(head) is None:
            raise _bad(text, "the depth before ':' must be a small whole number")
        depth = int(head)
    spans: list[tuple[int, int]] = []
    for part in body.split(","):
        found = _RANGE.fullmatch(part.strip())
        if found is None:
            raise _bad(text, f"{part.strip()!r} is neither a seq nor a range 'a-b'")
        low = int(found.group(1))
        high = int(found.group(2)) if found.group(2) else low
        if low < 1 or high > _MAX_SEQ:
            raise _bad(text, "seqs start at 1")
        if high < low:
            raise _bad(text, f"the range {low}-{high} runs backwards")
        spans.append((low, high))
    return Ref(depth, tuple(spans))


@dataclass(frozen=True)
class ArchiveRefs:
    """Per input message of one compaction, the store seq of its row (or None), and the
    lineage depth of the session holding those rows. Built by the session, read by the
    compressor when it writes stand-ins."""

    seqs: tuple[int | None, ...]
    depth: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 0:
            raise InvalidArgument.of("references.depth", "a whole number >= 0", self.depth)
        for seq in self.seqs:
            if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
                raise InvalidArgument.of("references.seqs", "ints >= 1 or None", seq)

    @classmethod
    def of(cls, seqs: Sequence[int | None], depth: int = 0) -> ArchiveRefs:
        return cls(tuple(seqs), depth)

    def tag(self, index: int) -> str:
        """`` [ref R]`` for message ``index`` (``""`` without a stored row)."""
        seq = self.seqs[index] if 0 <= index < len(self.seqs) else None
        return ref_tag([seq], self.depth)

    def span_tag(self, indices: Iterable[int]) -> str:
        """`` [ref R]`` naming the rows of every message in ``indices`` that has one, in at
        most :data:`MAX_SPAN_RUNS` runs. Why not one run per stretch: each earlier pruning
        gave its stand-ins new rows, so a span's seqs have a gap every few rows and the ref
        would grow with the span. A gap none of whose seqs is in this view holds archived
        rows only (the originals of the span's stand-ins, older archives of this
        conversation), so it is filled; past the cap the smallest remaining gaps are covered
        too (rows in the view: harmless to recall). Every row of the span stays named."""
        n = len(self.seqs)
        chosen = {i for i in indices if 0 <= i < n}
        named = {s for i in chosen if (s := self.seqs[i]) is not None}
        if not named:
            return ""
        others = sorted({s for s in self.seqs if s is not None} - named)  # the rest of the view
        return f" [ref {format_runs(span_runs(ranges(named), others), self.depth)}]"


def span_runs(runs: list[tuple[int, int]], others: Sequence[int]) -> list[tuple[int, int]]:
    """``runs`` (sorted, disjoint) joined across every gap holding no seq of ``others``
    (sorted), then across the smallest gaps until at most :data:`MAX_SPAN_RUNS` remain."""
    joined: list[tuple[int, int]] = runs[:1]
    for low, high in runs[1:]:
        at = bisect_right(others, joined[-1][1])
        if at == len(others) or others[at] >= low:  # nothing of the view in the gap
            joined[-1] = (joined[-1][0], high)
        else:
            joined.append((low, high))
    if len(joined) <= MAX_SPAN_RUNS:
        return joined
    gaps = sorted(range(1, len(joined)), key=lambda k: joined[k][0] - joined[k - 1][1])
    cut = set(gaps[len(joined) - MAX_SPAN_RUNS :])  # the widest gaps stay gaps
    out = joined[:1]
    for k in range(1, len(joined)):
        if k in cut:
            out.append(joined[k])
        else:
            out[-1] = (out[-1][0], joined[k][1])
    return out


def tagger(refs: ArchiveRefs | None) -> Callable[[int], str]:
    """``index -> " [ref R]"`` (always ``""`` without references)."""
    return refs.tag if refs is not None else _no_tag


def _no_tag(_index: int) -> str:
    return ""


def check_refs(refs: object, count: int) -> ArchiveRefs | None:
    """``refs`` as ``Compressor.compress`` takes it: None, or one seq per message."""
    if refs is None:
        return None
    if not isinstance(refs, ArchiveRefs):
        raise InvalidArgument.of("references", "an ArchiveRefs or None", refs)
    if len(refs.seqs) != count:
        raise InvalidArgument(
            f"references must name one seq (or None) per message: {len(refs.seqs):,} seqs "
            f"for {count:,} messages"
        )
    return refs
