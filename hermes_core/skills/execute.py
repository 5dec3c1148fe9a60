"""Carrying out a planned change, under the library's lock: atomic writes, removals, and
deletions that a reader sees whole or not at all.

Why a rename before a deletion: removing a folder file by file would let a reader in another
process find half a skill (a SKILL.md without the files it names); renaming it to a hidden
name first takes it out of the library in one step. A write that fails removes the folders
it created, so a refused or failed ``create`` leaves no empty skill folder behind. Every
step goes through folder descriptors (:mod:`hermes_core.skills.disk`), so a folder swapped
for a link after the plan was checked stops the write instead of redirecting it.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.skills.changes import Change
from hermes_core.skills.disk import delete_tree, remove_file, write_file
from hermes_core.skills.files import SkillError

__all__ = ["execute"]


def execute(root: Path, change: Change) -> None:
    """Carry out ``change`` under the real skills root ``root`` (hold the lock)."""
    for path, text in change.writes:
        write_file(root, _parts(root, path), text)
    if change.remove is not None:
        keep = len(_parts(root, change.skill_dir)) if change.skill_dir is not None else 0
        remove_file(root, _parts(root, change.remove), keep=keep)
    if change.delete_dir is not None:
        delete_tree(root, _parts(root, change.delete_dir))


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    """``path`` relative to ``root`` (every planned path is built below it)."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = ()
    if not parts or ".." in parts:
        raise SkillError(f"{path} is not inside the skills folder {root}; nothing was changed.")
    return parts
