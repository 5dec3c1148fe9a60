"""Which skills of a library are near-duplicates of each other, and which of two stays.

Why apart from :mod:`.consolidation`: a skill is compared by its name, description and body
and ranked by its own dates, not by the entry rules; only the word extraction is shared. Pure:
the caller (:mod:`hermes_core.host.consolidate`) writes the merges it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from hermes_core.review.consolidation import jaccard, meaning_words

__all__ = [
    "SKILL_BODY_OVERLAP",
    "SKILL_BODY_SUPPORT",
    "SKILL_OVERLAP",
    "SkillFacts",
    "SkillMerge",
    "plan_skills",
]

#: two skills whose name and description share this much (Jaccard) are near-duplicates when
#: their bodies share at least ``SKILL_BODY_SUPPORT`` too
SKILL_OVERLAP: Final = 0.6
SKILL_BODY_SUPPORT: Final = 0.4
#: or whose bodies alone share this much
SKILL_BODY_OVERLAP: Final = 0.75


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
    """Pairs of near-duplicate skills, strongest first. In one plan a skill is folded at most
    once, a skill that stays absorbs at most one other (the next plan finds the rest, from the
    merged text), and a skill that stays is never folded."""
    about = [
        frozenset(meaning_words(f"{s.name.replace('-', ' ')} {s.description}")) for s in skills
    ]
    bodies = [frozenset(meaning_words(s.body)) for s in skills]
    pairs: list[tuple[float, str, int, int]] = []
    for i in range(len(skills)):
        for j in range(i + 1, len(skills)):
            head = jaccard(about[i], about[j]) if len(about[i] | about[j]) >= 3 else 0.0
            enough_body = min(len(bodies[i]), len(bodies[j])) >= 8
            body = jaccard(bodies[i], bodies[j]) if enough_body else 0.0
            if head >= SKILL_OVERLAP and (not enough_body or body >= SKILL_BODY_SUPPORT):
                pairs.append((head, "description", i, j))
            elif body >= SKILL_BODY_OVERLAP:
                pairs.append((body, "body", i, j))
    merges: list[SkillMerge] = []
    used: set[int] = set()
    for overlap, basis, i, j in sorted(pairs, key=lambda p: (-p[0], p[2], p[3])):
        if i in used or j in used:
            continue
        stay, go = (i, j) if _rank(skills[i]) >= _rank(skills[j]) else (j, i)
        used.update((stay, go))
        merges.append(
            SkillMerge(
                skills[stay].name,
                skills[go].name,
                overlap,
                "body" if basis == "body" else "description",
            )
        )
    return merges
