"""Durable file I/O for the memory store: strict reads, locked atomic writes, drift copies.

Why so careful: memory is small and precious. A write that half-lands, a file read as empty
because it could not be decoded, or two processes overwriting each other's entries would each
lose what a user or an agent was told was saved. So: readers never lock and never see a mixture
(writes are a rename); writers hold a cross-process ``filelock`` around read-modify-write; a
file that exists but cannot be read is an error, never an empty store.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from hermes_core.errors import MemoryStoreError

__all__ = [
    "BACKUP_INTERVAL",
    "LOCK_TIMEOUT",
    "atomic_write",
    "backup_copy",
    "locked",
    "read_text",
    "remove_stale_temps",
]

#: Seconds a writer waits for another process's lock before giving up with an error.
LOCK_TIMEOUT: Final = 30.0
#: At most one drift copy of a file per this many seconds.
BACKUP_INTERVAL: Final = 60


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist.

    Raises :class:`MemoryStoreError` when it exists but cannot be read or is not UTF-8: the
    caller must refuse to write rather than start from an empty list.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemoryStoreError(
            f"cannot read {path}: {exc.strerror or exc}. Nothing was changed; fix its "
            "permissions (or move it away) and try again."
        ) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MemoryStoreError(
            f"{path} is not valid UTF-8 (byte {exc.start}). Nothing was changed, and no write "
            "is allowed until it is fixed: convert it to UTF-8 or move it away."
        ) from exc


@contextlib.contextmanager
def locked(path: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the cross-process lock of ``path`` (``<file>.lock``, mode 0600)."""
    from filelock import FileLock, Timeout

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path) + ".lock", timeout=timeout, mode=0o600)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise MemoryStoreError(
            f"{path} is locked by another process (waited {timeout:.0f} s). Nothing was "
            "changed; try again, or remove the stale .lock file if no hermes-context runs."
        ) from exc


def remove_stale_temps(path: Path) -> int:
    """Delete temp files a killed writer of ``path`` left behind; call only under the lock
    (then no live write can own one). Returns how many were removed."""
    removed = 0
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            stale.unlink()
            removed += 1
        except OSError:
            continue
    return removed


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old file or the new one:
    temp file in the same directory, flush, fsync, rename, fsync of the directory."""
    if path.is_symlink():  # write through a link (a dotfiles repo), do not replace it
        path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def backup_copy(path: Path, now: float | None = None, *, always: bool = False) -> Path | None:
    """Copy ``path`` to ``<file>.bak.<unix time>`` unless a copy was made in the last
    :data:`BACKUP_INTERVAL` seconds (``always``: copy regardless, as before a reset); returns
    the copy (new or recent), or None when there is no file."""
    now = time.time() if now is None else now
    recent = [
        p
        for p in path.parent.glob(f"{path.name}.bak.*")
        if p.name.rsplit(".", 1)[-1].isdigit()
        and 0 <= now - int(p.name.rsplit(".", 1)[-1]) < BACKUP_INTERVAL
    ]
    if recent and not always:
        return max(recent, key=lambda p: int(p.name.rsplit(".", 1)[-1]))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    copy = path.with_name(f"{path.name}.bak.{int(now)}")
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return copy
