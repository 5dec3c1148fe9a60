"""PostgreSQL tests: each gets a fresh database on this machine's server (tests/support/pg.py),
and ``store``, a session store on it.

Without psycopg (the core-only test environment) this folder is not collected; where the
PostgreSQL tests must run (``HERMES_POSTGRES_REQUIRED=1``, tox's py3-all) a missing psycopg
is an error instead.
"""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("psycopg") is None:
    if os.environ.get("HERMES_POSTGRES_REQUIRED") == "1":
        raise RuntimeError(
            "HERMES_POSTGRES_REQUIRED=1 but psycopg is not installed: from the clone, "
            "pip install -e '.[postgres]'"
        )
    collect_ignore_glob = ["test_*.py"]
else:
    from collections.abc import Iterator

    import pytest
    from pg import pg_dsn

    from hermes_plugins.postgres.database import Database
    from hermes_plugins.postgres.sessions import PostgresSessionStore

    __all__ = ["pg_dsn", "store"]

    @pytest.fixture
    def store(pg_dsn: str) -> Iterator[PostgresSessionStore]:
        """A session store on the test's fresh database (closed after the test)."""
        opened = PostgresSessionStore(Database(pg_dsn, timeout=30))
        yield opened
        opened.close()
