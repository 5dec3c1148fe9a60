"""Settings validation: every mistake names plugin_config.supermemory.<key>; the key from
``api_key: {$env: NAME}`` through real config loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("supermemory")

from fake_supermemory import API_KEY, FakeServer
from supermemory_support import ENV, provider_config

from hermes_core.errors import ConfigError
from hermes_core.host import Hermes
from hermes_core.testing import make_host, plugin_context
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.supermemory import SupermemoryProvider
from hermes_plugins.supermemory.scope import container_tag, principal
from hermes_plugins.supermemory.settings import parse_settings, read_api_key


def build(tmp_path: Path, **config: object) -> SupermemoryProvider:
    return SupermemoryProvider(
        plugin_context("supermemory", tmp_path, {"api_key_env": ENV, **config})
    )


def test_defaults(api_key: str, tmp_path: Path) -> None:
    provider = build(tmp_path)
    assert provider.settings.container_tag == "hermes"
    assert provider.settings.base_url == "https://api.supermemory.ai"
    assert provider.settings.max_recall_results == 5
    provider.memory_shutdown()


@pytest.mark.parametrize(
    ("config", "key", "words"),
    [
        ({"contianer_tag": "x"}, "contianer_tag", "unknown key"),
        ({"apikey": "sm_abcdefabcdefabcdef"}, "apikey", "environment variable"),
        ({"token": "sm_abcdefabcdefabcdef"}, "token", "unknown key"),
        ({"api_key_env": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"}, "api_key_env", "secret"),
        ({"api_key_env": "sm_live_abcdef0123456789"}, "api_key_env", "environment variable"),
        ({"max_recall_results": "5"}, "max_recall_results", "number"),
        ({"max_recall_results": 0}, "max_recall_results", "between"),
        ({"max_recall_results": 2.5}, "max_recall_results", "whole number"),
        ({"timeout": True}, "timeout", "number"),
        ({"container_tag": "a/b"}, "container_tag", "letters"),
        ({"base_url": "ftp://example.com"}, "base_url", "URL"),
        ({"base_url": "https://user:pw@example.com"}, "base_url", ""),
    ],
)
def test_bad_settings_name_the_key(config: dict[str, object], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_settings(config)
    message = str(error.value)
    assert f"plugin_config.supermemory.{key}" in message
    assert words in message
    for value in config.values():
        if isinstance(value, str) and len(value) > 12:
            assert value not in message  # never echo something that may be a key


def test_missing_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(ConfigError, match=r"plugin_config\.supermemory\.api_key_env.*" + ENV):
        build(tmp_path)


def test_container_tags_never_collide() -> None:
    users = ["alice", "Alice", "al.ice", "al_ice", "al-ice", "a/b", "a_b", "../x", "ü", "a\n"]
    users += ["default", "u-alice", "x" * 1_000, "x" * 1_001]
    tags = {
        container_tag("hermes", principal(SessionInfo("s", user_id=user), "default"))
        for user in users
    }
    tags.add(container_tag("hermes", principal(SessionInfo("s"), "default")))
    assert len(tags) == len(users) + 1
    for tag in tags:
        assert all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in tag) and len(tag) <= 100
    assert container_tag("hermes", principal(SessionInfo("s", user_id="alice"), "x")) == (
        "hermes_u-alice"
    )


def test_a_container_tag_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.supermemory\.container_tag"):
        parse_settings({"container_tag": "hermes\n"})


# --- api_key: {$env: NAME}, through the real config loader ---------------------------------


def supermemory_host(tmp_path: Path, section: dict[str, Any], environ: dict[str, str]) -> Hermes:
    config = {"memory": {"provider": "supermemory"}, "plugin_config": {"supermemory": section}}
    return make_host(tmp_path, config, builtins=None, environ=environ)


def referenced(fake: FakeServer) -> dict[str, Any]:
    """The usual test section with the key as ``api_key: {$env: TEAM_SUPERMEMORY_KEY}``."""
    section = provider_config(fake, api_key={"$env": "TEAM_SUPERMEMORY_KEY"})
    del section["api_key_env"]
    return section


def test_api_key_from_an_env_reference_reaches_supermemory(
    tmp_path: Path, fake: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SUPERMEMORY_API_KEY", ENV):
        monkeypatch.delenv(name, raising=False)  # only the reference can supply the key
    host = supermemory_host(tmp_path, referenced(fake), {"TEAM_SUPERMEMORY_KEY": API_KEY})
    try:
        provider = host.plugins.get_plugin("supermemory")
        assert isinstance(provider, SupermemoryProvider)
        assert read_api_key(provider.settings, {}) == API_KEY
        assert API_KEY not in repr(provider.settings)
        provider.memory_sync(
            turn=Turn(user="My cat is called Zephyrine.", assistant="Noted!"),
            session=SessionInfo("s", user_id="alice"),
        )
        assert fake.requests
        assert {r.headers["Authorization"] for r in fake.requests} == {f"Bearer {API_KEY}"}
    finally:
        host.close()


def test_api_key_reference_to_an_unset_variable_is_named(
    tmp_path: Path, fake: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPERMEMORY_API_KEY", API_KEY)  # the default does not stand in
    match = r"plugin_config\.supermemory\.api_key: .*TEAM_SUPERMEMORY_KEY"
    with pytest.raises(ConfigError, match=match):
        supermemory_host(tmp_path, referenced(fake), {})


def test_api_key_reference_to_an_empty_variable_is_refused(
    tmp_path: Path, fake: FakeServer
) -> None:
    match = r"plugin_config\.supermemory\.api_key: .*not set or empty"
    with pytest.raises(ConfigError, match=match):
        supermemory_host(tmp_path, referenced(fake), {"TEAM_SUPERMEMORY_KEY": ""})


def test_api_key_and_api_key_env_together_are_refused(tmp_path: Path, fake: FakeServer) -> None:
    section = {**referenced(fake), "api_key_env": ENV}
    environ = {"TEAM_SUPERMEMORY_KEY": API_KEY, ENV: API_KEY}
    match = r"plugin_config\.supermemory: api_key and api_key_env"
    with pytest.raises(ConfigError, match=match) as e:
        supermemory_host(tmp_path, section, environ)
    assert API_KEY not in str(e.value)


def test_a_literal_api_key_in_the_config_is_refused_without_echo(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.supermemory\.api_key: secrets") as e:
        supermemory_host(tmp_path, {"api_key": "sm-literal-in-the-file"}, {})
    assert "sm-literal" not in str(e.value)
