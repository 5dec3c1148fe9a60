"""Fixtures for the RetainDB provider tests: a loopback fake and providers pointed at it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_retaindb import FakeRetainDB
from retaindb_support import API_KEY_ENV, provider_config

from hermes_core.testing import plugin_context
from hermes_plugins.retaindb import RetainDBProvider


@pytest.fixture
def fake() -> Iterator[FakeRetainDB]:
    server = FakeRetainDB().start()
    yield server
    server.stop()


@pytest.fixture
def api_key(fake: FakeRetainDB, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(API_KEY_ENV, fake.api_key)
    return fake.api_key


@pytest.fixture
def make_provider(
    fake: FakeRetainDB, api_key: str, tmp_path: Path
) -> Iterator[Callable[..., RetainDBProvider]]:
    """``make_provider(**settings)``: a provider on the fake in ``tmp_path/home``, closed after."""
    made: list[RetainDBProvider] = []

    def make(
        home: Path | None = None, start_writer: bool = True, **overrides: Any
    ) -> RetainDBProvider:
        context = plugin_context(
            "retaindb", home or tmp_path / "home", provider_config(fake, **overrides)
        )
        provider = RetainDBProvider(context, start_writer=start_writer)
        made.append(provider)
        return provider

    yield make
    fake.heal()
    for provider in made:
        provider.close()
