"""The plugin object: answers ``session_store``, ``memory_documents`` and ``memory_forget``
for ``postgres``.

One :class:`~hermes_plugins.postgres.database.Database` (one pool) serves both, opened on
first use; each user of it releases it when closed, the last one closes the pool.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from hermes_core.markers import hookimpl
from hermes_core.plugins import PluginContext
from hermes_core.sessions.retention import upkeep_on_open
from hermes_plugins.postgres.database import Database, dsn_from


class PostgresBackend:
    """Built-in ``postgres`` storage backend (the ``postgres`` extra)."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self._database: Database | None = None
        self._memory: Any | None = None
        self._lock = threading.Lock()

    def database(self) -> Database:
        """The shared pool, opened on first use; the caller owns one :meth:`Database.release`."""
        with self._lock:
            if self._database is None:
                settings = self.context.settings.sessions
                self._database = Database(
                    dsn_from(settings), pool_size=settings.pool_size, timeout=settings.timeout
                )  # holds the plugin's own reference, released at shutdown
            return self._database.acquire()

    @hookimpl
    def session_store(self) -> Any | None:
        if self.context.settings.sessions.backend != "postgres":
            return None
        from hermes_plugins.postgres.sessions import PostgresSessionStore

        store = PostgresSessionStore(self.database())
        upkeep_on_open(store, self.context.settings.sessions.retention)
        return store

    @hookimpl
    def memory_documents(self, home: Path) -> Any | None:
        if self.context.settings.memory.backend != "postgres":
            return None
        from hermes_plugins.postgres.memory import PostgresMemoryDocuments

        database = self.database()  # before the lock: opening it takes the lock too
        with self._lock:
            if self._memory is None:  # one for every home: the rows are keyed by user
                self._memory = PostgresMemoryDocuments(database)
                return self._memory
            memory = self._memory
        database.release()  # another thread made it first
        return memory

    @hookimpl
    def memory_forget(self, user_id: str | None) -> dict[str, int] | None:
        """The person's memory rows, when memory is kept here (see ``forget_memory``)."""
        if self.context.settings.memory.backend != "postgres":
            return None
        from hermes_plugins.postgres.forget_memory import forget_memory_rows

        database = self.database()
        try:
            return forget_memory_rows(database, user_id)
        finally:
            database.release()

    @hookimpl
    def memory_shutdown(self) -> None:
        with self._lock:
            database, self._database = self._database, None
            memory, self._memory = self._memory, None
        if memory is not None:
            memory.close()  # releases its reference to the pool
        if database is not None:
            database.release()
