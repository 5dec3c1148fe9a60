"""The skills library of a home directory, built from its settings.

Why: the host, the command line and tests all need "the library of this home, with its
approval mode and scanner"; building it in one place keeps them from drifting apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core.config.settings import Settings
from hermes_core.provenance.audit_log import AuditRecorder, FileAuditLog, audit_directory
from hermes_core.provenance.record import Provenance
from hermes_core.skills.library import SkillLibrary
from hermes_core.skills.screening import Scan

__all__ = [
    "SkillsAuditRecorder",
    "open_library",
    "pending_directory",
    "skills_audit_log",
    "skills_directory",
]


def skills_directory(home: Path) -> Path:
    return Path(home) / "skills"


def pending_directory(home: Path) -> Path:
    return Path(home) / "pending" / "skills"


def open_library(home: Path, settings: Settings, *, scan: Scan | None = None) -> SkillLibrary:
    """The library of ``home`` under ``settings.skills`` (``write_approval``)."""
    return SkillLibrary(
        skills_directory(home),
        scan=scan,
        approval=settings.skills.write_approval,
        pending_dir=pending_directory(home),
        untrusted=settings.memory.untrusted_writes,
        audit_log=(
            SkillsAuditRecorder(skills_audit_log(home, settings), store="skills")
            if settings.memory.audit
            else None
        ),
    )


def skills_audit_log(home: Path, settings: Settings) -> FileAuditLog:
    """The home's skills audit file (``audit/skills.jsonl``); skills are files everywhere."""
    return FileAuditLog(audit_directory(home), "skills", max_bytes=settings.memory.audit_max_bytes)


class SkillsAuditRecorder(AuditRecorder):
    """The skills audit recorder: a line names, at the top level like a memory line, the user
    whose session's words it records (its provenance's user), so ``forget`` and
    ``memory audit --user`` find it. The library is the home's, not one user's, so the
    recorder is bound to no user; a line without provenance names none."""

    def line(
        self,
        event: str,
        *,
        actor: str,
        provenance: Provenance | None,
        pending_id: str | None,
        contents: Sequence[str],
        shared: bool | None,
        user_id: str | None,
        detail: Mapping[str, Any],
    ) -> dict[str, Any]:
        if user_id is None and provenance is not None:
            user_id = provenance.user_id
        return super().line(
            event,
            actor=actor,
            provenance=provenance,
            pending_id=pending_id,
            contents=contents,
            shared=shared,
            user_id=user_id,
            detail=detail,
        )
