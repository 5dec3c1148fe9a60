"""Durable file I/O for the memory store: strict reads, locked atomic writes, safe copies.

Why so careful: memory is small and precious. A write that half-lands, a file read as empty
because it could not be decoded, or two processes overwriting each other's entries would each
lose what a user or an agent was told was saved. So: readers never lock and never see a mixture
(writes are a rename); writers hold a cross-process ``filelock`` around read-modify-write; a
file that exists but cannot be read is an error, never an empty store.

And the home is a boundary. A symbolic link under it could put any file into the system
prompt (``USER.md -> ~/secret``), append to one (``MEMORY.md -> ~/.bashrc``) or make
directories anywhere, so :func:`inside_home` resolves every path and refuses one whose real
location leaves the home; everything else here works on that real path, so two paths to one
file share one lock. Reads never follow a link (``O_NOFOLLOW``), in case one appears between
the check and the open; writes replace the real file, so they never follow one either.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from hermes_core.errors import MemoryStoreError

__all__ = [
    "BACKUP_INTERVAL",
    "LOCK_TIMEOUT",
    "MAX_FILE_BYTES",
    "ReadOnlyFile",
    "atomic_write",
    "backup_copy",
    "inside_home",
    "locked",
    "read_bytes",
    "read_text",
    "refuse_read_only",
    "remove_file",
    "remove_stale_temps",
]

log = logging.getLogger("hermes_context.memory")


class ReadOnlyFile(MemoryStoreError):
    """A memory file its owner made read-only; nothing was changed."""


#: Seconds a writer waits for another process's lock before giving up with an error.
LOCK_TIMEOUT: Final = 30.0
#: At most one drift copy of a file per this many seconds.
BACKUP_INTERVAL: Final = 60
#: A memory file larger than this is refused (thousands of times any sensible limit).
MAX_FILE_BYTES: Final = 16 * 1024 * 1024
_READ_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO planted in the home must not hang the reader
    | getattr(os, "O_CLOEXEC", 0)
)


def _first_link(root: Path, path: Path) -> Path | None:
    """The first component of ``path`` below ``root`` that is a symbolic link."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def inside_home(root: Path, path: Path) -> Path:
    """The real location of ``path`` (links followed), which must lie inside ``root``.

    Raises :class:`MemoryStoreError` when a link leads out of ``root``, or when ``root`` is a
    link to a directory that does not exist (creating it would make directories outside the
    home). A link that stays inside the home is fine.
    """
    real_root = Path(os.path.realpath(root))
    if root.is_symlink() and not real_root.is_dir():
        raise MemoryStoreError(
            f"the memory home {root} is a symbolic link to {real_root}, which is not a "
            f"directory. Nothing was read or changed; create {real_root}, or remove the link."
        )
    real = Path(os.path.realpath(path))
    if real_root in real.parents:
        return real
    link = _first_link(root, path) or path
    target = os.readlink(link) if link.is_symlink() else str(real)
    raise MemoryStoreError(
        f"{link} is a symbolic link to {target}, outside the memory home {real_root}. Memory "
        "never reads or writes through a link that leaves its home (the link could put any "
        "file into the system prompt, or append to one). Nothing was read or changed: "
        "replace the link with a regular file (a copy of what it points to), or remove it."
    )


def read_bytes(path: Path) -> bytes | None:
    """The bytes of the regular file ``path``, or None when it does not exist; never through a
    symbolic link. Raises :class:`MemoryStoreError` for anything else that stops the read."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise MemoryStoreError(
                f"{path} is a symbolic link and is not followed here. Nothing was read or "
                "changed; replace it with a regular file."
            ) from exc
        raise MemoryStoreError(
            f"cannot read {path}: {exc.strerror or exc}. Nothing was changed; fix its "
            "permissions (or move it away) and try again."
        ) from exc
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise MemoryStoreError(
            f"cannot read {path}: it is not a regular file (a directory, a pipe or a device). "
            "Nothing was read or changed; move it away."
        )
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise MemoryStoreError(
            f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB, far over any memory "
            "limit. Nothing was read or changed; trim it by hand (or move it away)."
        )
    return data


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist.

    Raises :class:`MemoryStoreError` when it exists but cannot be read or is not UTF-8: the
    caller must refuse to write rather than start from an empty list.
    """
    data = read_bytes(path)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MemoryStoreError(
            f"{path} is not valid UTF-8 (byte {exc.start}). Nothing was changed, and no write "
            "is allowed until it is fixed: convert it to UTF-8 or move it away."
        ) from exc


