"""The memory audit log as rows of ``hermes.memory_audit``, shared by every host.

Why rows: when the memory text lives in PostgreSQL, so that several hosts share one user's
memory, a log kept in one host's home would tell only part of the story. Each row keeps the
whole line (``record``) with its user (``scope``, ``''`` for none) and event beside it for
queries. Lines are checked when read back, as the files' are: a row an operator edited is
reported and skipped, never trusted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from psycopg.types.json import Jsonb

from hermes_core.provenance.audit_log import parse_line
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory.access import run
from hermes_plugins.postgres.memory.schema import AUDIT

__all__ = ["PostgresAuditLog"]


class PostgresAuditLog:
    """Appends to and reads ``hermes.memory_audit`` of ``database``."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def append(self, line: Mapping[str, Any]) -> None:
        # JSON text first: a lone surrogate survives as an escape, as in a staged record
        data = json.loads(json.dumps(line, ensure_ascii=True, default=str))
        user = line.get("user_id")
        query = f"INSERT INTO {AUDIT} (scope, event, record) VALUES (%s, %s, %s)"
        params = (user if isinstance(user, str) else "", str(line.get("event")), Jsonb(data))
        run(self.database, lambda conn: conn.execute(query, params), idempotent=False)

    def read(self) -> tuple[list[dict[str, Any]], list[str]]:
        query = f"SELECT id, record FROM {AUDIT} ORDER BY id"
        rows = run(self.database, lambda conn: conn.execute(query).fetchall(), idempotent=True)
        lines: list[dict[str, Any]] = []
        problems: list[str] = []
        for row_id, record in rows:
            parsed = parse_line(json.dumps(record))
            if isinstance(parsed, str):
                problems.append(f"{AUDIT} row {row_id}: {parsed}; skipped")
            else:
                lines.append(parsed)
        return lines, problems
