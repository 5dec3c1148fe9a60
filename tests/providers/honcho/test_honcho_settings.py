"""Settings validation: unknown keys, literal secrets, missing key, bad values, and the key
from ``api_key: {$env: NAME}`` through real config loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("honcho")

from fake_honcho import FakeHoncho

from hermes_core.config import load_config
from hermes_core.errors import ConfigError
from hermes_core.host import Hermes
from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.honcho import HonchoProvider
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
    [
        {"token": SECRET},
        {"key": SECRET},
        {"workspace": SECRET},
        {"api_key_env": SECRET},
        {"peer_name": SECRET},
    ],
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


# --- api_key: {$env: NAME}, through the real config loader ---------------------------------

KEY = ENV["HONCHO_API_KEY"]  # the key the loopback fake accepts


def honcho_host(tmp_path: Path, section: dict[str, Any], environ: dict[str, str]) -> Hermes:
    config = {"memory": {"provider": "honcho"}, "plugin_config": {"honcho": section}}
    return make_host(tmp_path, config, builtins=None, environ=environ)


def test_api_key_from_an_env_reference_reaches_honcho(
    tmp_path: Path, fake: FakeHoncho, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HONCHO_API_KEY", raising=False)
    section = {
        "base_url": fake.base_url,
        "workspace": "ws",
        "timeout": 1.0,
        "max_retries": 0,
        "api_key": {"$env": "TEAM_HONCHO_KEY"},
    }
    host = honcho_host(tmp_path, section, {"TEAM_HONCHO_KEY": KEY})
    try:
        provider = host.plugins.get_plugin("honcho")
        assert isinstance(provider, HonchoProvider)
        assert provider.settings.api_key == KEY and KEY not in repr(provider.settings)
        turn = Turn(user="I like green tea", assistant="Noted.")
        provider.memory_sync(turn=turn, session=SessionInfo("s1", user_id="alice"))
        assert fake.requests
        assert {r.headers["Authorization"] for r in fake.requests} == {f"Bearer {KEY}"}
    finally:
        host.close()


def test_api_key_reference_for_the_hosted_api(tmp_path: Path) -> None:
    config = {"plugin_config": {"honcho": {"api_key": {"$env": "TEAM_HONCHO_KEY"}}}}
    loaded = load_config(config, home=tmp_path, environ={"TEAM_HONCHO_KEY": KEY})
    settings = parse_settings(loaded.plugin_section("honcho"), {})
    assert settings.hosted and settings.api_key == KEY


def test_api_key_reference_to_an_unset_variable_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", KEY)  # the default variable does not stand in
    with pytest.raises(ConfigError, match=r"plugin_config\.honcho\.api_key: .*TEAM_HONCHO_KEY"):
        honcho_host(tmp_path, {"api_key": {"$env": "TEAM_HONCHO_KEY"}}, {})


def test_api_key_reference_to_an_empty_variable_is_refused(tmp_path: Path) -> None:
    section = {"base_url": "http://127.0.0.1:9", "api_key": {"$env": "TEAM_HONCHO_KEY"}}
    with pytest.raises(ConfigError, match=r"plugin_config\.honcho\.api_key: .*not set or empty"):
        honcho_host(tmp_path, section, {"TEAM_HONCHO_KEY": ""})


def test_api_key_and_api_key_env_together_are_refused(tmp_path: Path) -> None:
    section = {"api_key": {"$env": "TEAM_HONCHO_KEY"}, "api_key_env": "HONCHO_API_KEY"}
    with pytest.raises(ConfigError, match=r"plugin_config\.honcho: api_key and api_key_env") as e:
        honcho_host(tmp_path, section, {"TEAM_HONCHO_KEY": KEY, "HONCHO_API_KEY": KEY})
    assert KEY not in str(e.value)


def test_a_literal_api_key_in_the_config_is_refused_without_echo(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.honcho\.api_key: secrets") as e:
        honcho_host(tmp_path, {"api_key": "hk-literal-in-the-file"}, {})
    assert "hk-literal" not in str(e.value)
