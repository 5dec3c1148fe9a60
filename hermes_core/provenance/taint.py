"""``TaintIndex``: which word runs and marks of a session came from untrusted text, and
``judge``: whether a write's content carries them.

Why this test: the model can only copy words it has read, and the session holds all of them
(tool results, attachments, recalled text, summaries). Runs of k words (k = 5; a CJK
character is one word) are hashed into sets as the session grows, so judging a write costs
O(its length) and nothing compares a write with each message. The user's own words go into a
trusted set: what the user said backs a write, even when a page said it too.

Limits, said plainly: a paraphrase without a copied run or a mark passes (it is the model's
own wording); content of k words or fewer is judged by its marks only, unless it continues
what the session wrote to the same place just before; past the cap every write is treated as
tainted (fail-safe), and so is every write of a session whose host cannot show it the tool
results the model reads (``blind``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from hermes_core.provenance.marks import marks_of, normalise, unescape_json
from hermes_core.provenance.record import UNTRUSTED_KINDS, Found

__all__ = [
    "CHUNK",
    "HISTORY_UNITS",
    "MAX_ENTRIES",
    "RATIO",
    "RUN_GRAMS",
    "K",
    "TaintIndex",
    "Verdict",
    "judge",
    "remember",
    "units",
]

K: Final = 5
#: consecutive untrusted k-grams that make a copied run: 4 of them span 8 words
RUN_GRAMS: Final = 4
RATIO: Final = 0.30
MAX_ENTRIES: Final = 2_000_000
#: a long text is indexed piece by piece (bounded memory); pieces overlap by ``_OVERLAP``
#: characters so no run is lost at a seam, until the cap is reached
CHUNK: Final = 1_000_000
_OVERLAP: Final = 400
#: words of what a session wrote before to the same target that a new write is judged with
#: (enough for a run of RUN_GRAMS grams to reach into the new write)
HISTORY_UNITS: Final = K - 1 + RUN_GRAMS - 1
_CJK: Final = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_UNIT: Final = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


def units(text: str) -> list[str]:
    """The word units of ``text``: normalised words, each CJK character on its own."""
    return _UNIT.findall(normalise(text))


def _grams(words: list[str]) -> list[int]:
    return [hash(tuple(words[i : i + K])) for i in range(len(words) - K + 1)]


def _pieces(text: str) -> Iterator[str]:
    """``text`` in overlapping pieces of at most CHUNK + _OVERLAP characters."""
    for start in range(0, max(len(text), 1), CHUNK):
        yield text[start : start + CHUNK + _OVERLAP]


def _readings(text: str) -> list[str]:
    """``text`` and, when it carries JSON string escapes (a tool result as JSON), the same
    text with them decoded, so ``\\n`` does not glue a letter to the next word and
    ``\\u00fc`` is the letter it stands for (twice: a JSON string inside a JSON string)."""
    readings = [text]
    for _ in range(2):
        if "\\" not in readings[-1]:
            break
        decoded = unescape_json(readings[-1])
        if decoded == readings[-1]:
            break
        readings.append(decoded)
    return readings


@dataclass(frozen=True)
class Verdict:
    """What :func:`judge` found: ``tainted`` and why (``mark``, ``run``, ``ratio``, ``full``),
    the untrusted sources by weight, and whether the user's words back most of it."""

    tainted: bool
    reason: str = ""
    sources: tuple[Found, ...] = ()
    backed: bool = False
    ratio: float = 0.0


