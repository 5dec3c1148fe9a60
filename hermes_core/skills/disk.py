"""Writes below the skills root through folder descriptors, so no link is ever followed.

Why: the path checks (:func:`hermes_core.skills.files.guarded`) run before a write, and a
folder swapped for a symbolic link in between would make a path-based write land wherever
the link points. Here every folder from the root down is opened relative to its parent with
``O_NOFOLLOW | O_DIRECTORY``, and the temp file, the rename, the removal and the pruning all
happen relative to the last folder's descriptor: a link that appears at any moment makes an
open fail (nothing written), never a write go astray. The writes are atomic as memory's
are: temp file, fsync, rename, fsync of the folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from hermes_core.skills.files import SkillError, hard_link_message

__all__ = ["delete_tree", "remove_file", "write_file"]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
_NEW_MODE: Final = 0o600


class _Folders:
    """The open folders ``root``, ``root/parts[0]``, ...; ``fds[i]`` holds ``names[i]``
    (``names[0]`` is the root). ``made``: the folders this chain created, as (index of the
    parent in ``fds``, name)."""

    def __init__(self, root: Path) -> None:
        self.names = [str(root)]
        self.fds = [os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)]
        self.made: list[tuple[int, str]] = []

    @property
    def fd(self) -> int:
        return self.fds[-1]

    def shown(self, upto: int | None = None) -> str:
        return "/".join(self.names[1:upto]) or "the skills folder"

    def enter(self, name: str, *, create: bool) -> None:
        """Open ``name`` in the last folder (making it when ``create`` and it is missing)."""
        for attempt in range(2):
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
            except FileNotFoundError:
                if not create or attempt:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=self.fd)
                    self.made.append((len(self.fds) - 1, name))
                continue
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise SkillError(
                        f"{self.shown()}/{name} is a symbolic link or a file, not a folder "
                        "(it changed after the write was checked). Skills are never written "
                        "through a link; nothing was changed."
                    ) from exc
                raise
            self.names.append(name)
            self.fds.append(fd)
            return

    def undo(self) -> None:
        """Remove the folders this chain made (when still empty), innermost first."""
        for parent, name in reversed(self.made):
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=self.fds[parent])
        self.made.clear()

    def prune(self, keep: int) -> None:
        """Remove the innermost folders while empty, keeping the first ``keep`` parts."""
        for index in range(len(self.fds) - 1, keep, -1):
            try:
                os.rmdir(self.names[index], dir_fd=self.fds[index - 1])
            except OSError:
                return

    def close(self) -> None:
        for fd in reversed(self.fds):
            os.close(fd)
        self.fds.clear()


@contextlib.contextmanager
def _opened(root: Path, folders: Sequence[str], *, create: bool) -> Iterator[_Folders]:
    chain = _Folders(root)
    try:
        for name in folders:
            chain.enter(name, create=create)
        yield chain
    except BaseException:
        chain.undo()
        raise
    finally:
        chain.close()


def write_file(root: Path, parts: Sequence[str], text: str) -> None:
    """Replace ``root/parts...`` with ``text`` atomically (missing folders are made; on
    failure the ones made are removed again). The old file's mode is kept; one with
    several hard links is refused."""
    *folders, name = parts
    with _opened(root, folders, create=True) as chain:
        try:
            info: os.stat_result | None = os.stat(name, dir_fd=chain.fd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        regular = info is not None and stat.S_ISREG(info.st_mode)
        if info is not None and regular and info.st_nlink > 1:
            raise SkillError(hard_link_message(name, info.st_nlink))
        _remove_stale_temps(chain.fd, name)
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        mode = info.st_mode & 0o777 if info is not None and regular else _NEW_MODE
        fd = os.open(tmp, _NEW_FILE, mode, dir_fd=chain.fd)
        try:
            try:
                _write_all(fd, text.encode("utf-8"))
                os.fchmod(fd, mode)
                if info is not None and regular:
                    _keep_owner(fd, info)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=chain.fd, dst_dir_fd=chain.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=chain.fd)
            raise
        _fsync(chain.fd)


def remove_file(root: Path, parts: Sequence[str], *, keep: int) -> None:
    """Unlink ``root/parts...`` (a link itself, never what it points to), then remove the
    folders it leaves empty, keeping the first ``keep`` parts (the skill folder)."""
    *folders, name = parts
    with _opened(root, folders, create=False) as chain:
        os.unlink(name, dir_fd=chain.fd)
        _fsync(chain.fd)
        chain.prune(keep)


def delete_tree(root: Path, parts: Sequence[str]) -> None:
    """Take the folder ``root/parts...`` out of the library in one rename (to a hidden
    name in the root), then remove it, and its parent folder when that is left empty."""
    *folders, name = parts
    tomb = f".deleted-{name}-{secrets.token_hex(4)}"
    with _opened(root, folders, create=False) as chain:
        info = os.stat(name, dir_fd=chain.fd, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            raise SkillError(
                f"{chain.shown()}/{name} is not a folder (it changed after the delete was "
                "checked); nothing was changed."
            )
        os.rename(name, tomb, src_dir_fd=chain.fd, dst_dir_fd=chain.fds[0])
        _fsync(chain.fds[0])
        chain.prune(0)
    shutil.rmtree(root / tomb, ignore_errors=True)  # fd-based: it never follows a link


def _remove_stale_temps(dir_fd: int, name: str) -> None:
    """Delete temp files a killed writer of ``name`` left (call under the lock only)."""
    prefix = f".{name}."
    for entry in os.listdir(dir_fd):
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            with contextlib.suppress(OSError):
                os.unlink(entry, dir_fd=dir_fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _keep_owner(fd: int, info: os.stat_result) -> None:
    """Give the new file the old one's owner where we may (the rename would change it)."""
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
        with contextlib.suppress(OSError):
            os.fchown(fd, info.st_uid, info.st_gid)


def _fsync(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(fd)
