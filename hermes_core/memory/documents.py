"""Where memory blocks live: the seam between the store's rules and the storage that keeps them.

Why a seam: the rules of a write (limits, threat scans, matching, drift, approval) are the
same whoever keeps the text, but how a read-modify-write stays safe is not: the file layout
takes a cross-process lock and renames a temp file over the old one; PostgreSQL checks a
version column and, when another host got there first, reads again and plans again. So the
store hands the storage a pure *decision* (text in, what to write and what to answer out)
and the storage runs it under its own concurrency control, as often as it must.

A target's text belongs to a *scope*: the user id that owns it, or ``None`` for the home's
shared ``MEMORY.md`` (and the single-user ``USER.md``). Storage reads only the scope it is
asked for, so one user's profile never reaches another user's prompt.

The ``memory_documents`` hook answers with a :class:`MemoryDocuments`; the built-in file
layout is :class:`~hermes_core.memory.file_documents.FileMemoryDocuments`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.staged import PendingWrite

__all__ = [
    "Claim",
    "DatedDocuments",
    "Decision",
    "MemoryDocuments",
    "Removed",
    "Scope",
    "StagedWrites",
    "StorageUnavailable",
    "UnsafeLocation",
    "Updated",
    "checked_documents",
    "scope_of",
]

T = TypeVar("T")
#: The user id a target's text belongs to; None: the home's shared text.
Scope = str | None


class UnsafeLocation(MemoryStoreError):
    """The text lives where memory must not read or write (a link out of the home)."""


class StorageUnavailable(MemoryStoreError):
    """The storage cannot be reached or refused the work; nothing was changed unless the
    message says otherwise."""


def scope_of(target: str, user_id: str | None, *, per_user_memory: bool) -> Scope:
    """The scope of ``target`` for a store of ``user_id``: the user's own for ``USER.md``
    (and for ``MEMORY.md`` with ``per_user_memory``), else the shared one."""
    if user_id is not None and (target == "user" or per_user_memory):
        return user_id
    return None


@dataclass(frozen=True)
class Decision(Generic[T]):
    """What a write decided, given the text it found: the answer (``value``), the text to
    store (None: store nothing), whether to keep a copy of what is stored now (drift; at
    most one a minute), and whether it succeeded (which consumes a claim)."""

    value: T
    text: str | None = None
    keep_copy: bool = False
    succeeded: bool = False
    #: for dated storage: (old entry, new entry) of each replace, and entries a write named
    #: without changing them (a duplicate add): see :mod:`hermes_core.memory.dates`
    renamed: tuple[tuple[str, str], ...] = ()
    used: tuple[str, ...] = ()


@dataclass(frozen=True)
class Updated(Generic[T]):
    """The decision that was carried out: its answer, whether text was stored, a sentence
    about the copy a drift kept ("" when none was asked for), and the appended drift."""

    value: T
    written: bool
    copy_note: str = ""
    #: entries split off text appended by other means after the store's own (kept as
    #: entries of their own), and a sentence about the copy kept of the text before
    appended: tuple[str, ...] = ()
    appended_note: str = ""


@dataclass(frozen=True)
class Removed:
    """A reset: where the text was, and the copy kept first (its full name and a short one)."""

    where: str
    copy: str | None
    copy_label: str | None


class StagedWrites(Protocol):
    """Where staged writes wait for a person: one record per write, by 8-hex-digit id."""

    clock: Callable[[], float]

    def new_id(self) -> str:
        """An id no record has."""
        ...

    def add(self, record: PendingWrite) -> None:
        """Keep ``record`` (whole or not at all)."""
        ...

    def get(self, pending_id: str) -> PendingWrite:
        """The record; KeyError (with what to do) when it is missing, unreadable or the id
        is not one."""
        ...

    def all(self) -> tuple[list[PendingWrite], list[str]]:
        """Every readable record, oldest first, and the ids of unreadable ones."""
        ...

    def delete(self, pending_id: str) -> bool:
        """Drop the record; whether there was one."""
        ...


@dataclass(frozen=True)
class Claim:
    """An approval: the write lands only while ``record`` is still staged in ``staged``
    exactly as read, and the record is consumed with it, so that of many processes
    approving one record at once exactly one applies it."""

    record: PendingWrite
    staged: StagedWrites


@runtime_checkable
class MemoryDocuments(Protocol):
    """What a :class:`~hermes_core.memory.store.MemoryStore` needs from where blocks live.

    ``target`` is ``memory`` or ``user`` (already checked); ``scope`` is from
    :func:`scope_of`. Failures are :class:`MemoryStoreError` (unreadable: never read as
    empty), its subclasses :class:`UnsafeLocation` and :class:`StorageUnavailable`, or
    :class:`OSError` when a file cannot be written.
    """

    #: ``files``, ``postgres``, ...: what the command line says about where memory is
    kind: str

    @property
    def pending(self) -> StagedWrites:
        """The staged writes kept with these documents."""
        ...

    def where(self, target: str, scope: Scope) -> str:
        """Where the text is, for a person (a path, or a table and a key)."""
        ...

    def read(self, target: str, scope: Scope) -> str | None:
        """The text (None when there is none); raises when it exists but cannot be read."""
        ...

    def update(
        self,
        target: str,
        scope: Scope,
        decide: Callable[[str | None], Decision[T]],
        *,
        claim: Claim | None = None,
    ) -> Updated[T] | None:
        """Run ``decide`` on the current text and store what it decided, under the storage's
        concurrency control. ``decide`` is pure and may be called again (a concurrent writer
        changed the text in between). With ``claim``, a successful decision consumes the
        record with the write; None when it was no longer staged (nothing was changed)."""
        ...

    def reset_preview(self, target: str, scope: Scope) -> str | None:
        """One line naming what :meth:`reset` would delete, or None when there is nothing."""
        ...

    def reset(self, target: str, scope: Scope) -> Removed | None:
        """Keep a whole copy, then delete the text; None when there was none. Deletes
        nothing when the copy cannot be made."""
        ...

    def close(self) -> None:
        """Release what the documents hold (a database reference); safe to call twice."""
        ...


@runtime_checkable
class DatedDocuments(Protocol):
    """Documents that keep each block's dates beside its text (a sidecar the prompt never
    shows). :meth:`MemoryDocuments.update` keeps them in step with every write (see
    :func:`hermes_core.memory.dated.decide_dated`); these read and change them alone."""

    def read_meta(self, target: str, scope: Scope) -> object:
        """The block's metadata object as stored (None when there is none); never raises
        for metadata that cannot be read (dates are a help): None then."""
        ...

    def update_meta(
        self, target: str, scope: Scope, change: Callable[[str | None, object], object]
    ) -> None:
        """Store ``change(text, metadata)`` (unless None) under the same concurrency control
        as the text, so that it is decided on the text as it is."""
        ...


def checked_documents(answer: object, source: str = "memory_documents") -> MemoryDocuments:
    """``answer`` as documents, or a :class:`MemoryStoreError` saying what answered instead."""
    if isinstance(answer, MemoryDocuments):
        return answer
    raise MemoryStoreError(
        f"{source} answered a {type(answer).__name__}, which is not a "
        "hermes_core.memory.documents.MemoryDocuments (read, update, reset, pending, ...)"
    )
