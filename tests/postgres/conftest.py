"""PostgreSQL tests: each gets a fresh database on this machine's server (tests/support/pg.py)."""

from __future__ import annotations

from pg import pg_dsn

__all__ = ["pg_dsn"]
