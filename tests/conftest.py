"""Shared fixtures; the plugin-author fixtures come from hermes_core.testing itself."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["hermes_core.testing"]

DATA = Path(__file__).parent / "data"


@pytest.fixture
def transcripts_dir() -> Path:
    return DATA / "transcripts"
