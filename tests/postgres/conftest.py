"""PostgreSQL tests: each gets a fresh database on this machine's server (tests/support/pg.py).

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
            "HERMES_POSTGRES_REQUIRED=1 but psycopg is not installed: pip install "
            "'hermes-context[postgres]'"
        )
    collect_ignore_glob = ["test_*.py"]
else:
    from pg import pg_dsn

    __all__ = ["pg_dsn"]
