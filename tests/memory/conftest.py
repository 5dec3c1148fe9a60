"""Fixtures for the file-memory tests: a store on a temp directory with a tiny scanner.

The scanner here flags the word ``EVIL`` so store behaviour is tested apart from the real
threat patterns (which have their own tests, and are used end to end in test_cli_memory).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_support import toy_scanner

from hermes_core.memory import MemoryStore


@pytest.fixture
def memdir(tmp_path: Path) -> Path:
    return tmp_path / "memories"


@pytest.fixture
def store(memdir: Path) -> MemoryStore:
    return MemoryStore(memdir, scanner=toy_scanner)
