"""The PostgreSQL rows pass the public memory conformance kit on the real server: each test
gets a fresh database, and every documents object the kit opens has a pool of its own (as
another host would). "By other means" is an operator's SQL, and the copies a drift or a reset
kept are the rows of ``hermes.memory_history``. Below the kit: what only a whole host on
PostgreSQL shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from hermes_core import Hermes
from hermes_core.memory.approval import WriteRequest
from hermes_core.memory.documents import MemoryDocuments, Scope
from hermes_core.memory.home import open_store, open_writer
from hermes_core.testing import MemoryDocumentsConformance
from hermes_core.testing.memory_conformance import KeptCopies, PlantText
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.memory import PostgresMemoryDocuments


class TestPostgresMemoryConformance(MemoryDocumentsConformance):
    @pytest.fixture
    def documents_factory(self, pg_dsn: str) -> Callable[[], MemoryDocuments]:
        return lambda: PostgresMemoryDocuments(Database(pg_dsn, pool_size=2))

    @pytest.fixture
    def plant_text(self, pg_dsn: str) -> PlantText:
        def plant(target: str, scope: Scope, text: str) -> None:
            with psycopg.connect(pg_dsn, autocommit=True) as conn:
                conn.execute(
                    "INSERT INTO hermes.memory_blocks (scope, target, text) VALUES (%s, %s, %s) "
                    "ON CONFLICT (scope, target) DO UPDATE SET text = excluded.text",
                    (scope or "", target, text),
                )

        return plant

    @pytest.fixture
    def kept_copies(self, pg_dsn: str) -> KeptCopies:
        def copies(target: str, scope: Scope) -> list[str]:
            with psycopg.connect(pg_dsn, autocommit=True) as conn:
                rows = conn.execute(
                    "SELECT text FROM hermes.memory_history WHERE scope = %s AND target = %s "
                    "ORDER BY id",
                    (scope or "", target),
                ).fetchall()
            return [row[0] for row in rows]

        return copies


def test_approval_writes_to_the_scope_it_was_staged_for(pg_dsn: str, tmp_path: Path) -> None:
    """Review finding: home A keeps MEMORY.md per user and stages alice's write; home B, on
    the same database but with MEMORY.md shared, must not approve it into the shared block
    (the kit checks the rule on bare documents; this is two whole hosts and their settings)."""

    def host(name: str, per_user: bool) -> Hermes:
        memory = {"backend": "postgres", "write_approval": "stage", "per_user_memory": per_user}
        config = {"sessions": {"backend": "postgres", "dsn": pg_dsn}, "memory": memory}
        return Hermes.from_config(config, home=tmp_path / name)

    with host("a", True) as a, host("b", False) as b:
        staging = open_writer(a.home, a.settings, user_id="alice", documents=a.memory_documents())
        staged = staging.write(WriteRequest("add", "memory", "alice banks with Acme"))
        approver = open_writer(b.home, b.settings, user_id=None, documents=b.memory_documents())
        refused = approver.approve(staged["pending_id"])
        assert refused["success"] is False and refused["reason"] == "scope"
        bob = open_store(b.home, b.settings, user_id="bob", documents=b.memory_documents())
        assert bob.entries("memory") == []
        applied = staging.approve(staged["pending_id"])  # where the setting matches
        assert applied["success"]
        alice = open_store(a.home, a.settings, user_id="alice", documents=a.memory_documents())
        assert alice.entries("memory") == ["alice banks with Acme"]
        assert bob.entries("memory") == []
