"""The memory of a home directory, built from its settings.

Why: the plugin, the command line and tests all need "the store (and writer) for this home
and this user, with these limits, gates, approval mode and scanner"; building it in one place
keeps them from drifting apart. Where the text lives comes from the host (the
``memory_documents`` hook, :meth:`hermes_core.host.Hermes.memory_documents`); without it, the
home's files.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.config.settings import Settings
from hermes_core.memory.approval import MemoryWriter
from hermes_core.memory.documents import MemoryDocuments
from hermes_core.memory.file_documents import (
    FileMemoryDocuments,
    memory_directory,
    pending_directory,
)
from hermes_core.memory.snapshot import Scanner
from hermes_core.memory.store import MemoryStore
from hermes_core.provenance.audit_log import AuditRecorder, FileAuditLog, audit_directory

__all__ = [
    "memory_audit_log",
    "memory_directory",
    "open_store",
    "open_writer",
    "pending_directory",
]


def open_store(
    home: Path,
    settings: Settings,
    *,
    user_id: str | None = None,
    scanner: Scanner | None = None,
    documents: MemoryDocuments | None = None,
) -> MemoryStore:
    """The store of ``home`` for ``user_id`` under ``settings.memory``, kept in
    ``documents`` (default: the home's files)."""
    memory = settings.memory
    return MemoryStore(
        documents if documents is not None else FileMemoryDocuments.for_home(home),
        memory_char_limit=memory.memory_char_limit,
        user_char_limit=memory.user_char_limit,
        scanner=scanner,
        user_id=user_id,
        per_user_memory=memory.per_user_memory,
        memory_enabled=memory.memory_enabled,
        user_enabled=memory.user_profile_enabled,
    )


def open_writer(
    home: Path,
    settings: Settings,
    *,
    user_id: str | None = None,
    scanner: Scanner | None = None,
    documents: MemoryDocuments | None = None,
) -> MemoryWriter:
    """The writer (approval mode included) of ``home`` for ``user_id``; staged writes are
    kept with the documents."""
    if documents is None:
        documents = FileMemoryDocuments.for_home(home)
    store = open_store(home, settings, user_id=user_id, scanner=scanner, documents=documents)

    def store_for(other: str | None) -> MemoryStore:
        if other == user_id:
            return store
        return open_store(home, settings, user_id=other, scanner=scanner, documents=documents)

    recorder = None
    if settings.memory.audit:
        own = getattr(documents, "audit_log", None)  # a backend's table, else the home's files
        target = own if own is not None else memory_audit_log(home, settings)
        recorder = AuditRecorder(target, store="memory", user_id=user_id)
    return MemoryWriter(
        store,
        documents.pending,
        mode=settings.memory.write_approval,
        store_for=store_for,
        untrusted=settings.memory.untrusted_writes,
        audit_log=recorder,
    )


def memory_audit_log(home: Path, settings: Settings) -> FileAuditLog:
    """The home's own memory audit file (``audit/memory.jsonl``)."""
    return FileAuditLog(audit_directory(home), "memory", max_bytes=settings.memory.audit_max_bytes)
