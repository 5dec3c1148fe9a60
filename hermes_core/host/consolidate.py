"""Running a consolidation: plan a block (or the skills library) and hand the plan to the
writer that decides whether it lands, waits for a person or is refused.

Why through the writers: a consolidation is a write like any other. From the background
review (origin ``background_review``) every removal and every skill change is staged for a
person with its provenance; from ``hermes-context memory consolidate`` (origin ``cli``) it
follows ``memory.write_approval`` as ``memory remove`` does. A plan already waiting for a
person is not staged twice, and (with a ``ledger``) a plan a person rejected is not proposed
again while its entries stay as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.review.consolidation import MemoryPlan, dates_of, plan_memory
from hermes_core.review.skill_consolidation import SkillFacts, SkillMerge, plan_skills

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
    dry run, an empty plan, a plan already staged (``already_staged`` names its record) or one
    a person rejected (``declined``))."""

    plan: MemoryPlan
    result: dict[str, Any] | None = None
    already_staged: str | None = None
    declined: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            **self.plan.to_json(),
            "result": self.result,
            "already_staged": self.already_staged,
            "declined": self.declined,
        }


def _removed(ops: list[dict[str, Any]]) -> list[str]:
    return sorted(str(op.get("selected")) for op in ops if op.get("action") == "remove")


def _waiting(writer: MemoryWriter, plan: MemoryPlan) -> str | None:
    """The id of a staged record that removes exactly the plan's entries from the same block
    (of this user, or of anyone's when every user shares the block), if any."""
    records, _ = writer.pending.all()
    wanted = sorted(step.entry for step in plan.steps)
    shared = writer.store.shared(plan.target)
    for record in records:
        if record.target != plan.target:
            continue
        if not (shared and record.shared) and record.user_id != writer.store.user_id:
            continue
        ops = record.operations or [{"action": record.action, "selected": record.selected}]
        if _removed(ops) == wanted:
            return record.id
    return None


def _signature(writer: MemoryWriter, plan: MemoryPlan) -> str:
    scope = "shared" if writer.store.shared(plan.target) else str(writer.store.user_id)
    text = json.dumps([scope, plan.target, sorted(s.entry for s in plan.steps)])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read_ledger(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _note_staged(path: Path, signature: str, pending_id: str) -> None:
    from hermes_core.memory.files import atomic_write, locked

    with locked(path):
        ledger = _read_ledger(path)
        ledger[signature] = pending_id
        atomic_write(path, json.dumps(ledger, sort_keys=True))


def consolidate_memory(
    writer: MemoryWriter,
    target: str,
    *,
    origin: Origin,
    dry_run: bool = False,
    dates: DatesOf | None = None,
    ledger: Path | None = None,
) -> MemoryConsolidation:
    """Plan ``target``'s block and, unless ``dry_run``, write the plan as one batch. Ages
    are the entries' ``updated`` dates (``dates`` overrides them, by entry text).

    ``ledger`` (the review's) remembers which plan was staged as which record: a plan whose
    record is gone while its entries are all still there was rejected, and is not staged
    again until the block changes."""
    from hermes_core.memory.approval import WriteRequest

    if dates is None:
        dated = writer.store.dated(target)
        entries = [entry for entry, _ in dated]
        updated: list[float | None] | None = [d.updated if d else None for _, d in dated]
    else:
        entries = writer.store.entries(target)
        updated = dates_of(entries, dates(target))
    plan = plan_memory(target, entries, updated)
    if dry_run or not plan.steps:
        return MemoryConsolidation(plan)
    waiting = _waiting(writer, plan)
    if waiting is not None:
        return MemoryConsolidation(plan, already_staged=waiting)
    signature = _signature(writer, plan)
    if ledger is not None and signature in _read_ledger(ledger):
        return MemoryConsolidation(plan, declined=True)  # staged before, since rejected
    request = WriteRequest("batch", target, operations=tuple(plan.operations()))
    result = dict(writer.write(request, origin))
    if ledger is not None and result.get("staged"):
        _note_staged(ledger, signature, str(result["pending_id"]))
    return MemoryConsolidation(plan, result)


@dataclass
class SkillConsolidation:
    """The near-duplicate pairs found, the skills left out (``left``: name -> why), and,
    unless a dry run, the writer's answers for each merge (``edit``: the kept skill gains the
    other's steps; ``delete``: the other goes, only once the edit has landed)."""

    merges: list[SkillMerge]
    left: dict[str, str] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "merges": [m.to_json() for m in self.merges],
            "left": self.left,
            "results": self.results,
        }


def merged_header(folded_name: str) -> str:
    return f"## Merged from {folded_name}"


