"""Fixtures for the Honcho provider tests: the loopback fake and provider/host factories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_honcho import FakeHoncho

API_KEY = "hk-test-fake-key"


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    server = FakeHoncho(api_key=API_KEY).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def honcho_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake key in the default variable; the real one (if any) never reaches a test."""
    monkeypatch.setenv("HONCHO_API_KEY", API_KEY)
    monkeypatch.delenv("HONCHO_URL", raising=False)
    monkeypatch.delenv("HONCHO_WORKSPACE_ID", raising=False)
    return API_KEY


@pytest.fixture
def honcho_config(fake: FakeHoncho, honcho_env: str) -> dict[str, Any]:
    """Settings pointing at the fake, with short timeouts and no retries."""
    return {"base_url": fake.base_url, "workspace": "ws", "timeout": 1.0, "max_retries": 0}


@pytest.fixture
def make_provider(tmp_path: Path, honcho_config: dict[str, Any]) -> Iterator[Callable[..., Any]]:
    """``make_provider(**overrides)`` builds a HonchoProvider on the fake; shut down after."""
    from hermes_core.testing import plugin_context
    from hermes_plugins.honcho import HonchoProvider

    built: list[Any] = []

    def make(**overrides: Any) -> Any:
        provider = HonchoProvider(
            plugin_context("honcho", tmp_path, {**honcho_config, **overrides})
        )
        built.append(provider)
        return provider

    yield make
    for provider in built:
        provider.memory_shutdown()
