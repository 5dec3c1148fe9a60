"""Fixtures for the Mem0 provider tests: the loopback fake and provider/host factories.

Mem0 reads ``MEM0_TELEMETRY`` and ``MEM0_DIR`` when it is first imported, so both are set
here, at import time, before any test module imports the SDK.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="hermes-mem0-dir-"))

from fake_mem0 import FakeMem0
from mem0_support import API_KEY, oss_config


@pytest.fixture
def fake() -> Iterator[FakeMem0]:
    server = FakeMem0(api_key=API_KEY).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mem0_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEM0_API_KEY", API_KEY)
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-dir"))


@pytest.fixture
def platform_config(fake: FakeMem0, mem0_env: None) -> dict[str, Any]:
    return {"mode": "platform", "host": fake.url, "timeout": 0.5, "infer": False}


@pytest.fixture
def local_config(fake: FakeMem0, tmp_path: Path, mem0_env: None) -> dict[str, Any]:
    return {
        "mode": "oss",
        "oss_config": oss_config(tmp_path, fake.url),
        "infer": False,
        "timeout": 0.5,
        "user_id": "solo",
    }


@pytest.fixture
def build_provider(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Build providers straight from a context; each is shut down after the test."""
    from hermes_core.testing import plugin_context
    from hermes_plugins.mem0 import Mem0Provider

    built: list[Any] = []

    def build(config: dict[str, Any], **kwargs: Any) -> Any:
        provider = Mem0Provider(plugin_context("mem0", tmp_path, config), **kwargs)
        built.append(provider)
        return provider

    yield build
    for provider in built:
        provider.memory_shutdown()
