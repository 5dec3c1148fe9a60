"""Fixtures for the Supermemory provider tests: a loopback fake and the test API key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_supermemory import API_KEY, FakeServer
from supermemory_support import ENV


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer().start()
    yield server
    server.stop()


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, API_KEY)
    return API_KEY
