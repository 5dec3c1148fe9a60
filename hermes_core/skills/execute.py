"""Carrying out a planned change, under the library's lock: atomic writes, removals, and
deletions that a reader sees whole or not at all.

Why a rename before a deletion: removing a folder file by file would let a reader in another
process find half a skill (a SKILL.md without the files it names); renaming it to a hidden
name first takes it out of the library in one step. A write that fails removes the folders
it created, so a refused or failed ``create`` leaves no empty skill folder behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from pathlib import Path

from hermes_core.memory.files import atomic_write, remove_file, remove_stale_temps
from hermes_core.skills.changes import Change

__all__ = ["execute"]


def execute(root: Path, change: Change) -> None:
    """Carry out ``change`` under the real skills root ``root`` (hold the lock)."""
    for path, text in change.writes:
        made = _missing_dirs(root, path.parent)
        try:
            if path.parent.is_dir():
                remove_stale_temps(path)  # what a killed writer left
            atomic_write(path, text)
        except BaseException:
            for directory in reversed(made):
                with contextlib.suppress(OSError):
                    directory.rmdir()
            raise
    if change.remove is not None:
        remove_file(change.remove)
        _prune(change.remove.parent, stop=change.skill_dir or root)
    if change.delete_dir is not None:
        tomb = root / f".deleted-{change.delete_dir.name}-{secrets.token_hex(4)}"
        os.rename(change.delete_dir, tomb)  # gone for every reader at once
        shutil.rmtree(tomb, ignore_errors=True)
        _prune(change.delete_dir.parent, stop=root)


def _missing_dirs(root: Path, directory: Path) -> list[Path]:
    """The folders between ``root`` and ``directory`` that do not exist yet, outermost first."""
    missing: list[Path] = []
    current = directory
    while current != root and root in current.parents and not current.exists():
        missing.append(current)
        current = current.parent
    return list(reversed(missing))


def _prune(directory: Path, *, stop: Path) -> None:
    """Remove empty folders from ``directory`` up to (not including) ``stop``."""
    current = directory
    while current != stop and stop in current.parents:
        try:
            current.rmdir()
        except OSError:
            return
        current = current.parent
