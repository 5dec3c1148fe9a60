"""Settings validation: every mistake names plugin_config.retaindb.<key> and what to do; the
key from ``api_key: {$env: NAME}`` through real config loading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from fake_retaindb import FakeRetainDB
from retaindb_support import API_KEY_ENV, provider_config

from hermes_core.errors import ConfigError
from hermes_core.host import Hermes
from hermes_core.testing import make_host, plugin_context
from hermes_core.types import SessionInfo
from hermes_plugins.retaindb import RetainDBProvider, RetainDBSettings
from hermes_plugins.retaindb.settings import parse_settings, read_api_key


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
        ({"token": "rdb_live_abcdefabcdef"}, "token", "api_key_env"),
        ({"key": "rdb_live_abcdefabcdef"}, "key", "{$env: NAME}"),
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


# --- api_key: {$env: NAME}, through the real config loader ---------------------------------


def retaindb_host(tmp_path: Path, section: dict[str, Any], environ: dict[str, str]) -> Hermes:
    config = {"memory": {"provider": "retaindb"}, "plugin_config": {"retaindb": section}}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return make_host(home, config, builtins=None, environ=environ)


def referenced(fake: FakeRetainDB) -> dict[str, Any]:
    """The usual test section with the key as ``api_key: {$env: TEAM_RETAINDB_KEY}``."""
    section = provider_config(fake, api_key={"$env": "TEAM_RETAINDB_KEY"})
    del section["api_key_env"]
    return section


def test_api_key_from_an_env_reference_reaches_retaindb(
    tmp_path: Path, fake: FakeRetainDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("RETAINDB_API_KEY", API_KEY_ENV):
        monkeypatch.delenv(name, raising=False)  # only the reference can supply the key
    host = retaindb_host(tmp_path, referenced(fake), {"TEAM_RETAINDB_KEY": fake.api_key})
    try:
        provider = host.plugins.get_plugin("retaindb")
        assert isinstance(provider, RetainDBProvider)
        assert read_api_key(provider.settings, {}) == fake.api_key
        assert fake.api_key not in repr(provider.settings)
        answer = provider.memory_handle_tool(
            session=SessionInfo("s", user_id="alice"),
            name="retaindb_remember",
            arguments={"content": "Alice's cat is named Miso"},
        )
        assert answer is not None and json.loads(answer)["ok"] is True
        (post,) = fake.requests_to("POST", "/v1/memories")
        assert post.headers["authorization"] == f"Bearer {fake.api_key}"
    finally:
        host.close()


def test_api_key_reference_to_an_unset_variable_is_named(
    tmp_path: Path, fake: FakeRetainDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETAINDB_API_KEY", fake.api_key)  # the default does not stand in
    with pytest.raises(ConfigError, match=r"plugin_config\.retaindb\.api_key: .*TEAM_RETAINDB_KEY"):
        retaindb_host(tmp_path, referenced(fake), {})
    assert not (tmp_path / "home" / "retaindb_queue.db").exists()


def test_api_key_reference_to_an_empty_variable_is_refused(
    tmp_path: Path, fake: FakeRetainDB
) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.retaindb\.api_key: .*not set or empty"):
        retaindb_host(tmp_path, referenced(fake), {"TEAM_RETAINDB_KEY": ""})
    assert not (tmp_path / "home" / "retaindb_queue.db").exists()


def test_api_key_and_api_key_env_together_are_refused(tmp_path: Path, fake: FakeRetainDB) -> None:
    section = {**referenced(fake), "api_key_env": "RETAINDB_API_KEY"}
    environ = {"TEAM_RETAINDB_KEY": fake.api_key, "RETAINDB_API_KEY": fake.api_key}
    with pytest.raises(ConfigError, match=r"plugin_config\.retaindb: api_key and api_key_env") as e:
        retaindb_host(tmp_path, section, environ)
    assert fake.api_key not in str(e.value)


def test_a_literal_api_key_in_the_config_is_refused_without_echo(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.retaindb\.api_key: secrets") as e:
        retaindb_host(tmp_path, {"api_key": "rdb-literal-in-the-file"}, {})
    assert "rdb-literal" not in str(e.value)
