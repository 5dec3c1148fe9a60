"""Fixtures for the @-reference tests: a workspace, a fake home, a web server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from reference_support import WebServer


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of our own: ``Path.home()`` (which the code falls back to) and
    ``HOME`` both point at it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home.resolve()


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server
