"""Settings validation: every mistake names plugin_config.supermemory.<key>."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("supermemory")

from supermemory_support import ENV

from hermes_core.errors import ConfigError
from hermes_core.testing import plugin_context
from hermes_plugins.supermemory import SupermemoryProvider
from hermes_plugins.supermemory.scope import container_tag
from hermes_plugins.supermemory.settings import parse_settings


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
        ({"api_key": "sm_abcdefabcdefabcdef"}, "api_key", "environment variable"),
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
    users = ["alice", "Alice", "al.ice", "al_ice", "al-ice", "a/b", "a_b", "../x", "", "ü"]
    tags = {container_tag("hermes", user) for user in users}
    assert len(tags) == len(users)
    for tag in tags:
        assert all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in tag)
    crafted = container_tag("hermes", "al.ice").split("_", 1)[1]
    assert container_tag("hermes", crafted) != container_tag("hermes", "al.ice")