class TaintIndex:
    """The untrusted word runs and marks one session has seen, and the user's own; and the
    last words the session wrote to each target, so a write split into pieces is judged as
    the whole it makes (see :func:`judge`'s ``before``)."""

    def __init__(self, cap: int = MAX_ENTRIES) -> None:
        self.cap = cap
        self.untrusted: dict[int, int] = {}  # k-gram hash -> index into origins (first seen)
        self.trusted: set[int] = set()
        self.marks: dict[str, int] = {}
        self.trusted_marks: set[str] = set()
        self.origins: list[tuple[str, str | None]] = []
        self._origin_ids: dict[tuple[str, str | None], int] = {}
        self.written: dict[str, str] = {}  # target -> the last words written to it
        self.full = False
        #: the host cannot show this session the tool results it reads (no observer): every
        #: write is treated as carrying tool words (fail-safe)
        self.blind = False

    def __len__(self) -> int:
        return len(self.untrusted) + len(self.trusted) + len(self.marks) + len(self.trusted_marks)

    def add_untrusted(self, text: str, kind: str, tool: str | None = None) -> None:
        """Index ``text`` as read from an untrusted source of ``kind`` (``tool``: its name)."""
        if kind not in UNTRUSTED_KINDS:
            raise ValueError(f"untrusted kind must be one of {', '.join(UNTRUSTED_KINDS)}")
        if not text or self._over():
            return
        key = (kind, tool)
        origin = self._origin_ids.setdefault(key, len(self.origins))
        if origin == len(self.origins):
            self.origins.append(key)
        for piece in _pieces(text):
            for reading in _readings(piece):
                for gram in _grams(units(reading)):
                    self.untrusted.setdefault(gram, origin)
                for mark in marks_of(reading, expand=True):
                    self.marks.setdefault(mark, origin)
                if self._over():
                    return

    def add_trusted(self, text: str) -> None:
        """Index ``text`` as the user's own words."""
        if not text or self._over():
            return
        for piece in _pieces(text):
            self.trusted.update(_grams(units(piece)))
            self.trusted_marks.update(marks_of(piece))
            if self._over():
                return

    def _over(self) -> bool:
        if len(self) >= self.cap:
            self.full = True
        return self.full


def judge(
    contents: Iterable[str], index: TaintIndex, *, before: str = "", trust_user: bool = True
) -> Verdict:
    """Whether ``contents`` (the new texts of one write) carry untrusted words: a mark that
    came from untrusted text and not from the user, a copied run of 8 or more words, or 30%
    or more of its word runs untrusted-only. ``before``: the words written just before it to
    the same place (earlier writes of the session, the file around a change); a run may start
    there, but only word runs that reach into the new text count. ``trust_user`` False (the
    background review): words and marks an untrusted source said count as untrusted even
    when the user typed them too, since a user relaying a page is not backing it."""
    text = "\n".join(c for c in contents if c)
    if index.full:
        return Verdict(True, "full")
    if index.blind:
        return Verdict(True, "unobserved", (Found("tool", None, 1.0),))
    weights: Counter[int] = Counter()
    reasons: list[str] = []
    for mark in marks_of(text):
        origin = index.marks.get(mark)
        if origin is not None and not (trust_user and mark in index.trusted_marks):
            weights[origin] += 1
            if "mark" not in reasons:
                reasons.append("mark")
    lead = units(before)[-HISTORY_UNITS:] if before else []
    grams = _grams(lead + units(text))
    first_new = max(len(lead) - K + 1, 0)  # grams before it lie wholly in ``before``
    run = longest = 0
    flagged: set[int] = set()
    for position, gram in enumerate(grams):
        origin = index.untrusted.get(gram)
        if origin is None or (trust_user and gram in index.trusted):
            run = 0
            continue
        run += 1
        if position >= first_new:
            flagged.add(gram)
            weights[origin] += 1
            longest = max(longest, run)
    new = set(grams[first_new:])
    distinct = len(new) or 1
    ratio = len(flagged) / distinct
    if longest >= RUN_GRAMS:
        reasons.append("run")
    if ratio >= RATIO and len(flagged) >= 2:
        reasons.append("ratio")
    backed = bool(new) and sum(g in index.trusted for g in new) / distinct >= 0.5
    total = sum(weights.values()) or 1
    sources = tuple(
        Found(index.origins[o][0], index.origins[o][1], round(n / total, 3))
        for o, n in weights.most_common(8)
    )
    return Verdict(bool(reasons), "+".join(reasons), sources, backed, round(ratio, 3))


def remember(index: TaintIndex, target: str, contents: Iterable[str]) -> str:
    """Note what the session just wrote to ``target``; returns what came before it there."""
    before = index.written.get(target, "")
    tail = units(" ".join([before, *contents]))[-HISTORY_UNITS:]
    index.written[target] = " ".join(tail)
    return before
