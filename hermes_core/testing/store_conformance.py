"""The session-store conformance suite: what every ``SessionStore`` backend must do.

A backend (the built-in SQLite store, the PostgreSQL plugin, yours) is held to the contract of
:class:`hermes_core.sessions.SessionStore` (spec 40 §1) through its public methods only, so
the suite runs unchanged against any of them. Subclass :class:`SessionStoreConformance` in
your backend's tests (the class name must start with ``Test`` for pytest to collect it) and
supply ``store_factory``: a callable that returns a *new* store object connected to the same
fresh, empty data each time it is called (the suite opens a second instance to check
durability after close, stale writers and concurrent writers). The suite closes every store
it opened.

Example::

    class TestMyStoreConformance(SessionStoreConformance):
        @pytest.fixture
        def store_factory(self, tmp_path):
            dsn = make_empty_database(tmp_path)  # fresh data for each test
            return lambda: MyStore(dsn)

The checks live in six mixins (sessions and records, messages and compaction, an undo's
restore, retention, search, concurrency), each method one promise with a message that says which one
was broken; the messages, queries and helpers they use are in
:mod:`hermes_core.testing.store_kit`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from hermes_core.sessions.store import SessionStore
from hermes_core.testing.store_checks_messages import MessageChecks
from hermes_core.testing.store_checks_restore import RestoreChecks
from hermes_core.testing.store_checks_retention import RetentionChecks
from hermes_core.testing.store_checks_search import ConcurrencyChecks, SearchChecks
from hermes_core.testing.store_checks_sessions import SessionChecks
from hermes_core.testing.store_kit import (
    HOSTILE_QUERIES,
    ROUND_TRIP_MESSAGES,
    OpenStore,
    assistant,
    call,
    tool_result,
    user,
)

__all__ = [
    "HOSTILE_QUERIES",
    "ROUND_TRIP_MESSAGES",
    "OpenStore",
    "SessionStoreConformance",
    "assistant",
    "call",
    "tool_result",
    "user",
]


class SessionStoreConformance(
    SessionChecks, MessageChecks, RestoreChecks, RetentionChecks, SearchChecks, ConcurrencyChecks
):
    """Inherit and provide ``store_factory``; the inherited ``test_*`` methods run.

    Every check takes ``store`` (a fresh store) and/or ``open_store`` (opens another instance
    on the same data), so a test can also call one directly with stores of its own.
    """

    #: threads (and appends per thread) in the concurrency checks
    threads: int = 6
    appends_per_thread: int = 25

    @pytest.fixture
    def store_factory(self) -> Callable[[], SessionStore]:
        """Returns a callable opening a new store on this test's fresh data (override this)."""
        pytest.fail("override the store_factory fixture in your SessionStoreConformance subclass")

    @pytest.fixture
    def open_store(self, store_factory: Callable[[], SessionStore]) -> Iterator[OpenStore]:
        """``store_factory`` with every store it opened closed after the test."""
        opened: list[SessionStore] = []

        def open_one() -> SessionStore:
            store = store_factory()
            opened.append(store)
            return store

        yield open_one
        for store in reversed(opened):
            store.close()

    @pytest.fixture
    def store(self, open_store: OpenStore) -> SessionStore:
        """The store under test, fresh and empty."""
        return open_store()
