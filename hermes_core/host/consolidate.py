"""Running a consolidation: plan a block (or the skills library) and hand the plan to the
writer that decides whether it lands, waits for a person or is refused.

Why through the writers: a consolidation is a write like any other. From the background
review (origin ``background_review``) every removal and every skill change is staged for a
person with its provenance; from ``hermes-context memory consolidate`` (origin ``cli``) it
follows ``memory.write_approval`` as ``memory remove`` does. A plan already waiting for a
person is not staged twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hermes_core.review.consolidation import (
    MemoryPlan,
    SkillFacts,
    SkillMerge,
    dates_of,
    plan_memory,
    plan_skills,
)

if TYPE_CHECKING:
    from hermes_core.memory.approval import MemoryWriter, Origin
    from hermes_core.skills.library import SkillLibrary

__all__ = [
    "MemoryConsolidation",
    "SkillConsolidation",
    "consolidate_memory",
    "consolidate_skills",
    "merged_skill_text",
]

#: ``updated`` time by entry text for a target, where the caller knows it
DatesOf = Callable[[str], Mapping[str, float]]


@dataclass
class MemoryConsolidation:
    """A block's plan and what became of it: ``result`` is the writer's answer (None for a
    dry run, an empty plan, or a plan already staged: ``already_staged`` names its record)."""

    plan: MemoryPlan
    result: dict[str, Any] | None = None
    already_staged: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.plan.to_json(), "result": self.result, "already_staged": self.already_staged}


def _waiting(writer: MemoryWriter, target: str, entries: list[str]) -> str | None:
    """The id of a staged record of this user that removes exactly ``entries``, if any."""
    records, _ = writer.pending.all()
    wanted = sorted(entries)
    for record in records:
        if record.target != target or record.user_id != writer.store.user_id:
            continue
        ops = record.operations or [{"action": record.action, "selected": record.selected}]
        removes = all(op.get("action") == "remove" for op in ops)
        if removes and sorted(str(op.get("selected")) for op in ops) == wanted:
            return record.id
    return None


def consolidate_memory(
    writer: MemoryWriter,
    target: str,
    *,
    origin: Origin,
    dry_run: bool = False,
    dates: DatesOf | None = None,
) -> MemoryConsolidation:
    """Plan ``target``'s block and, unless ``dry_run``, write the plan as one batch."""
    from hermes_core.memory.approval import WriteRequest

    entries = writer.store.entries(target)
    updated = dates_of(entries, dates(target)) if dates is not None else None
    plan = plan_memory(target, entries, updated)
    if dry_run or not plan.steps:
        return MemoryConsolidation(plan)
    waiting = _waiting(writer, target, [step.entry for step in plan.steps])
    if waiting is not None:
        return MemoryConsolidation(plan, already_staged=waiting)
    request = WriteRequest("batch", target, operations=tuple(plan.operations()))
    return MemoryConsolidation(plan, dict(writer.write(request, origin)))


@dataclass
class SkillConsolidation:
    """The near-duplicate pairs found and, unless a dry run, the writer's answers for each
    pair's two writes (the kept skill's new text, the folded skill's delete)."""

    merges: list[SkillMerge]
    results: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"merges": [m.to_json() for m in self.merges], "results": self.results}


def merged_skill_text(kept_text: str, folded_name: str, folded_body: str) -> str:
    """The kept skill's SKILL.md with the folded skill's body appended as its own section,
    so approving the merge loses no step of either."""
    return f"{kept_text.rstrip()}\n\n## Merged from {folded_name}\n\n{folded_body.strip()}\n"


def consolidate_skills(
    library: SkillLibrary,
    *,
    origin: str,
    dry_run: bool = False,
    last_used: Mapping[str, float] | None = None,
) -> SkillConsolidation:
    """Find near-duplicate skills; unless ``dry_run``, propose each merge as two writes (an
    edit of the kept skill that appends the other's body, and a delete of the other)."""
    from hermes_core.skills.catalog import locate, read_skill
    from hermes_core.skills.changes import SkillRequest
    from hermes_core.skills.files import guarded, read_bytes
    from hermes_core.skills.layout import MAX_SKILL_CHARS, SKILL_FILE

    metas, _ = library.scan_all()
    root = library.real_root()
    facts: list[SkillFacts] = []
    texts: dict[str, tuple[str, str]] = {}  # name -> (whole SKILL.md, body)
    for meta in metas:
        location = locate(root, meta.name)
        if isinstance(location, str):
            continue
        parsed = read_skill(location)
        if isinstance(parsed, str):
            continue
        data = read_bytes(guarded(location.directory, [SKILL_FILE]), MAX_SKILL_CHARS * 4)
        if data is None:
            continue
        whole = data.decode("utf-8-sig")
        texts[meta.name] = (whole, parsed.body)
        used = (last_used or {}).get(meta.name)
        facts.append(SkillFacts(meta.name, meta.description, parsed.body, last_used=used))
    outcome = SkillConsolidation(plan_skills(facts))
    if dry_run:
        return outcome
    for merge in outcome.merges:
        kept_text, _ = texts[merge.keep]
        _, folded_body = texts[merge.fold]
        edit = SkillRequest(
            "edit", merge.keep, content=merged_skill_text(kept_text, merge.fold, folded_body)
        )
        outcome.results.append({"merge": merge.to_json(), "edit": library.write(edit, origin)})
        outcome.results[-1]["delete"] = library.write(SkillRequest("delete", merge.fold), origin)
    return outcome
