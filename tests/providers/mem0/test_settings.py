"""Settings validation: unknown keys, literal secrets, missing environment variables."""

from __future__ import annotations

import pytest

pytest.importorskip("mem0")

from hermes_core.errors import ConfigError
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
        ({"api_key": "m0-abc"}, "plugin_config.mem0.api_key: secrets are not written"),
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
