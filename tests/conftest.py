"""Shared fixtures; the plugin-author fixtures come from hermes_core.testing itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["hermes_core.testing"]

# Property tests assert what happened, never how fast: no per-example deadline and no "too
# slow" health check, which fail on a busy machine without any behaviour having changed.
settings.register_profile("hermes", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("hermes")

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


@pytest.fixture(autouse=True)
def _restore_logger_levels() -> Iterator[None]:
    """The command line quietens plugin-load warnings by raising a logger's level for its one
    run; in a test process that would leak into later tests' ``caplog``."""
    import logging

    names = ["hermes_context", "hermes_context.plugins", "hermes_context.memory"]
    levels = {name: logging.getLogger(name).level for name in names}
    yield
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
