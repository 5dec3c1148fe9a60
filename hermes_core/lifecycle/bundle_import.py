"""``hermes-context import``: restore a bundle into this home's stores, whatever their backend.

Why in this order: everything that can refuse refuses before the first write. The bundle is
read and checked whole (:mod:`.bundle_format`, :mod:`.bundle_parse`: skill files too), a
per-user ``MEMORY.md`` is refused where this home shares one (nobody would read it), then
every collision is looked for (sessions with the same ids, memory text already there, skill
folders that exist or would land inside a skill, staged records with the same ids) and,
unless ``skip_existing``, named in one error. Only then: the sessions in one transaction of
the session store (all or nothing), the memory blocks through the memory documents (each
write re-checks, under the storage's own concurrency control, that no text appeared
meanwhile), the staged records, the skills (each whole or not at all) and their dates.
Nothing is ever overwritten. See ``docs/export.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_core.lifecycle.bundle_export import BundleParts
from hermes_core.lifecycle.bundle_format import BundleError, read_bundle
from hermes_core.lifecycle.bundle_parse import Parsed, parse_contents
from hermes_core.lifecycle.bundle_skill_dates import restore_skill_dates
from hermes_core.lifecycle.bundle_skill_write import write_skills
from hermes_core.lifecycle.bundle_skills import skill_conflicts
from hermes_core.memory.dated import write_block_dates
from hermes_core.memory.documents import DatedDocuments, Decision, Scope

__all__ = ["ImportReport", "SessionImporter", "import_bundle"]


@runtime_checkable
class SessionImporter(Protocol):
    """What a session store needs to take a bundle (the built-in stores' bundle mixins)."""

    def existing_sessions(self, session_ids: Any) -> set[str]: ...

    def import_sessions(self, sessions: Any) -> int: ...


@dataclass
class ImportReport:
    """What an import wrote, and what it skipped (``skip_existing``) or found changed."""

    user_id: str | None
    sessions: int = 0
    messages: int = 0
    memory_blocks: list[str] = field(default_factory=list)
    pending_memory: int = 0
    pending_skills: int = 0
    skills: int = 0
    skill_files: int = 0
    skill_dates: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "sessions": self.sessions,
            "messages": self.messages,
            "memory_blocks": self.memory_blocks,
            "pending_memory": self.pending_memory,
            "pending_skills": self.pending_skills,
            "skills": self.skills,
            "skill_files": self.skill_files,
            "skill_dates": self.skill_dates,
            "skipped": self.skipped,
        }


def _scope(label: str, user_id: str | None) -> Scope:
    return user_id if label == "user" else None


def _check_memory_layout(parsed: Parsed, parts: BundleParts) -> None:
    """A user's own ``MEMORY.md`` lands only in a home that reads one per user."""
    if parts.per_user_memory or parsed.user_id is None:
        return
    if any(target == "memory" and label == "user" for target, label, _ in parsed.blocks):
        raise BundleError(
            f"the bundle holds user {parsed.user_id}'s own MEMORY.md (exported from a home "
            "with memory.per_user_memory: true), but this home shares one MEMORY.md among "
            "all its users (memory.per_user_memory: false), so nobody would read it. Set "
            "memory.per_user_memory: true in this home's config.yaml and import again; "
            "nothing was imported"
        )


def _collisions(
    parsed: Parsed, parts: BundleParts, store: SessionImporter
) -> tuple[dict[str, list[str]], set[str]]:
    """What exists already, by kind (as shown), and the skills among it."""
    found: dict[str, list[str]] = {}
    ids = [s.record.id for s in parsed.sessions]
    found["sessions"] = sorted(store.existing_sessions(ids))
    found["memory"] = [
        target
        for target, label, text in parsed.blocks
        if _occupied(parts.documents.read(target, _scope(label, parsed.user_id)), text)
    ]
    staged, broken = parts.documents.pending.all()
    taken = {r.id for r in staged} | set(broken)
    found["pending_memory"] = [r.id for r in parsed.pending_memory if r.id in taken]
    skill_staged, skill_broken = parts.skill_pending.all()
    skill_ids = {r.id for r in skill_staged} | set(skill_broken)
    found["pending_skills"] = [r.id for r in parsed.pending_skills if r.id in skill_ids]
    skills = skill_conflicts(parts.skills_root, [f.skill for f in parsed.skill_files])
    found["skills"] = list(skills.values())
    return {kind: names for kind, names in found.items() if names}, set(skills)


