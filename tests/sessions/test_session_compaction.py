"""Compaction commits on the SQLite store: the cases both built-in stores share (what a child
inherits, each refusal in its words: tests/support/store_cases.py). In place and as a child,
all or nothing and archived rows kept are the conformance kit's checks
(test_store_conformance.py, with FTS5 and with the LIKE fallback)."""

from __future__ import annotations

from store_cases import CompactionCases


class TestSQLiteCompactionCases(CompactionCases):
    """The shared cases, on the ``store`` fixture of conftest.py."""
