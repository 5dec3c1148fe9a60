"""The skills library of a home directory, built from its settings.

Why: the host, the command line and tests all need "the library of this home, with its
approval mode and scanner"; building it in one place keeps them from drifting apart.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.config.settings import Settings
from hermes_core.skills.library import SkillLibrary
from hermes_core.skills.screening import Scan

__all__ = ["open_library", "pending_directory", "skills_directory"]


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
    )
