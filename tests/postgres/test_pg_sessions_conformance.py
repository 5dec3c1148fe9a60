"""The PostgreSQL store passes the public session-store conformance kit, on the real server:
each test gets a fresh database, and every store the kit opens has a pool of its own (as
another host would)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_core.sessions.store import SessionStore
from hermes_core.testing import SessionStoreConformance
from hermes_plugins.postgres.database import Database
from hermes_plugins.postgres.sessions import PostgresSessionStore


class TestPostgresStoreConformance(SessionStoreConformance):
    @pytest.fixture
    def store_factory(self, pg_dsn: str) -> Callable[[], SessionStore]:
        return lambda: PostgresSessionStore(Database(pg_dsn))
