"""Disk access for the skills library: no links below the root, capped reads, one lock.

Why: every path here is built from what a model sent, so besides the name rules
(:mod:`hermes_core.skills.layout`) the disk itself is checked: no component below the
skills root may be a symbolic link (a link inside a skill could read ``~/.ssh`` into the
context or write anywhere), reads never follow one (``O_NOFOLLOW``, in case one appears
after the check), never read a file with several hard links (one may be a file from outside
linked in) and stop one byte past the limit, and writers of one library share one
cross-process lock (``skills/.lock``), so read-modify-write (a patch) never loses an update.
The writes themselves (:mod:`hermes_core.skills.disk`) are atomic: temp file, fsync, rename.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from hermes_core.errors import HermesError

__all__ = [
    "LOCK_NAME",
    "LOCK_TIMEOUT",
    "SkillError",
    "digest",
    "guarded",
    "hard_link_message",
    "locked",
    "read_bytes",
    "real_root",
]

LOCK_NAME: Final = ".lock"
LOCK_TIMEOUT: Final = 30.0
_READ_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in a skill must not hang the reader
    | getattr(os, "O_CLOEXEC", 0)
)


class SkillError(HermesError):
    """A skill file cannot be reached safely, read or locked; nothing was changed."""


def real_root(root: Path) -> Path:
    """The real skills root. The root itself may be a link to a directory (a skills folder
    kept elsewhere); a link to nothing is refused, since creating it would make directories
    outside the home."""
    real = Path(os.path.realpath(root))
    if root.is_symlink() and not real.is_dir():
        raise SkillError(
            f"the skills folder {root} is a symbolic link to {real}, which is not a directory. "
            "Nothing was read or changed; create the directory, or remove the link."
        )
    return real


def guarded(root: Path, parts: Sequence[str]) -> Path:
    """``root/parts...`` once no existing component below ``root`` is a symbolic link and
    every existing component but the last is a directory; else :class:`SkillError`."""
    current = root
    for n, part in enumerate(parts, 1):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return root.joinpath(*parts)
        except OSError as exc:
            raise SkillError(
                f"cannot inspect {current}: {exc.strerror or exc}. Nothing was changed."
            ) from exc
        if stat.S_ISLNK(info.st_mode):
            raise SkillError(
                f"{_shown(root, current)} is a symbolic link. Skills are never read or written "
                "through a link (it could reach any file outside the skill). Nothing was read "
                "or changed: replace the link with a regular file or folder, or remove it."
            )
        if n < len(parts) and not stat.S_ISDIR(info.st_mode):
            raise SkillError(
                f"{_shown(root, current)} is a file, not a folder; nothing was changed. Choose "
                "another path, or remove the file first."
            )
    return current


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_bytes(path: Path, limit: int, *, linked_ok: bool = False) -> bytes | None:
    """At most ``limit + 1`` bytes of the regular file ``path`` (the caller tells "too
    large" by the length), or None when it does not exist; never through a link, and never
    from a file with several hard links (one may be a file outside the skills folder linked
    in: ``ln ~/.ssh/id_rsa skills/s/references/notes.md``), unless ``linked_ok`` (to take the
    digest of a file about to be unlinked, which never shows its text)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SkillError(
                f"{path.name} is a symbolic link and is not followed. Nothing was read; "
                "replace it with a regular file."
            ) from exc
        raise SkillError(
            f"cannot read {path}: {exc.strerror or exc}. Nothing was changed."
        ) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkillError(
                f"{path.name} is not a regular file (a folder, a pipe or a device); nothing "
                "was read."
            )
        if info.st_nlink > 1 and not linked_ok:
            raise SkillError(hard_link_message(path.name, info.st_nlink))
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            return handle.read(limit + 1)
    finally:
        if fd >= 0:
            os.close(fd)


def hard_link_message(name: str, links: int) -> str:
    """Why a file with several hard links is neither read nor written over."""
    return (
        f"{name} has {links} hard links, so it may be a file from outside the skills folder "
        "linked in; it is not read or written over. Nothing was read or changed: replace it "
        "with a copy of its own (copy it to a new name, then move that over it), or remove it."
    )


def digest(data: bytes | None) -> str | None:
    """The SHA-256 of a file's bytes (None for a missing file): what a staged write was
    based on, so approving it later cannot silently apply to a changed file."""
    return None if data is None else hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def locked(root: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the library's cross-process lock (``<root>/.lock``, mode 0600)."""
    from filelock import FileLock, Timeout

    lock_path = root / LOCK_NAME
    if lock_path.is_symlink():
        raise SkillError(
            f"{lock_path} is a symbolic link. Nothing was changed; remove it (it is only a "
            "lock file) and try again."
        )
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=timeout, mode=0o600)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise SkillError(
            f"the skills folder {root} is locked by another process (waited {timeout:.0f} s). "
            "Nothing was changed; try again, or remove the stale .lock file if no "
            "hermes-context runs."
        ) from exc
