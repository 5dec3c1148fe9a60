"""Settings validation: every mistake names plugin_config.retaindb.<key> and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from hermes_core.errors import ConfigError
from hermes_core.testing import plugin_context
from hermes_plugins.retaindb import RetainDBProvider, RetainDBSettings
from hermes_plugins.retaindb.settings import parse_settings


def test_defaults() -> None:
    settings = parse_settings({})
    assert settings == RetainDBSettings()
    assert settings.base_url == "https://api.retaindb.com"
    assert settings.api_key_env == "RETAINDB_API_KEY"


def test_values_are_typed_and_trailing_slash_dropped() -> None:
    settings = parse_settings({"base_url": "http://127.0.0.1:9/", "timeout": 3, "top_k": 4})
    assert settings.base_url == "http://127.0.0.1:9"
    assert settings.timeout == 3.0 and isinstance(settings.timeout, float)
    assert settings.top_k == 4


@pytest.mark.parametrize(
    ("config", "key", "words"),
    [
        ({"projcet": "x"}, "projcet", "unknown setting"),
        ({"api_key": "rdb_live_abcdefabcdef"}, "api_key", "api_key_env"),
        ({"project": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"}, "project", "secret"),
        ({"api_key_env": "sk-abcdefghijklmnopqrstuvwx"}, "api_key_env", "secret"),
        ({"api_key_env": "my key"}, "api_key_env", "environment variable"),
        ({"timeout": "fast"}, "timeout", "number"),
        ({"timeout": 0}, "timeout", "positive"),
        ({"timeout": True}, "timeout", "number"),
        ({"max_attempts": 0}, "max_attempts", "at least 1"),
        ({"top_k": 2.5}, "top_k", "whole number"),
        ({"base_url": "ftp://x"}, "base_url", "http(s) URL"),
        ({"base_url": "https://u:p@h.example"}, "base_url", "api_key_env"),
        ({"project": ""}, "project", "non-empty"),
        ({"drain_timeout": -1}, "drain_timeout", "0 or more"),
        ({"backoff_base": 10, "backoff_cap": 1}, "backoff_cap", "below"),
    ],
)
def test_bad_settings_name_the_key(config: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(config)
    message = str(info.value)
    assert f"plugin_config.retaindb.{key}" in message
    assert words in message
    for value in config.values():
        if isinstance(value, str) and len(value) > 12:
            assert value not in message  # a pasted key is never echoed back


def test_missing_api_key_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RETAINDB_API_KEY", raising=False)
    with pytest.raises(
        ConfigError, match=r"plugin_config\.retaindb\.api_key_env.*RETAINDB_API_KEY"
    ):
        RetainDBProvider(plugin_context("retaindb", tmp_path, {}))
    assert not (tmp_path / "retaindb_queue.db").exists()
