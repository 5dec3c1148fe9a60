"""``hermes-context export``: one user's sessions, memory, skills and staged records as a bundle.

Why through the stores' read APIs: whatever a backend does to keep its rows (an archive
compressed by retention, PostgreSQL's escapes), ``messages(include_archived=True)`` hands
back every row as it was given, so the bundle holds the same thing from any backend and an
import into any other restores it. Only this user's sessions, memory blocks and staged
memory records are read; the skills library and its staged writes belong to the whole home
(skills have no owner) and are exported whole. See ``docs/export.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hermes_core.lifecycle.bundle_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    count_contents,
    write_bundle,
)
from hermes_core.lifecycle.bundle_skill_dates import skill_dates
from hermes_core.lifecycle.bundle_skills import skill_entries
from hermes_core.memory.documents import MemoryDocuments, Scope, scope_of
from hermes_core.sessions.store import SessionRecord, SessionStore, StoredMessage
from hermes_core.skills.pending import PendingSkillWrite, PendingSkillWrites, record_provenance

__all__ = ["BundleParts", "export_bundle", "memory_blocks", "owns_skill_write"]

#: every session of the user: far more than one user keeps
_ALL_SESSIONS = 1_000_000_000


@dataclass(frozen=True)
class BundleParts:
    """Where a home keeps what a bundle holds: its session store, its memory documents (the
    staged memory writes with them), its skills folder and staged skill writes, and whether
    ``MEMORY.md`` is kept per user (``memory.per_user_memory``)."""

    store: SessionStore
    documents: MemoryDocuments
    skills_root: Path
    skill_pending: PendingSkillWrites
    per_user_memory: bool = False


def _block_text(documents: MemoryDocuments, target: str, scope: Scope) -> str | None:
    """The block as the store reads it: a note appended by hand (``echo >>``) split off as
    an entry of its own, so the imported text holds it apart and no ``remove`` of the entry
    it was glued to takes it along."""
    from hermes_core.memory.dated import block_view

    return block_view(documents, target, scope, documents.read(target, scope)).text


def _block_dates(documents: MemoryDocuments, target: str, scope: Scope) -> dict[str, Any]:
    """The block's entry dates (created, updated, last used by entry sha256; ``{}`` for a
    backend that keeps none)."""
    from hermes_core.memory.dated import read_block_dates

    return read_block_dates(documents, target, scope)


def memory_blocks(user_id: str | None, per_user_memory: bool) -> list[tuple[str, Scope, str]]:
    """``(target, scope, label)`` of the blocks that are ``user_id``'s own: ``USER.md``
    always, ``MEMORY.md`` when it is kept per user or the user is the anonymous principal of
    a single-user home. A ``MEMORY.md`` every user shares is no one user's: left out."""
    blocks: list[tuple[str, Scope, str]] = []
    for target in ("user", "memory"):
        scope = scope_of(target, user_id, per_user_memory=per_user_memory)
        if scope is None and user_id is not None:
            continue  # the shared MEMORY.md
        blocks.append((target, scope, "home" if scope is None else "user"))
    return blocks


def _session_line(record: SessionRecord) -> dict[str, Any]:
    """Every field of the session row, its counters and state as plain objects."""
    return {**asdict(record), "counters": dict(record.counters), "state": dict(record.state)}


def _message_line(row: StoredMessage, pos: int | None) -> dict[str, Any]:
    return {
        "session_id": row.session_id,
        "seq": row.seq,
        "pos": pos,
        "active": row.active,
        "compacted": row.compacted,
        "api_content": row.api_content,
        "timestamp": row.timestamp,
        "token_count": row.token_count,
        "message": dict(row.message),
    }


def _sessions(store: SessionStore, user_id: str | None) -> tuple[list[Any], list[Any], int]:
    """The user's sessions and rows, and how many parent links were left out (a parent that
    is not one of the user's sessions: an import refuses a link out of the bundle)."""
    records = store.list_sessions(user_id=user_id, limit=_ALL_SESSIONS)
    records.sort(key=lambda r: (r.started_at, r.id))  # parents before their children
    ids = {r.id for r in records}
    sessions, messages, cut = [], [], 0
    for record in records:
        line = _session_line(record)
        if line["parent_session_id"] is not None and line["parent_session_id"] not in ids:
            line["parent_session_id"], cut = None, cut + 1
        sessions.append(line)
        view = {row.seq: n for n, row in enumerate(store.messages(record.id), 1)}
        for row in store.messages(record.id, include_archived=True):
            messages.append(_message_line(row, view.get(row.seq) if row.active else None))
    return sessions, messages, cut


def owns_skill_write(record: PendingSkillWrite, user_id: str | None) -> bool:
    """Whether a staged skill write is ``user_id``'s: its provenance names that user (no
    user, or no provenance, is the anonymous principal's)."""
    provenance = record_provenance(record)
    return (provenance.user_id if provenance is not None else None) == user_id


def export_bundle(
    out: Path,
    parts: BundleParts,
    *,
    user_id: str | None,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """Write ``user_id``'s bundle to ``out`` (never over an existing file); returns the
    manifest's counts and notes."""
    from hermes_core import __version__

    sessions, messages, cut = _sessions(parts.store, user_id)
    blocks = [
        {
            "target": target,
            "scope": label,
            "text": _block_text(parts.documents, target, scope),
            "dates": _block_dates(parts.documents, target, scope),
        }
        for target, scope, label in memory_blocks(user_id, parts.per_user_memory)
    ]
    staged, broken = parts.documents.pending.all()
    mine = [asdict(r) for r in staged if r.user_id == user_id]
    skill_staged, skill_broken = parts.skill_pending.all()
    skill_mine = [r for r in skill_staged if owns_skill_write(r, user_id)]
    skills = skill_entries(parts.skills_root)
    notes = []
    if cut:
        notes.append(f"{cut} parent link(s) to sessions that are not the user's were left out")
    if len(skill_mine) < len(skill_staged):
        notes.append(
            f"{len(skill_staged) - len(skill_mine)} staged skill write(s) of other users (or "
            "of no user) are not in the bundle"
        )
    if user_id is not None and not parts.per_user_memory:
        notes.append("the shared MEMORY.md is every user's and is not in the bundle")
    if broken or skill_broken:
        notes.append(
            f"{len(broken) + len(skill_broken)} staged record(s) could not be read and are not "
            "in the bundle"
        )
    members = {
        "memory.json": {"blocks": blocks},
        "sessions.jsonl": sessions,
        "messages.jsonl": messages,
        "skills.jsonl": skills,
        "pending_memory.jsonl": mine,
        "pending_skills.jsonl": [asdict(r) for r in skill_mine],
        "skill_dates.json": skill_dates(parts.skills_root, skills),
    }
    counts = count_contents(members)
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "created": clock(),
        "created_by": f"hermes-context {__version__}",
        "user": {"id": user_id, "anonymous": user_id is None},
        "source": {"sessions": parts.store.backend, "memory": parts.documents.kind},
        "counts": counts,
        "notes": notes,
    }
    write_bundle(Path(out), manifest, members)
    return {"counts": counts, "notes": notes}
