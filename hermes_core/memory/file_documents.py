"""The file layout of memory: ``MEMORY.md`` / ``USER.md`` under the home, staged writes as
JSON records beside them (hermes-agent's layout, so an existing home reads the same).

Why it looks like this: concurrency is the cross-process lock of the real file (two paths to
one file share one lock), held around re-read, decide and atomic rename; a copy of a drifted
file is kept under that lock too, and an approval checks and consumes its record under it, so
two processes approving one record apply it once. See :mod:`hermes_core.memory.files` for the
durability and the home boundary.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.dated import DatedDecision, decide_dated
from hermes_core.memory.documents import (
    Claim,
    Decision,
    Removed,
    Scope,
    UnsafeLocation,
    Updated,
)
from hermes_core.memory.files import (
    atomic_write,
    backup_copy,
    inside_home,
    locked,
    read_bytes,
    read_text,
    refuse_read_only,
    remove_file,
    remove_stale_temps,
)
from hermes_core.memory.layout import target_path
from hermes_core.memory.sidecar import read_sidecar, remove_sidecar, write_sidecar
from hermes_core.memory.staged import PendingWrites

__all__ = ["FileMemoryDocuments", "memory_directory", "pending_directory"]

log = logging.getLogger("hermes_context.memory")
T = TypeVar("T")


def memory_directory(home: Path) -> Path:
    return Path(home) / "memories"


def pending_directory(home: Path) -> Path:
    return Path(home) / "pending" / "memory"


class FileMemoryDocuments:
    """The files of ``directory`` (normally ``$HERMES_HOME/memories``) and the staged
    records of ``pending_directory`` (default: ``pending/memory`` beside it)."""

    kind = "files"

    def __init__(self, directory: str | Path, pending_directory: str | Path | None = None) -> None:
        self.directory = Path(directory).expanduser()
        staged = (
            Path(pending_directory).expanduser()
            if pending_directory is not None
            else self.directory.parent / "pending" / "memory"
        )
        self._pending = PendingWrites(staged)

    @classmethod
    def for_home(cls, home: str | Path) -> FileMemoryDocuments:
        """The layout of a home: ``memories/`` and ``pending/memory/``."""
        home = Path(home).expanduser()
        return cls(memory_directory(home), pending_directory(home))

    @property
    def pending(self) -> PendingWrites:
        return self._pending

    def path(self, target: str, scope: Scope) -> Path:
        """The file of ``target`` in ``scope`` (``users/<safe id>/`` for a user's own)."""
        return target_path(self.directory, target, scope, per_user_memory=True)

    def real_path(self, target: str, scope: Scope) -> Path:
        """Where the file really is (links followed); :class:`UnsafeLocation` when that is
        outside the home."""
        try:
            return inside_home(self.directory, self.path(target, scope))
        except UnsafeLocation:
            raise
        except MemoryStoreError as exc:
            raise UnsafeLocation(str(exc)) from None

    def where(self, target: str, scope: Scope) -> str:
        return str(self.path(target, scope))

    def read(self, target: str, scope: Scope) -> str | None:
        return read_text(self.real_path(target, scope))

    def update(
        self,
        target: str,
        scope: Scope,
        decide: Callable[[str | None], Decision[T]],
        *,
        claim: Claim | None = None,
    ) -> Updated[T] | None:
        real = self.real_path(target, scope)
        with locked(real), _held(claim):
            remove_stale_temps(real)
            if claim is not None and not _still_staged(claim):
                return None
            raw_meta = read_sidecar(real)
            for _ in range(_ATTEMPTS):
                text = read_text(real)
                dated = decide_dated(text, raw_meta, decide, final_newline=True)
                try:
                    appended_note = self._store(real, text, dated)
                except _ChangedMeanwhile:
                    continue  # appended to while this write was decided: decide again on it
                break
            else:
                _restore_sidecar(real, raw_meta)
                raise MemoryStoreError(
                    f"{real.name} changed {_ATTEMPTS} times while this write was being stored "
                    "(something keeps appending to it); nothing was changed. Try again."
                )
            decision = dated.decision
            note = _drift_copy(real) if decision.keep_copy and decision.text is None else ""
            if claim is not None and decision.succeeded:
                _consume(claim)
            return Updated(
                decision.value, decision.text is not None, note, dated.appended, appended_note
            )

    @staticmethod
    def _store(real: Path, text: str | None, dated: DatedDecision[T]) -> str:
        """Store the decision's text and dates (call under the lock); the sentence about the
        copy kept of appended drift. The file is read again right before the rename: text
        appended meanwhile by something that takes no lock (``echo note >> MEMORY.md``)
        raises :class:`_ChangedMeanwhile` instead of being replaced."""
        appended_note = ""
        if dated.stored is None:
            if dated.meta is not None:
                _dates_only(real, dated.meta)
            return appended_note
        refuse_read_only(real)
        if dated.appended or dated.copy_first:  # the text as it was, before it changes
            appended_note = _drift_copy(real, same_text=True)
        if dated.meta is not None:
            write_sidecar(real, dated.meta)

        def unchanged() -> None:
            if read_text(real) != text:
                raise _ChangedMeanwhile

        atomic_write(real, dated.stored, unchanged)
        return appended_note

    def read_meta(self, target: str, scope: Scope) -> object:
        return read_sidecar(self.real_path(target, scope))

    def update_meta(
        self, target: str, scope: Scope, change: Callable[[str | None, object], object]
    ) -> None:
        real = self.real_path(target, scope)
        with locked(real):
            remove_stale_temps(real)
            meta = change(read_text(real), read_sidecar(real))
            if meta is not None:
                write_sidecar(real, meta)

    def reset_preview(self, target: str, scope: Scope) -> str | None:
        path = self.path(target, scope)
        real = self.real_path(target, scope)  # a link out of the home is refused here
        if not os.path.lexists(path):
            return None
        size = real.stat().st_size if real.exists() else 0
        link = f"; a link to {real}, which is kept" if path.is_symlink() else ""
        return f"{path} ({size:,} bytes; a .bak copy is kept{link})"

    def reset(self, target: str, scope: Scope) -> Removed | None:
        """A symbolic link (inside the home) is removed itself; what it points to stays."""
        path = self.path(target, scope)
        real = self.real_path(target, scope)
        if not os.path.lexists(path):
            return None
        with locked(real):
            remove_stale_temps(real)
            refuse_read_only(real)
            copy = backup_copy(real, always=True)
            remove_file(path)
            remove_sidecar(real)
        return Removed(str(path), str(copy) if copy else None, copy.name if copy else None)

    def close(self) -> None:
        """Nothing to release: files are opened per operation."""


class _ChangedMeanwhile(Exception):
    """The file changed under the lock between reading it and replacing it."""


#: how often a write is decided again on a file appended to meanwhile before it gives up
_ATTEMPTS = 3


def _restore_sidecar(real: Path, raw: object) -> None:
    """Put back the dates a write that gave up had already replaced."""
    try:
        if raw is None:
            remove_sidecar(real)
        else:
            write_sidecar(real, raw)
    except OSError as exc:
        log.warning("memory dates of %s not restored: %s", real, exc)


def _still_staged(claim: Claim) -> bool:
    """Whether the claimed record is still staged exactly as it was read (checked under the
    target's lock, which every approval of it takes)."""
    try:
        return claim.staged.get(claim.record.id) == claim.record
    except KeyError:
        return False


def _held(claim: Claim | None) -> contextlib.AbstractContextManager[object]:
    """The lock of the claimed record's folder (a rejection takes it too, so an approval and
    a rejection of one record cannot both succeed); nothing for other staged stores."""
    if claim is not None and isinstance(claim.staged, PendingWrites):
        return claim.staged.held()
    return contextlib.nullcontext()


def _consume(claim: Claim) -> None:
    """Drop an applied record. If that fails the write still stands; approving the record
    again is a no-op (an add already there) or refused (the entry it aimed at is gone)."""
    try:
        if isinstance(claim.staged, PendingWrites):
            claim.staged.discard(claim.record.id)  # its lock is held already (see _held)
            return
        claim.staged.delete(claim.record.id)
    except OSError as exc:
        log.warning("pending write %s was applied but not removed: %s", claim.record.id, exc)


def _dates_only(real: Path, meta: object) -> None:
    """Store new dates for an unchanged text (a duplicate add used an entry); a failure is
    logged, since the write itself had nothing to store."""
    try:
        write_sidecar(real, meta)
    except OSError as exc:
        log.warning("memory dates of %s not updated: %s", real, exc)


def _drift_copy(path: Path, *, same_text: bool = False) -> str:
    """Keep a copy of a drifted file (at most one a minute; ``same_text``: unless the recent
    copy is of another text); what to add to the answer about it."""
    try:
        copy = backup_copy(path)
        if same_text and copy is not None and copy.read_bytes() != read_bytes(path):
            after = int(copy.name.rsplit(".", 1)[-1]) + 1  # never over the recent copy
            copy = backup_copy(path, max(time.time(), after), always=True)
    except (OSError, MemoryStoreError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f" No copy could be saved ({reason}); the file itself is unchanged."
    return f" A copy is in {copy.name}." if copy else ""