def merged_skill_text(kept_text: str, folded_name: str, folded_body: str) -> str:
    """The kept skill's SKILL.md with the folded skill's body appended as its own section,
    so approving the merge loses no step of either."""
    return f"{kept_text.rstrip()}\n\n{merged_header(folded_name)}\n\n{folded_body.strip()}\n"


@dataclass(frozen=True)
class _Skill:
    text: str
    body: str
    support: bool


def _read_library(library: SkillLibrary, left: dict[str, str]) -> dict[str, _Skill]:
    """Every skill by name, read once (one walk of the tree); names held by two folders and
    unreadable skills go to ``left``."""
    from hermes_core.skills.catalog import linked_files, locations, read_skill
    from hermes_core.skills.files import guarded, read_bytes
    from hermes_core.skills.layout import MAX_SKILL_CHARS, SKILL_FILE

    found, _ = locations(library.real_root())
    counts: dict[str, int] = {}
    for location in found:
        counts[location.name] = counts.get(location.name, 0) + 1
    skills: dict[str, _Skill] = {}
    for location in found:
        if counts[location.name] > 1:
            left[location.name] = "two skills have this name: merge them by hand"
            continue
        parsed = read_skill(location)
        data = read_bytes(guarded(location.directory, [SKILL_FILE]), MAX_SKILL_CHARS * 4)
        if isinstance(parsed, str) or data is None:
            left[location.name] = "cannot be read"
            continue
        support = bool(linked_files(location))
        skills[location.name] = _Skill(data.decode("utf-8-sig"), parsed.body, support)
    return skills


def _pending_skill_writes(library: SkillLibrary) -> list[tuple[str, str, str]]:
    """(action, name, content) of every staged skill write."""
    records, _ = library.pending.all()
    return [(r.action, r.name, r.content or "") for r in records]


def consolidate_skills(
    library: SkillLibrary,
    *,
    origin: str,
    dry_run: bool = False,
    last_used: Mapping[str, float] | None = None,
    updated: Mapping[str, float] | None = None,
) -> SkillConsolidation:
    """Find near-duplicate skills (ranked by the library's dates unless ``last_used`` and
    ``updated`` are given); unless ``dry_run``, write each merge: first the kept
    skill's new text (its steps and the other's), then, only once that has landed, the delete
    of the other. A merge whose edit waits for a person gets its delete on a later run (the
    kept skill then holds the ``## Merged from`` section). A skill with support files is never
    folded (its files would go with it): it is left for a person."""
    from hermes_core.skills.changes import SkillRequest

    if last_used is None or updated is None:
        from hermes_core.skills.dates import SkillDates

        known = SkillDates(library.root).by_name()
        if last_used is None:
            last_used = {n: d.last_used for n, d in known.items() if d.last_used is not None}
        if updated is None:
            updated = {n: d.updated for n, d in known.items()}
    left: dict[str, str] = {}
    skills = _read_library(library, left)
    metas, _ = library.scan_all()
    facts = [
        SkillFacts(
            m.name,
            m.description,
            skills[m.name].body,
            last_used=(last_used or {}).get(m.name),
            updated=(updated or {}).get(m.name),
        )
        for m in metas
        if m.name in skills
    ]
    merges: list[SkillMerge] = []
    for found in plan_skills(facts):
        merge = found
        if merged_header(found.keep) in skills[found.fold].text:  # merged before: it stays
            merge = SkillMerge(found.fold, found.keep, found.overlap, found.basis)
        if skills[merge.fold].support:
            left[merge.fold] = f"near-duplicate of {merge.keep}, but has support files"
        else:
            merges.append(merge)
    outcome = SkillConsolidation(merges, left)
    if dry_run:
        return outcome
    waiting = _pending_skill_writes(library)
    for merge in merges:
        done: dict[str, Any] = {"merge": merge.to_json()}
        outcome.results.append(done)
        kept = skills[merge.keep]
        if merged_header(merge.fold) not in kept.text:
            staged_edit = any(
                action == "edit" and name == merge.keep and merged_header(merge.fold) in content
                for action, name, content in waiting
            )
            if staged_edit:
                done["edit"] = {"success": True, "already_staged": True}
                continue
            text = merged_skill_text(kept.text, merge.fold, skills[merge.fold].body)
            done["edit"] = library.write(SkillRequest("edit", merge.keep, content=text), origin)
            if not done["edit"].get("success") or done["edit"].get("staged"):
                continue  # the delete waits until the merged text has landed
        if any(action == "delete" and name == merge.fold for action, name, _ in waiting):
            done["delete"] = {"success": True, "already_staged": True}
            continue
        done["delete"] = library.write(SkillRequest("delete", merge.fold), origin)
    return outcome
