"""Consolidation: which memory entries another entry already says, which the user has since
contradicted (near-duplicate skills: :mod:`.skill_consolidation`).

Why offline and pure: a bounded block fills up with the same fact told three ways ("prefers
tabs", "User prefers tabs for indentation") and with facts the user took back ("likes dark
mode" beside "no longer wants dark mode"); the model prunes them blindly or not at all. The
planner only ever proposes removals (and, for skills, a merge), never new wording, so what it
proposes can be judged by a person in one look: the entry that goes and the entry that stands
for it. The caller stages the plan (:mod:`hermes_core.host.consolidate`); nothing here writes.

Two entries are compared by their meaningful words in order (every number, version, name and
two-letter word counts: "Python 3.11" is not "Python 3.12", "Go" is not "Rust"; only plural and
tense endings are taken off) and by their polarity (the negations of :mod:`.polarity`, plus
"dislike", "hate", "used to", "anymore" and the CJK negations):

* **duplicate**: the same words in the same order, the same polarity: the older goes;
* **covered**: the words of one appear in order within the other (which has at least
  ``MIN_TOPICS``), the same polarity, and the smaller is not the newer: the smaller goes;
* **contradicted**: at least ``MIN_TOPICS`` shared words, Jaccard >= ``CONTRADICTION_OVERLAP``,
  opposite polarity, and both ages known: the older goes (the user said the newer);
* **conflict**: the same without known ages: listed for a person, never removed;
* **similar**: related (Jaccard >= ``SIMILAR_OVERLAP``) but none of the above: listed only.

Age is the entry's ``updated`` time where the caller knows it. Without it a duplicate keeps the
later entry in the file and a smaller entry is taken as older only when it comes first (a
replaced entry keeps its place, so place never decides a contradiction).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from hermes_core.review.polarity import negations
from hermes_core.review.quotes import normalise

__all__ = [
    "CONTRADICTION_OVERLAP",
    "MIN_TOPICS",
    "SIMILAR_OVERLAP",
    "MemoryPlan",
    "Step",
    "dates_of",
    "jaccard",
    "meaning_words",
    "plan_memory",
]

MIN_TOPICS: Final = 2
CONTRADICTION_OVERLAP: Final = 0.6
SIMILAR_OVERLAP: Final = 0.5

Reason = Literal["duplicate", "covered", "contradicted"]

_CJK: Final = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
#: a word, a number or version (3.11, us-east-1, utc+2), a name with marks (c#, c++), or one
#: CJK character
_TOKEN: Final = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+(?:[.+#/-][^\W_{_CJK}]+)*[+#]*")
#: words that say nothing about what a fact is about
_STOP_WORDS: Final = (
    "a an the and or of to in on at for with from by as is are was were be been being it its "
    "this that these those there here he she they them his her their i me my we our you your "
    "user users user's has have had do does did will would should could can may might must "
    "please just also very really always like likes liked prefer prefers preferred want wants "
    "wanted wish wishes need needs use uses used using about into than then so such which who "
    "what when where how all any some each more most other"
)
_STOP: Final = frozenset(_STOP_WORDS.split())
#: words and marks that turn a statement around beyond :func:`.polarity.negations`
_TURNING: Final = ("dislike", "dislikes", "disliked", "hate", "hates", "hated", "anymore")
_TURNING_TEXT: Final = ("used to", "不", "没", "沒", "别", "別", "ない", "ません", "않", "안 ")
_CJK_CHAR: Final = re.compile(rf"[{_CJK}]")


def _base(word: str) -> str:
    """``word`` without a plural or tense ending, while three characters are left."""
    if any(ch.isdigit() for ch in word) or len(word) <= 3:
        return word
    for ending in ("ing", "ied", "ies", "ed", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            if ending in ("ied", "ies"):
                return word[: -len(ending)] + "y"
            if ending == "es" and not word[: -len(ending)].endswith(("s", "x", "z", "ch", "sh")):
                return word[:-1]  # "deploys" ... "happens": the e belongs to the word
            return word[: -len(ending)]
    return word


def meaning_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that carry meaning, in order, each once (its first place)."""
    said = normalise(text).replace("no longer", "no")
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(said):
        if _CJK_CHAR.fullmatch(token):
            if token not in _TURNING_TEXT:
                seen.setdefault(token, None)
            continue
        if token in _STOP or token in _TURNING or negations(token):
            continue  # no topic, or a polarity mark (counted by _polarity)
        seen.setdefault(_base(token), None)
    return tuple(seen)


def _polarity(text: str) -> int:
    """0 or 1: whether ``text`` is turned around an odd number of times."""
    said = normalise(text)
    words = said.split()
    turns = negations(said) + sum(w.strip(".,;:!?") in _TURNING for w in words)
    turns += sum(said.count(mark) for mark in _TURNING_TEXT)
    return turns % 2


@dataclass(frozen=True)
class Step:
    """Remove ``entry``: ``kept`` already says it (or, ``contradicted``, says the opposite
    and is newer)."""

    entry: str
    kept: str
    reason: Reason

    def to_json(self) -> dict[str, str]:
        return {"action": "remove", "entry": self.entry, "kept": self.kept, "reason": self.reason}


