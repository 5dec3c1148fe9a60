"""The built-in session store: one SQLite file with WAL, FTS5 search and a LIKE fallback.

Modules, one idea each: :mod:`.schema` (tables, version, migrations), :mod:`.fts` (the
full-text index and its triggers), :mod:`.connection` (file, connections, transactions,
retries), :mod:`.rows` (message <-> row), :mod:`.compaction` (the compaction commit),
:mod:`.search` (queries, snippets, context) and :mod:`.store` (:class:`SQLiteSessionStore`).
"""

from __future__ import annotations

from hermes_core.sessions.sqlite.connection import RetryPolicy
from hermes_core.sessions.sqlite.store import SQLiteSessionStore

__all__ = ["RetryPolicy", "SQLiteSessionStore"]
