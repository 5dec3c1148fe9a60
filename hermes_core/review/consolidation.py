"""Consolidation: which memory entries another entry already says, which the user has since
contradicted, and which skills are near-duplicates of each other.

Why offline and pure: a bounded block fills up with the same fact told three ways ("prefers
tabs", "User prefers tabs for indentation") and with facts the user took back ("likes dark
mode" beside "no longer wants dark mode"); the model prunes them blindly or not at all. The
planner only ever proposes removals (and, for skills, a merge), never new wording, so what it
proposes can be judged by a person in one look: the entry that goes and the entry that stands
for it. The caller stages the plan (:mod:`hermes_core.host.consolidate`); nothing here writes.

Two entries are compared by the stems of their meaningful words (:func:`.quotes.fact_topics`)
and by which of those words a negation covers (:mod:`.polarity`):

* **duplicate**: the same words, the same polarity: the older goes;
* **covered**: every word of one is in the other, the same polarity: the smaller goes;
* **contradicted**: mostly the same words (Jaccard >= ``CONTRADICTION_OVERLAP``) and a negation
  on the shared words in one but not the other: the older goes (the user said the newer);
* **similar**: related but neither covers the other: listed for a person, never removed.

An entry with no meaningful word never moves; a contradiction needs ``MIN_TOPICS`` shared words
and a covering entry at least ``MIN_TOPICS`` words (a one-word entry says too little to judge).
Age is the entry's ``updated`` time when the caller knows it, else its place in the file (a new
entry is appended last).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from hermes_core.review.polarity import scopes
from hermes_core.review.quotes import fact_topics, normalise, topic_stems

__all__ = [
    "CONTRADICTION_OVERLAP",
    "MIN_TOPICS",
    "SIMILAR_OVERLAP",
    "MemoryPlan",
    "SkillFacts",
    "SkillMerge",
    "Step",
    "plan_memory",
    "plan_skills",
]

MIN_TOPICS: Final = 2
CONTRADICTION_OVERLAP: Final = 0.6
SIMILAR_OVERLAP: Final = 0.5
#: two skills whose name and description share this much (Jaccard) are near-duplicates
SKILL_OVERLAP: Final = 0.6
#: or whose bodies do
SKILL_BODY_OVERLAP: Final = 0.75

Reason = Literal["duplicate", "covered", "contradicted"]


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
    """What consolidating one block would do; ``similar`` pairs are only shown."""

    target: str
    steps: tuple[Step, ...] = ()
    similar: tuple[tuple[str, str], ...] = ()

    def operations(self) -> list[dict[str, str]]:
        """The plan as one all-or-nothing batch of the memory tool (exact entries)."""
        return [{"action": "remove", "old_text": step.entry} for step in self.steps]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "steps": [step.to_json() for step in self.steps],
            "similar": [list(pair) for pair in self.similar],
        }


@dataclass(frozen=True)
class _Entry:
    index: int
    text: str
    topics: frozenset[str]
    negated: tuple[frozenset[str], ...]
    age: float

    def negates(self, words: frozenset[str]) -> bool:
        return any(scope & words for scope in self.negated)


def _profile(index: int, text: str, age: float) -> _Entry:
    said = normalise(text)
    return _Entry(index, text, fact_topics(text), tuple(scopes(said, topic_stems)), age)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def _relation(a: _Entry, b: _Entry) -> tuple[Reason, _Entry, _Entry] | Literal["similar"] | None:
    """How ``a`` and ``b`` relate: (reason, the one that goes, the one kept), similar, or none."""
    shared = a.topics & b.topics
    same_polarity = a.negates(shared) == b.negates(shared)
    older, newer = (a, b) if (a.age, a.index) < (b.age, b.index) else (b, a)
    if a.topics == b.topics and same_polarity:
        return "duplicate", older, newer
    if same_polarity and a.topics < b.topics and len(b.topics) >= MIN_TOPICS:
        return "covered", a, b
    if same_polarity and b.topics < a.topics and len(a.topics) >= MIN_TOPICS:
        return "covered", b, a
    overlap = _jaccard(a.topics, b.topics)
    if not same_polarity and len(shared) >= MIN_TOPICS and overlap >= CONTRADICTION_OVERLAP:
        return "contradicted", older, newer
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
        _profile(i, text, float(i) if age is None else float(age))
        for i, (text, age) in enumerate(zip(entries, ages, strict=True))
    ]
    judged = [p for p in profiles if p.topics]
    keeper: dict[int, int] = {}  # removed entry -> the entry that stands for it
    why: dict[int, Reason] = {}
    similar: list[tuple[str, str]] = []
    order = {"duplicate": 0, "covered": 1, "contradicted": 2}
    found: list[tuple[int, int, int, Reason]] = []
    for i, a in enumerate(judged):
        for b in judged[i + 1 :]:
            relation = _relation(a, b)
            if relation == "similar":
                similar.append((a.text, b.text))
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
    shown = tuple(pair for pair in similar if pair[0] in left and pair[1] in left)
    return MemoryPlan(target, steps, shown)


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


@dataclass(frozen=True)
class SkillFacts:
    """What the skill planner compares: the skill's name, description and body, and when it
    was last used (a view) and changed, where known."""

    name: str
    description: str
    body: str = ""
    last_used: float | None = None
    updated: float | None = None


@dataclass(frozen=True)
class SkillMerge:
    """Fold ``fold`` into ``keep`` (a proposal: a person approves it); ``overlap`` is the
    Jaccard share of meaningful words that made them near-duplicates."""

    keep: str
    fold: str
    overlap: float
    basis: Literal["description", "body"]

    def to_json(self) -> dict[str, Any]:
        return {
            "keep": self.keep,
            "fold": self.fold,
            "overlap": round(self.overlap, 2),
            "basis": self.basis,
        }


def _rank(skill: SkillFacts) -> tuple[float, float, int, str]:
    """Which of two near-duplicates stays: the one used last, then changed last, then the
    longer body; the name breaks ties so the plan is deterministic."""
    return (skill.last_used or 0.0, skill.updated or 0.0, len(skill.body), skill.name)


def plan_skills(skills: Sequence[SkillFacts]) -> list[SkillMerge]:
    """Pairs of near-duplicate skills, strongest first; a skill is folded at most once and a
    skill that stays is never folded into another."""
    about = [fact_topics(f"{s.name.replace('-', ' ')} {s.description}") for s in skills]
    bodies = [fact_topics(s.body) for s in skills]
    pairs: list[tuple[float, str, int, int]] = []
    for i in range(len(skills)):
        for j in range(i + 1, len(skills)):
            head = _jaccard(about[i], about[j]) if len(about[i] | about[j]) >= 3 else 0.0
            body = _jaccard(bodies[i], bodies[j]) if len(bodies[i] | bodies[j]) >= 8 else 0.0
            if head >= SKILL_OVERLAP:
                pairs.append((head, "description", i, j))
            elif body >= SKILL_BODY_OVERLAP:
                pairs.append((body, "body", i, j))
    merges: list[SkillMerge] = []
    folded: set[int] = set()
    kept: set[int] = set()
    for overlap, basis, i, j in sorted(pairs, key=lambda p: (-p[0], p[2], p[3])):
        stay, go = (i, j) if _rank(skills[i]) >= _rank(skills[j]) else (j, i)
        if go in folded or go in kept or stay in folded:
            continue
        folded.add(go)
        kept.add(stay)
        merges.append(
            SkillMerge(
                skills[stay].name,
                skills[go].name,
                overlap,
                "body" if basis == "body" else "description",
            )
        )
    return merges


def dates_of(entries: Sequence[str], known: Mapping[str, float]) -> list[float | None]:
    """Each entry's ``updated`` time from a mapping by entry text (None where unknown)."""
    return [known.get(entry) for entry in entries]