def _occupied(current: str | None, text: str) -> bool:
    """Whether a block holds other text already (the same text is no collision)."""
    return bool(current and current.strip()) and current != text


def _refusal(collisions: dict[str, list[str]]) -> BundleError:
    parts = []
    for kind, names in collisions.items():
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        parts.append(f"{kind}: {shown}")
    return BundleError(
        "the target holds some of the bundle's data already (" + "; ".join(parts) + "); "
        "nothing was imported and nothing is ever overwritten. Import with --skip-existing to "
        "keep what is there and import the rest, or remove it first (hermes-context forget)"
    )


def _other_users(parsed: Parsed, parts: BundleParts, ids: list[str]) -> list[str]:
    """Colliding sessions that belong to another user: never skipped silently, since the
    bundle's children would then hang under another user's session."""
    return [s for s in ids if parts.store.get_session(s, user_id=parsed.user_id) is None]


def import_bundle(path: Path, parts: BundleParts, *, skip_existing: bool = False) -> ImportReport:
    """Restore the bundle at ``path`` into ``parts``; :class:`BundleError` (nothing written)
    for a bad bundle or, unless ``skip_existing``, anything that exists already."""
    parsed = parse_contents(read_bundle(Path(path)))
    store = parts.store
    if not isinstance(store, SessionImporter):
        raise BundleError(
            f"the session store ({getattr(store, 'backend', type(store).__name__)}) cannot "
            "import sessions; nothing was imported"
        )
    _check_memory_layout(parsed, parts)
    collisions, taken_skills = _collisions(parsed, parts, store)
    if collisions and not skip_existing:
        raise _refusal(collisions)
    strangers = _other_users(parsed, parts, collisions.get("sessions", []))
    if strangers:
        raise BundleError(
            f"session(s) {', '.join(strangers[:10])} of the bundle exist in the target under "
            "another user; nothing was imported (they cannot be skipped: choose another target)"
        )
    report = ImportReport(parsed.user_id, skipped=collisions)
    skip = {kind: set(names) for kind, names in collisions.items()}
    sessions = [s for s in parsed.sessions if s.record.id not in skip.get("sessions", ())]
    report.messages = store.import_sessions(sessions)
    report.sessions = len(sessions)
    _import_memory(parsed, parts, skip.get("memory", set()), report)
    for record in parsed.pending_memory:
        if record.id not in skip.get("pending_memory", ()):
            parts.documents.pending.add(record)
            report.pending_memory += 1
    for skill_record in parsed.pending_skills:
        if skill_record.id not in skip.get("pending_skills", ()):
            parts.skill_pending.directory.mkdir(parents=True, exist_ok=True)
            parts.skill_pending.add(skill_record)
            report.pending_skills += 1
    chosen = [f for f in parsed.skill_files if f.skill not in taken_skills]
    written = write_skills(parts.skills_root, chosen)
    report.skills = len(written)
    report.skill_files = sum(1 for f in chosen if f.skill in written)
    report.skill_dates = restore_skill_dates(parts.skills_root, parsed.skill_dates, written)
    refresh = getattr(store, "refresh_statistics", None)
    if callable(refresh):
        refresh()
    return report


def _import_memory(
    parsed: Parsed, parts: BundleParts, skip: set[str], report: ImportReport
) -> None:
    for target, label, text in parsed.blocks:
        if target in skip:
            continue

        def decide(current: str | None, text: str = text) -> Decision[bool]:
            if _occupied(current, text):
                return Decision(False)  # written meanwhile: never overwritten
            return Decision(True, text=None if current == text else text, succeeded=True)

        scope = _scope(label, parsed.user_id)
        done = parts.documents.update(target, scope, decide)
        if done is not None and done.value:
            report.memory_blocks.append(target)
            dates = parsed.block_dates.get(target)
            if dates and isinstance(parts.documents, DatedDocuments):
                write_block_dates(parts.documents, target, scope, dates)
        else:
            report.skipped.setdefault("memory", []).append(target)
