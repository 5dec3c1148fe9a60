"""Paths of ``@file:`` and ``@folder:`` references: inside the workspace, or refused.

The workspace is the boundary. A path is refused when it is empty, holds a NUL, has a ``..``
component (even one that would stay inside: the rule is simpler to trust than the
arithmetic), or when it, or any prefix of it with links followed, lies outside the
workspace: a symbolic link that leaves the workspace is refused even if a second one leads
back. The deny list (:mod:`.sensitive`) is asked twice, before anything on disk is touched
(the path as written) and after the links are followed (the real location), so neither
``.env`` nor ``notes.txt -> .env`` is ever opened.

Files are then opened one component at a time from the workspace's real directory with
``O_NOFOLLOW`` (``openat``), so a link swapped in after the check cannot redirect the read.
A hard link is no link to the path checks: it *is* the file, wherever its other names live
(``ln ~/.ssh/id_rsa notes.txt`` needs no permission on the workspace's side), so a regular
file with more than one name is refused once it is open (``fstat``, so no swap can dodge it).
Any error while deciding refuses the reference: the guard fails closed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Final

from hermes_core.references.refusal import Refused
from hermes_core.references.sensitive import sensitive_reason

__all__ = ["Resolved", "open_inside", "resolve_reference_path"]

_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_FILE_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang the reader
    | getattr(os, "O_CLOEXEC", 0)
)
_MAX_PATH: Final = 4096
_OPENAT: Final = os.open in os.supports_dir_fd


@dataclass(frozen=True)
class Resolved:
    """A path that passed the guard: ``real`` (links followed) lies in ``root``, the real
    workspace; ``shown`` is how the path is named to the user and the model."""

    root: Path
    real: Path
    shown: str

    @property
    def parts(self) -> tuple[str, ...]:
        return self.real.relative_to(self.root).parts


def _sensitive(
    path: PurePath, workspace: Path, user_home: Path, hermes_home: Path | None, shown: str
) -> None:
    reason = sensitive_reason(
        path, workspace=workspace, user_home=user_home, hermes_home=hermes_home
    )
    if reason is not None:
        raise Refused(
            f"{shown} is never read: {reason}. If you need part of it, paste that part "
            "without its secrets"
        )


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def _written(workspace: Path, target: str, user_home: Path) -> Path:
    """The path as written, absolute and lexically normal (no file system access)."""
    if not target or "\x00" in target or len(target) > _MAX_PATH:
        raise Refused(
            "the path is empty, too long or holds a NUL character: write a path inside the "
            "workspace, such as @file:src/main.py"
        )
    if target == "~" or target.startswith(("~/", "~\\")):
        target = str(user_home) + target[1:]
    elif target.startswith("~"):
        raise Refused(
            f"{target} names another user's home, which is outside the workspace: write a "
            "path inside the workspace"
        )
    pure = PurePath(target)
    if ".." in pure.parts:
        raise Refused(
            f"{target} has a '..' component; references stay inside the workspace "
            f"({workspace}): write the path from the workspace down"
        )
    return Path(os.path.normpath(workspace / pure))


def resolve_reference_path(
    workspace: Path,
    target: str,
    *,
    user_home: Path,
    hermes_home: Path | None = None,
) -> Resolved:
    """Where ``target`` leads, checked; raises :class:`Refused` with the reason otherwise."""
    try:
        return _resolve(workspace, target, user_home=user_home, hermes_home=hermes_home)
    except Refused:
        raise
    except Exception as exc:  # fail closed: any doubt refuses
        raise Refused(
            f"{target} could not be checked ({type(exc).__name__}), so it is not read: "
            "check that the path exists and is readable"
        ) from exc


def _resolve(
    workspace: Path, target: str, *, user_home: Path, hermes_home: Path | None
) -> Resolved:
    lexical = Path(os.path.normpath(os.path.abspath(workspace)))
    root = Path(os.path.realpath(lexical))
    written = _written(lexical, target, user_home)
    # the path as written may name the workspace by its link (lexical) or by its real place
    anchor = lexical if _inside(lexical, written) else root
    _sensitive(written, anchor, user_home, hermes_home, target)
    if not _inside(anchor, written):
        raise Refused(
            f"{target} is outside the workspace ({workspace}); references only read files inside it"
        )
    current = anchor
    for part in written.relative_to(anchor).parts:
        current = current / part
        real = Path(os.path.realpath(current))
        if not _inside(root, real):
            link = os.readlink(current) if current.is_symlink() else str(real)
            raise Refused(
                f"{target} goes through the symbolic link {current.relative_to(anchor)} -> "
                f"{link}, which leads outside the workspace; references never follow a link "
                "out of it: copy the file into the workspace instead"
            )
        _sensitive(real, root, user_home, hermes_home, target)
    real = Path(os.path.realpath(written))
    if not _inside(root, real):  # the workspace itself may have moved in between
        raise Refused(f"{target} is outside the workspace ({workspace})")
    _sensitive(real, root, user_home, hermes_home, target)
    return Resolved(root=root, real=real, shown=target)


def open_inside(resolved: Resolved, *, directory: bool = False) -> int:
    """A file descriptor of ``resolved.real``, opened component by component from the real
    workspace with ``O_NOFOLLOW``; raises :class:`Refused` when anything on the way changed,
    is missing, or is not a regular file with a single name (a directory with
    ``directory=True``)."""
    shown = resolved.shown
    fd = os.open(resolved.root, _DIR_FLAGS)
    try:
        parts = resolved.parts
        for number, part in enumerate(parts):
            last = number == len(parts) - 1
            flags = _DIR_FLAGS if (directory or not last) else _FILE_FLAGS
            if _OPENAT:
                child = os.open(part, flags, dir_fd=fd)
            else:  # pragma: no cover - platforms without openat
                child = os.open(resolved.root.joinpath(*parts[: number + 1]), flags)
            os.close(fd)
            fd = child
        info = os.fstat(fd)
    except FileNotFoundError as exc:
        os.close(fd)
        raise Refused(f"{shown} does not exist in the workspace: check the path") from exc
    except NotADirectoryError as exc:
        os.close(fd)
        raise Refused(f"{shown} is a file, not a folder: use @file:{shown}") from exc
    except OSError as exc:
        os.close(fd)
        raise Refused(
            f"{shown} could not be opened ({exc.strerror or exc}); it may have been replaced "
            "by a link while it was checked: try again"
        ) from exc
    mode = info.st_mode
    if directory and not stat.S_ISDIR(mode):
        os.close(fd)
        raise Refused(f"{shown} is not a folder: use @file:{shown}")
    if not directory and not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise Refused(f"{shown} is a folder: use @folder:{shown} to list it")
        raise Refused(f"{shown} is not a regular file (a pipe or a device) and is not read")
    if not directory and info.st_nlink > 1:
        os.close(fd)
        raise Refused(
            f"{shown} is not read: it has other names (hard links); a hard link can point at a "
            "file outside the workspace. If it is yours, copy it (cp, not ln) and name the copy"
        )
    return fd
