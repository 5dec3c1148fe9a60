"""Running memory's work on the shared pool, with every failure as a memory error.

Why: the store answers a model or a person with a refusal it can act on (``unavailable``,
``unreadable``) and never an exception from a driver; and a message about the database never
carries its password (the pool's errors are safe already, a statement's are redacted here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import psycopg

from hermes_core.errors import MemoryStoreError
from hermes_core.memory.documents import StorageUnavailable
from hermes_core.redact import redact
from hermes_plugins.postgres.database import Database, DatabaseUnavailable

__all__ = ["Retry", "run"]

T = TypeVar("T")


class Retry(Exception):
    """Raised inside work to roll it back and have the caller read and decide again."""


def _why(exc: BaseException) -> str:
    return redact(" ".join(str(exc).split()) or type(exc).__name__)[:300]


def run(database: Database, work: Callable[[psycopg.Connection[Any]], T], *, idempotent: bool) -> T:
    """``work(conn)`` in one transaction (see :meth:`Database.run`); :class:`Retry` and
    memory errors pass through, everything else becomes :class:`StorageUnavailable`."""
    try:
        return database.run(work, idempotent=idempotent)
    except (Retry, MemoryStoreError):
        raise
    except DatabaseUnavailable as exc:
        raise StorageUnavailable(f"memory is unavailable: {exc}") from None
    except psycopg.Error as exc:
        raise StorageUnavailable(
            f"PostgreSQL at {database.where} refused a memory operation ({_why(exc)}); "
            "nothing was changed"
        ) from None
