"""Writing a bundle's skills into the library: each skill whole, or not at all.

Why staged: the checks ran before the import wrote anything, but a disk can fill and another
process can make a folder meanwhile. So each skill is written into a hidden folder of the
skills root (the library never reads hidden names), then renamed to its place in one step,
under the library's lock: a skill is either all there or absent, never half written, and an
import run again with ``--skip-existing`` finishes the rest (and removes the hidden folder an
import killed midway left). Every folder is opened relative
to its parent without following links (a link planted anywhere makes the write fail, never
land elsewhere); files are new (``O_EXCL``), mode 0600, or 0700 when they were executable.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from hermes_core.lifecycle.bundle_format import BundleError
from hermes_core.lifecycle.bundle_skills import SkillFile
from hermes_core.skills.files import SkillError, locked, real_root

__all__ = ["write_skills"]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_DIR: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_NEW: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
#: the hidden folder a skill is written into before it is renamed to its place
_STAGE: Final = ".import-"


def write_skills(root: Path, files: Sequence[SkillFile]) -> list[str]:
    """Write every skill of ``files`` under ``root``; returns the skills written.
    :class:`BundleError` names the skill that failed, why, and the ones already written."""
    by_skill: dict[str, list[SkillFile]] = {}
    for item in files:
        by_skill.setdefault(item.skill, []).append(item)
    if not by_skill:
        return []
    written: list[str] = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        real = real_root(root)
        with locked(real):
            _remove_stale_stages(real)
            for skill, items in by_skill.items():
                _write_skill(real, skill, items)
                written.append(skill)
    except (OSError, SkillError, BundleError) as exc:
        failed = next((s for s in by_skill if s not in written), "")
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BundleError(
            f"the skill {failed} could not be written ({reason}); nothing of it was kept. "
            f"Skills written: {', '.join(written) or 'none'}; everything before the skills "
            "(sessions, memory, staged records) was imported. Fix the cause, then import "
            "again with --skip-existing to finish"
        ) from None
    return written


@contextlib.contextmanager
def _folder(parent: int | None, name: str, *, create: bool = False) -> Iterator[int]:
    """The folder ``name`` of the folder ``parent`` (None: ``name`` is a path), open."""
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, dir_fd=parent)
    fd = os.open(name, _DIR, dir_fd=parent)
    try:
        yield fd
    finally:
        os.close(fd)


def _write_skill(root: Path, skill: str, items: Sequence[SkillFile]) -> None:
    *category, name = skill.split("/")
    stage = f"{_STAGE}{name}-{secrets.token_hex(4)}"
    with _folder(None, str(root)) as top:
        os.mkdir(stage, dir_fd=top)
        try:
            with _folder(top, stage) as staged:
                for item in items:
                    _write_file(staged, item)
                os.fsync(staged)
            made = bool(category) and not _exists(top, category[0])
            with _folder(top, category[0] if category else ".", create=made) as parent:
                if _exists(parent, name):
                    raise BundleError(f"{skill} appeared in the library meanwhile")
                try:
                    os.rename(stage, name, src_dir_fd=top, dst_dir_fd=parent)
                except OSError as exc:
                    if made:
                        with contextlib.suppress(OSError):
                            os.rmdir(category[0], dir_fd=top)
                    if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                        raise BundleError(f"{skill} appeared in the library meanwhile") from None
                    raise
                with contextlib.suppress(OSError):
                    os.fsync(parent)
        except BaseException:
            shutil.rmtree(stage, dir_fd=top, ignore_errors=True)
            raise


def _remove_stale_stages(root: Path) -> None:
    """Hidden folders an import killed midway left (call under the lock only: no other
    import is writing then)."""
    with _folder(None, str(root)) as top:
        for name in os.listdir(top):
            if name.startswith(_STAGE):
                shutil.rmtree(name, dir_fd=top, ignore_errors=True)


def _exists(parent: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _write_file(skill: int, item: SkillFile) -> None:
    *folders, name = item.path
    fds: list[int] = []
    try:
        current = skill
        for folder in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, dir_fd=current)
            current = os.open(folder, _DIR, dir_fd=current)
            fds.append(current)
        mode = 0o700 if item.executable else 0o600
        fd = os.open(name, _NEW, mode, dir_fd=current)
        try:
            view = memoryview(item.data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        for fd in reversed(fds):
            os.close(fd)
