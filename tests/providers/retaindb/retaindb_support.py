"""Shared by the RetainDB tests (a unique module name: ``conftest`` is ambiguous on sys.path)."""

from __future__ import annotations

from typing import Any

from fake_retaindb import FakeRetainDB

API_KEY_ENV = "RETAINDB_TEST_KEY"


def provider_config(fake: FakeRetainDB, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "base_url": fake.url,
        "api_key_env": API_KEY_ENV,
        "timeout": 1.0,
        "recall_timeout": 0.5,
        "backoff_base": 0.02,
        "backoff_cap": 0.1,
        "drain_timeout": 2.0,
    }
    config.update(overrides)
    return config
