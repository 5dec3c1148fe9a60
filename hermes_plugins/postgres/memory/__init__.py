"""``memory.backend: postgres``: MEMORY.md / USER.md and their staged writes as rows.

Rows per (user, target) with a version column, so several hosts can write one user's memory
at once and lose nothing; the same limits, threat scans, drift and approval rules as the
files, since the store decides and these rows only keep (see ``docs/memory.md``).
"""

from __future__ import annotations

from hermes_plugins.postgres.memory.documents import PostgresMemoryDocuments
from hermes_plugins.postgres.memory.pending import PostgresPendingWrites

__all__ = ["PostgresMemoryDocuments", "PostgresPendingWrites"]
