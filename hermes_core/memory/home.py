"""The file memory of a home directory, built from its settings.

Why: the plugin, the command line and tests all need "the store (and writer) for this home
and this user, with these limits, gates, approval mode and scanner"; building it in one place
keeps them from drifting apart.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.config.settings import Settings
from hermes_core.memory.approval import MemoryWriter, PendingWrites
from hermes_core.memory.snapshot import Scanner
from hermes_core.memory.store import MemoryStore

__all__ = ["memory_directory", "open_store", "open_writer", "pending_directory"]


def memory_directory(home: Path) -> Path:
    return Path(home) / "memories"


def pending_directory(home: Path) -> Path:
    return Path(home) / "pending" / "memory"


def open_store(
    home: Path, settings: Settings, *, user_id: str | None = None, scanner: Scanner | None = None
) -> MemoryStore:
    """The store of ``home`` for ``user_id`` under ``settings.memory``."""
    memory = settings.memory
    return MemoryStore(
        memory_directory(home),
        memory_char_limit=memory.memory_char_limit,
        user_char_limit=memory.user_char_limit,
        scanner=scanner,
        user_id=user_id,
        per_user_memory=memory.per_user_memory,
        memory_enabled=memory.memory_enabled,
        user_enabled=memory.user_profile_enabled,
    )


def open_writer(
    home: Path, settings: Settings, *, user_id: str | None = None, scanner: Scanner | None = None
) -> MemoryWriter:
    """The writer (approval mode included) of ``home`` for ``user_id``."""
    store = open_store(home, settings, user_id=user_id, scanner=scanner)

    def store_for(other: str | None) -> MemoryStore:
        return (
            store
            if other == user_id
            else open_store(home, settings, user_id=other, scanner=scanner)
        )

    return MemoryWriter(
        store,
        PendingWrites(pending_directory(home)),
        mode=settings.memory.write_approval,
        store_for=store_for,
    )