@contextlib.contextmanager
def locked(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the cross-process lock of ``path`` (``<file>.lock``, mode 0600). Pass the real
    path (see :func:`inside_home`), so that every way to reach one file takes one lock.
    ``timeout`` defaults to :data:`LOCK_TIMEOUT` as it is when called."""
    from filelock import FileLock, Timeout

    timeout = LOCK_TIMEOUT if timeout is None else timeout

    lock_path = Path(str(path) + ".lock")
    if lock_path.is_symlink():
        raise MemoryStoreError(
            f"{lock_path} is a symbolic link. Nothing was changed; remove it (it is only a "
            "lock file) and try again."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=timeout, mode=0o600)
    try:
        with lock:
            yield
    except Timeout as exc:
        raise MemoryStoreError(
            f"{path} is locked by another process (waited {timeout:.0f} s). Nothing was "
            "changed; try again, or remove the stale .lock file if no hermes-context runs."
        ) from exc


def refuse_read_only(path: Path) -> None:
    """Refuse to replace a file its owner made read-only (``chmod 444``). Why the mode bits
    and not the write itself: a write is a rename, which the file's own permission does not
    stop, and root may write anyway; the bits are what the person said."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IWUSR:
        raise ReadOnlyFile(
            f"{path} is read-only (mode {stat.S_IMODE(info.st_mode):04o}): memory does not "
            "rewrite a file its owner made read-only. Nothing was changed; to allow writes, "
            f"run `chmod u+w {path}`."
        )


def remove_stale_temps(path: Path) -> int:
    """Delete temp files a killed writer of ``path`` left behind (its backup copies' too);
    call only under the lock (then no live write can own one). Returns how many were
    removed."""
    removed = 0
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            stale.unlink()
            removed += 1
        except OSError as exc:
            log.debug("could not remove the stale temp file %s: %s", stale, exc)
    return removed


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: the one place file contents are written (a
    full disk shows up here, and tests inject one here)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _write_temp(directory: Path, prefix: str, data: bytes, mode: int) -> Path:
    """A complete, fsynced temp file in ``directory``; nothing is left behind on failure."""
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _keep_owner(tmp: Path, info: os.stat_result) -> None:
    """Give the new file the old one's owner where we may (the rename would change it)."""
    if not hasattr(os, "chown"):
        return
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) == (info.st_uid, info.st_gid):
        return
    try:
        os.chown(tmp, info.st_uid, info.st_gid)
    except OSError as exc:
        log.debug("could not keep the owner of %s: %s", tmp, exc)


def atomic_write(path: Path, text: str, check: Callable[[], None] | None = None) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old file or the new one:
    temp file in the same directory, flush, fsync, rename, fsync of the directory. The mode
    (and, where permitted, the owner) of the old file is kept. A symbolic link at ``path``
    is replaced, never followed: pass the real path to write through one. ``check`` runs
    right before the rename; what it raises stops the write (the temp file is removed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        info: os.stat_result | None = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    regular = info is not None and stat.S_ISREG(info.st_mode)
    mode = info.st_mode & 0o777 if info is not None and regular else 0o600
    tmp = _write_temp(path.parent, f".{path.name}.", text.encode("utf-8"), mode)
    try:
        if info is not None and regular:
            _keep_owner(tmp, info)
        if check is not None:
            check()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def remove_file(path: Path) -> None:
    """Delete ``path`` itself (a symbolic link is removed, not what it points to), durably."""
    path.unlink()
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        log.debug("could not fsync %s: %s", directory, exc)
    finally:
        os.close(fd)


def _stamp(copy: Path) -> int | None:
    suffix = copy.name.rsplit(".", 1)[-1]
    return int(suffix) if suffix.isdigit() else None


def backup_copy(path: Path, now: float | None = None, *, always: bool = False) -> Path | None:
    """Copy ``path`` to ``<file>.bak.<unix time>`` unless a copy was made in the last
    :data:`BACKUP_INTERVAL` seconds (``always``: copy regardless, as before a reset); returns
    the copy (new or recent), or None when there is no file.

    The copy is written to a temp file and renamed into place only once it is complete, so a
    failure (a full disk) raises :class:`OSError` and leaves no file behind: a ``.bak`` that
    exists is always a whole copy."""
    now = time.time() if now is None else now
    recent = [
        p
        for p in path.parent.glob(f"{path.name}.bak.*")
        if (stamp := _stamp(p)) is not None and 0 <= now - stamp < BACKUP_INTERVAL
    ]
    if recent and not always:
        return max(recent, key=lambda p: _stamp(p) or 0)
    data = read_bytes(path)
    if data is None:
        return None
    copy = path.with_name(f"{path.name}.bak.{int(now)}")
    tmp = _write_temp(path.parent, f".{copy.name}.", data, 0o600)
    try:
        os.replace(tmp, copy)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)
    return copy
