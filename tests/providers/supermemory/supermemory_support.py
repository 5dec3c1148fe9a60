"""Helpers shared by the Supermemory tests (a unique module name: conftest.py is not importable
reliably when several test folders have one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_supermemory import FakeServer

from hermes_core.host import Hermes
from hermes_core.testing import make_host

ENV = "HERMES_TEST_SUPERMEMORY_KEY"


def provider_config(fake: FakeServer, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"api_key_env": ENV, "base_url": fake.base_url, "timeout": 1.0}
    config.update(overrides)
    return config


def host_for(home: Path, fake: FakeServer, **overrides: Any) -> Hermes:
    return make_host(
        home,
        {
            "memory": {"provider": "supermemory", "prefetch_timeout": 1.0},
            "plugin_config": {"supermemory": provider_config(fake, **overrides)},
        },
        builtins=None,
    )
