"""The session store on PostgreSQL: spec 40 §1 for many hosts sharing one database.

Modules, one idea each: :mod:`.schema` (the ``hermes`` schema, version, migrations, the CJK
index), :mod:`.rows` (values <-> rows, the NUL-safe text escape, shared lookups),
:mod:`.compaction` (row inserts and the compaction commit), :mod:`.search` (tsvector and
ILIKE search, ranking, snippets) and :mod:`.store` (:class:`PostgresSessionStore`). The message
encoding is the SQLite store's (:mod:`hermes_core.sessions.sqlite.rows`), reused.
"""

from __future__ import annotations

from hermes_plugins.postgres.sessions.store import PostgresSessionStore

__all__ = ["PostgresSessionStore"]
