"""Replacing an output file safely: only a regular file (or a link to one), atomically.

Why apart from the transcript reader: every command that writes a file (compress, sessions
export) needs the same refusal of devices, FIFOs and directories and the same
write-to-a-temporary-then-rename, whatever it writes.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Final

from hermes_core.errors import TranscriptError

__all__ = ["check_output_path", "output_target", "replace_file"]


_NODE_KINDS: Final = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _node_kind(mode: int) -> str:
    for test, kind in _NODE_KINDS:
        if test(mode):
            return kind
    return "not a regular file"  # pragma: no cover - doors, event ports and the like


def check_output_path(path: str | os.PathLike[str]) -> None:
    """Raise `TranscriptError` unless ``write_transcript`` may replace ``path``.

    Replacing means a new file renamed over the old name, which would turn ``/dev/null``
    (for root) or a FIFO into a regular file. So only a missing path, a regular file or a
    symbolic link to a regular file passes; a device, FIFO, socket or directory, a link to
    one, a dangling link or a link loop is refused, and nothing is changed. ``"-"`` (stdout)
    passes."""
    name = os.fspath(path)
    if name != "-":
        output_target(name, name)


def output_target(path: str, label: str) -> str:
    """The file to replace for ``path``: itself, or the final target of a symbolic link."""

    def refused(what: str) -> TranscriptError:
        return TranscriptError(
            f"{label}: cannot write: it is {what}, not a regular file; nothing was written "
            "(give a file path, or - for stdout)"
        )

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path  # a new file (a missing directory is reported when writing)
    except OSError as exc:
        raise TranscriptError(f"{label}: cannot write ({exc.strerror or exc})") from exc
    if stat.S_ISREG(info.st_mode):
        return path
    if not stat.S_ISLNK(info.st_mode):
        raise refused(_node_kind(info.st_mode))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise refused(f"a symbolic link to a missing file ({_link_text(path)})") from None
    except OSError as exc:  # a link loop (ELOOP), an unreadable directory on the way
        raise refused(f"a symbolic link that cannot be followed ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise refused(f"a symbolic link to {_node_kind(info.st_mode)}")
    return os.path.realpath(path)


def _link_text(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:  # pragma: no cover - replaced between two system calls
        return "?"


def _check_still_replaceable(path: str, label: str) -> None:
    """Refuse if ``path`` became something other than a regular file since it was checked."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else _node_kind(info.st_mode)
        raise TranscriptError(
            f"{label}: cannot write: it became {kind} while writing; nothing was written"
        )


def replace_file(path: str, data: bytes, label: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    temp = os.path.join(
        directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    )
    try:
        # 0o666 lets the umask decide, like a plain open() would; an existing file keeps its mode.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise TranscriptError(
            f"{label}: cannot write ({exc.strerror or exc}); check that the directory "
            "exists and is writable"
        ) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))
        _check_still_replaceable(path, label)
        os.replace(temp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(exc, OSError):
            raise TranscriptError(f"{label}: cannot write ({exc.strerror or exc})") from exc
        raise
