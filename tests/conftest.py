"""Shared fixtures; the plugin-author fixtures come from hermes_core.testing itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["hermes_core.testing"]

DATA = Path(__file__).parent / "data"


@pytest.fixture
def transcripts_dir() -> Path:
    return DATA / "transcripts"


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh $HERMES_HOME with no HERMES__ overrides leaking in from the environment."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("HERMES__"):
            monkeypatch.delenv(name)
    return home
