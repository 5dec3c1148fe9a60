"""Settings validation: unknown keys, literal secrets, missing environment variables, and the
key from ``api_key: {$env: NAME}`` through real config loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mem0")

from fake_mem0 import FakeMem0
from mem0_support import API_KEY

from hermes_core.errors import ConfigError
from hermes_core.host import Hermes
from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.mem0 import Mem0Provider
from hermes_plugins.mem0.settings import parse_settings

ENV = {"MEM0_API_KEY": "m0-anything"}


def test_defaults() -> None:
    settings = parse_settings({}, ENV)
    assert (settings.mode, settings.top_k, settings.infer) == ("platform", 10, True)
    assert settings.user_id == "hermes-user" and settings.api_key == "m0-anything"
    assert "m0-anything" not in repr(settings)


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ({"colour": "teal"}, "plugin_config.mem0.colour: unknown key"),
        ({"token": "m0-abc"}, "plugin_config.mem0.token: secrets are not written"),
        ({"key": "m0-abc"}, "plugin_config.mem0.key: secrets are not written"),
        ({"host": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"}, "looks like a secret"),
        ({"mode": "cloud"}, "plugin_config.mem0.mode"),
        ({"top_k": 0}, "plugin_config.mem0.top_k: must be at least 1"),
        ({"top_k": "ten"}, "plugin_config.mem0.top_k"),
        ({"infer": "yes"}, "plugin_config.mem0.infer"),
        ({"user_id": "two words"}, "plugin_config.mem0.user_id"),
        ({"api_key_env": "not a name"}, "plugin_config.mem0.api_key_env"),
        ({"mode": "oss"}, "plugin_config.mem0.oss_config"),
        ({"oss_config": {"vector_store": {}}}, "only used with mode: oss"),
    ],
)
def test_bad_settings_name_the_key(config: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError, match=None) as caught:
        parse_settings(config, ENV)
    assert needle in str(caught.value)


def test_missing_env_var_is_named() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings({"api_key_env": "MY_MEM0_KEY"}, {})
    assert "MY_MEM0_KEY is not set" in str(caught.value)


def test_oss_mode_needs_no_api_key() -> None:
    settings = parse_settings({"mode": "oss", "oss_config": {"version": "v1.1"}}, {})
    assert settings.api_key is None and settings.mode == "oss"


# --- api_key: {$env: NAME}, through the real config loader ---------------------------------


def mem0_host(tmp_path: Path, section: dict[str, Any], environ: dict[str, str]) -> Hermes:
    config = {"memory": {"provider": "mem0"}, "plugin_config": {"mem0": section}}
    return make_host(tmp_path / "home", config, builtins=None, environ=environ)


def test_api_key_from_an_env_reference_reaches_the_platform(
    tmp_path: Path, fake: FakeMem0, mem0_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEM0_API_KEY")  # only the reference can supply the key
    section = {
        "mode": "platform",
        "host": fake.url,
        "timeout": 0.5,
        "infer": False,
        "api_key": {"$env": "TEAM_MEM0_KEY"},
    }
    host = mem0_host(tmp_path, section, {"TEAM_MEM0_KEY": API_KEY})
    try:
        provider = host.plugins.get_plugin("mem0")
        assert isinstance(provider, Mem0Provider)
        assert provider.settings.api_key == API_KEY and API_KEY not in repr(provider.settings)
        provider.memory_sync(Turn("I keep bees", "Noted."), SessionInfo("s", "alice"))
        assert fake.paths() == ["/v1/ping/", "/v3/memories/add/"]
        assert {r.headers["Authorization"] for r in fake.requests} == {f"Token {API_KEY}"}
    finally:
        host.close()


def test_api_key_reference_to_an_unset_variable_is_named(tmp_path: Path, mem0_env: None) -> None:
    # MEM0_API_KEY is set (mem0_env): the default variable does not stand in
    with pytest.raises(ConfigError, match=r"plugin_config\.mem0\.api_key: .*TEAM_MEM0_KEY"):
        mem0_host(tmp_path, {"api_key": {"$env": "TEAM_MEM0_KEY"}}, {})


def test_api_key_reference_to_an_empty_variable_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.mem0\.api_key: .*not set or empty"):
        mem0_host(tmp_path, {"api_key": {"$env": "TEAM_MEM0_KEY"}}, {"TEAM_MEM0_KEY": ""})


def test_api_key_and_api_key_env_together_are_refused(tmp_path: Path, mem0_env: None) -> None:
    section = {"api_key": {"$env": "TEAM_MEM0_KEY"}, "api_key_env": "MEM0_API_KEY"}
    with pytest.raises(ConfigError, match=r"plugin_config\.mem0: api_key and api_key_env") as e:
        mem0_host(tmp_path, section, {"TEAM_MEM0_KEY": API_KEY})
    assert API_KEY not in str(e.value)


def test_a_literal_api_key_in_the_config_is_refused_without_echo(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.mem0\.api_key: secrets") as e:
        mem0_host(tmp_path, {"api_key": "m0-literal-in-the-file"}, {})
    assert "m0-literal" not in str(e.value)


def test_oss_mode_ignores_a_referenced_platform_key() -> None:
    config = {"mode": "oss", "oss_config": {"version": "v1.1"}, "api_key": API_KEY}
    assert parse_settings(config, {}).api_key is None
