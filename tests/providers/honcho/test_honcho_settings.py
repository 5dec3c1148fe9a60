"""Settings validation: unknown keys, literal secrets, missing key, bad values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("honcho")

from hermes_core.errors import ConfigError
from hermes_core.testing import make_host
from hermes_plugins.honcho.settings import HOSTED_BASE_URL, parse_settings

ENV = {"HONCHO_API_KEY": "hk-test-fake-key"}
SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


def test_defaults() -> None:
    settings = parse_settings({}, ENV)
    assert settings.workspace == "hermes"
    assert settings.ai_peer == "hermes"
    assert settings.peer_name == "user"
    assert settings.session_strategy == "per-session"
    assert settings.recall_mode == "hybrid"
    assert settings.base_url == HOSTED_BASE_URL
    assert settings.api_key_env == "HONCHO_API_KEY"
    assert settings.message_max_chars == 25_000
    assert settings.api_key == "hk-test-fake-key"
    assert "hk-test" not in repr(settings)


def test_unknown_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.honcho\.workspce: unknown setting"):
        parse_settings({"workspce": "x"}, ENV)


@pytest.mark.parametrize(
    "config",
    [{"api_key": SECRET}, {"workspace": SECRET}, {"api_key_env": SECRET}, {"peer_name": SECRET}],
)
def test_literal_secret_is_refused_without_echo(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(config, ENV)
    message = str(info.value)
    assert message.startswith("plugin_config.honcho.")
    assert SECRET not in message
    assert "environment variable" in message


def test_missing_key_for_hosted_api() -> None:
    with pytest.raises(ConfigError, match=r"api_key_env: the environment variable MY_KEY"):
        parse_settings({"api_key_env": "MY_KEY"}, {})


def test_self_hosted_needs_no_key() -> None:
    settings = parse_settings({"base_url": "http://127.0.0.1:8000/"}, {})
    assert settings.api_key is None
    assert settings.base_url == "http://127.0.0.1:8000"


def test_custom_key_variable() -> None:
    assert parse_settings({"api_key_env": "MY_KEY"}, {"MY_KEY": "abc"}).api_key == "abc"


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"session_strategy": "weekly"}, "session_strategy"),
        ({"recall_mode": "always"}, "recall_mode"),
        ({"context_tokens": "lots"}, "context_tokens"),
        ({"context_tokens": 10}, "context_tokens"),
        ({"message_max_chars": True}, "message_max_chars"),
        ({"workspace": "my workspace"}, "workspace"),
        ({"workspace": ""}, "workspace"),
        ({"base_url": "ftp://x"}, "base_url"),
        ({"timeout": 0}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
        ({"peer_name": "hermes"}, "peer_name"),
    ],
)
def test_bad_values_name_the_key(config: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError, match=rf"plugin_config\.honcho\.{key}: "):
        parse_settings(config, ENV)


def test_config_error_stops_a_real_host(tmp_path: Path, honcho_env: str) -> None:
    config = {"memory": {"provider": "honcho"}, "plugin_config": {"honcho": {"bogus": 1}}}
    with pytest.raises(ConfigError, match=r"plugin_config\.honcho\.bogus"):
        make_host(tmp_path, config, builtins=None)
