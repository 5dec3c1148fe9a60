"""Reading ``state.db`` without creating or changing anything next to it.

Committed sessions may still sit in ``state.db-wal`` (a live host, or one that crashed before
a checkpoint), so ``immutable=1``, which ignores the WAL, is used only when there is no WAL
to read. With a live host (another process locks ``state.db-shm``: probed on Linux, assumed
elsewhere) in a writable folder, ``mode=ro`` reads through the WAL as SQLite means it to: it
may update ``state.db-shm``, the shared-memory index SQLite rebuilds from the WAL (no data),
but creates no file. Otherwise a
non-empty WAL is read from a private snapshot (``state.db`` and its WAL copied into a fresh
0700 temporary folder), so a crashed host's files, or a read-only folder, stay as they are.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

from hermes_core.errors import SessionError

__all__ = ["ReadOnlySource"]

# unix VFS: every connection holds a shared lock on this byte of the -shm file while open
_SHM_DMS_BYTE = 128
_COPY_ATTEMPTS = 3


class ReadOnlySource:
    """Where a read-only pool opens ``path``: the file itself, or a snapshot made on first use
    and deleted by :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._snapshot: Path | None = None
        self._pid = os.getpid()

    def uri(self) -> str:
        """The URI of what to open (a snapshot is made once, then shared by every thread)."""
        if self._snapshot is not None:
            return _uri(self._snapshot / self.path.name, immutable=False)
        wal = _sibling(self.path, "-wal")
        if not wal.exists():  # no host has it open: read the file as it is
            return _uri(self.path, immutable=True)
        shm = _sibling(self.path, "-shm")
        writable = os.access(self.path.parent, os.W_OK) and os.access(shm, os.W_OK)
        if writable and _held_by_another_process(shm):  # a live host: read along with it
            return _uri(self.path, immutable=False)
        if _size(wal) == 0:  # nothing committed beyond state.db
            return _uri(self.path, immutable=True)
        self._snapshot = _copy(self.path, wal)
        return _uri(self._snapshot / self.path.name, immutable=False)

    def close(self) -> None:
        """Delete the snapshot (only in the process that made it)."""
        snapshot, self._snapshot = self._snapshot, None
        if snapshot is not None and os.getpid() == self._pid:
            shutil.rmtree(snapshot, ignore_errors=True)


def _uri(path: Path, *, immutable: bool) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro" + ("&immutable=1" if immutable else "")


def _sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _held_by_another_process(shm: Path) -> bool:
    """True when another process has the store open (its lock on the ``-shm`` file): a live
    host. Where locks cannot be probed (no ``fcntl``), assume one, as ``mode=ro`` is safe."""
    if sys.platform != "linux":  # pragma: no cover - struct flock is laid out differently
        return True
    import fcntl
    import struct

    try:
        fd = os.open(shm, os.O_RDONLY)
    except OSError:
        return False
    try:
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, _SHM_DMS_BYTE, 1, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
    except OSError:
        return True
    finally:
        os.close(fd)
    return bool(struct.unpack("hhqqi", answer)[0] != fcntl.F_UNLCK)


def _stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _copy(path: Path, wal: Path) -> Path:
    """``path`` and its WAL copied into a new 0700 folder, unchanged while copied (a writer
    that checkpoints meanwhile makes the copy start again)."""
    folder = Path(tempfile.mkdtemp(prefix="hermes-state-"))
    try:
        for _ in range(_COPY_ATTEMPTS):
            before = (_stamp(path), _stamp(wal))
            shutil.copyfile(path, folder / path.name)
            shutil.copyfile(wal, _sibling(folder / path.name, "-wal"))
            if (_stamp(path), _stamp(wal)) == before:
                return folder
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise SessionError(
            f"session store {path}: cannot read it with its WAL ({exc.strerror or exc}); "
            "check that state.db and state.db-wal are readable; nothing was changed"
        ) from None
    shutil.rmtree(folder, ignore_errors=True)
    raise SessionError(
        f"session store {path}: it kept changing while being read; retry (nothing was changed)"
    )