@dataclass(frozen=True)
class MemoryPlan:
    """What consolidating one block would do; ``similar`` and ``conflicts`` pairs are only
    shown, never changed."""

    target: str
    steps: tuple[Step, ...] = ()
    similar: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()

    def operations(self) -> list[dict[str, str]]:
        """The plan as one all-or-nothing batch of the memory tool: each removal (the exact
        entry), then each entry that stands for one rewritten as itself, so a person who
        approves it later gets a refusal, not a lost fact, if a keeper was removed since."""
        ops = [{"action": "remove", "old_text": step.entry} for step in self.steps]
        kept = dict.fromkeys(step.kept for step in self.steps)
        ops += [{"action": "replace", "old_text": k, "content": k} for k in kept]
        return ops

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "steps": [step.to_json() for step in self.steps],
            "similar": [list(pair) for pair in self.similar],
            "conflicts": [list(pair) for pair in self.conflicts],
        }


@dataclass(frozen=True)
class _Entry:
    index: int
    text: str
    words: tuple[str, ...]
    topics: frozenset[str]
    polarity: int
    age: float | None


def _profile(index: int, text: str, age: float | None) -> _Entry:
    words = meaning_words(text)
    return _Entry(index, text, words, frozenset(words), _polarity(text), age)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """The share of words two sets have in common (0 for two empty sets)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _in_order(small: tuple[str, ...], large: tuple[str, ...]) -> bool:
    """Whether ``small``'s words appear in ``large`` in the same order."""
    rest = iter(large)
    return all(word in rest for word in small)


def _older(a: _Entry, b: _Entry) -> tuple[_Entry, _Entry] | None:
    """(older, newer) by known ages; None when either is unknown or they are equal."""
    if a.age is None or b.age is None or a.age == b.age:
        return None
    return (a, b) if a.age < b.age else (b, a)


Relation = tuple[Reason, "_Entry", "_Entry"] | Literal["similar", "conflict"] | None


def _relation(a: _Entry, b: _Entry) -> Relation:
    """How ``a`` (earlier in the file) and ``b`` relate: (reason, the one that goes, the one
    kept), a pair only to show, or nothing."""
    same = a.polarity == b.polarity
    ages = _older(a, b)
    if same and a.words == b.words:
        return ("duplicate", *ages) if ages else ("duplicate", a, b)
    for small, large in ((a, b), (b, a)):
        if same and small.topics < large.topics and len(large.topics) >= MIN_TOPICS:
            if not _in_order(small.words, large.words):
                break
            newer_small = ages[1] is small if ages else small is b
            return "similar" if newer_small else ("covered", small, large)
    overlap = jaccard(a.topics, b.topics)
    if not same and len(a.topics & b.topics) >= MIN_TOPICS and overlap >= CONTRADICTION_OVERLAP:
        return ("contradicted", *ages) if ages else "conflict"
    if overlap >= SIMILAR_OVERLAP:
        return "similar"
    return None


def plan_memory(
    target: str, entries: Sequence[str], updated: Sequence[float | None] | None = None
) -> MemoryPlan:
    """The consolidation of one block's ``entries`` (in file order); ``updated`` gives each
    entry's last change where known. Deterministic; an entry is removed only when an entry
    that stays stands for it, so applying the plan and planning again finds nothing."""
    ages = list(updated) if updated is not None else [None] * len(entries)
    if len(ages) != len(entries):
        raise ValueError("updated must give one time (or None) per entry")
    profiles = [
        _profile(i, text, None if age is None else float(age))
        for i, (text, age) in enumerate(zip(entries, ages, strict=True))
    ]
    judged = [p for p in profiles if p.topics]
    keeper: dict[int, int] = {}  # removed entry -> the entry that stands for it
    why: dict[int, Reason] = {}
    shown: dict[str, list[tuple[str, str]]] = {"similar": [], "conflict": []}
    order = {"duplicate": 0, "covered": 1, "contradicted": 2}
    found: list[tuple[int, int, int, Reason]] = []
    for i, a in enumerate(judged):
        for b in judged[i + 1 :]:
            relation = _relation(a, b)
            if isinstance(relation, str):  # similar or conflict: shown only
                shown[relation].append((a.text, b.text))
            elif relation is not None:
                reason, leaving, staying = relation
                found.append((order[reason], leaving.index, staying.index, reason))
    for _, gone, kept, reason in sorted(found):
        if gone in keeper or _stand_in(keeper, why, kept)[0] == gone:
            continue  # already going, or its keeper goes for it: no circle
        keeper[gone], why[gone] = kept, reason
    resolved = {gone: _stand_in(keeper, why, gone) for gone in keeper}
    steps = tuple(
        Step(entries[gone], entries[resolved[gone][0]], resolved[gone][1])
        for gone in sorted(keeper)
    )
    left = {entries[i] for i in range(len(entries)) if i not in keeper}

    def both_left(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        return tuple(pair for pair in pairs if pair[0] in left and pair[1] in left)

    return MemoryPlan(target, steps, both_left(shown["similar"]), both_left(shown["conflict"]))


def _stand_in(
    keeper: Mapping[int, int], why: Mapping[int, Reason], index: int
) -> tuple[int, Reason]:
    """The entry that stays for ``index`` (itself when it stays) and the reason along the way:
    a chain that passes a contradiction is one (what stays no longer says the same words)."""
    reason: Reason = why.get(index, "duplicate")
    seen = {index}
    while index in keeper:
        if why[index] == "contradicted":
            reason = "contradicted"
        elif why[index] == "covered" and reason == "duplicate":
            reason = "covered"
        index = keeper[index]
        if index in seen:  # unreachable: plan_memory never records a circle
            break
        seen.add(index)
    return index, reason


def dates_of(entries: Sequence[str], known: Mapping[str, float]) -> list[float | None]:
    """Each entry's ``updated`` time from a mapping by entry text (None where unknown)."""
    return [known.get(entry) for entry in entries]
