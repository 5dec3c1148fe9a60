"""The skills library of a home directory, built from its settings.

Why: the host, the command line and tests all need "the library of this home, with its
approval mode and scanner"; building it in one place keeps them from drifting apart.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.config.settings import Settings
from hermes_core.provenance.audit_log import AuditRecorder, FileAuditLog, audit_directory
from hermes_core.skills.library import SkillLibrary
from hermes_core.skills.screening import Scan

__all__ = [
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
            AuditRecorder(
                skills_audit_log(home, settings), store="skills", user_from_provenance=True
            )
            if settings.memory.audit
            else None
        ),
    )


def skills_audit_log(home: Path, settings: Settings) -> FileAuditLog:
    """The home's skills audit file (``audit/skills.jsonl``); skills are files everywhere."""
    return FileAuditLog(audit_directory(home), "skills", max_bytes=settings.memory.audit_max_bytes)
