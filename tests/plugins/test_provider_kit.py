"""The shared provider helpers: tool schemas, API key from the environment, base URLs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.config import load_config
from hermes_core.errors import ConfigError
from hermes_core.provider_kit import (
    ENV_NAME,
    check_base_url,
    function_tool,
    principal,
    read_api_key,
    section_api_key,
)
from hermes_core.types import SessionInfo


def test_function_tool_is_a_closed_openai_schema() -> None:
    schema = function_tool("x_search", "Search.", {"query": {"type": "string"}}, ["query"])
    assert schema["type"] == "function" and schema["function"]["name"] == "x_search"
    params = schema["function"]["parameters"]
    assert params["required"] == ["query"] and params["additionalProperties"] is False


def test_read_api_key_names_the_setting_and_never_echoes() -> None:
    assert (
        read_api_key("K", where="plugin_config.x.api_key_env", service="X", environ={"K": " v "})
        == "v"
    )
    with pytest.raises(ConfigError, match=r"plugin_config\.x\.api_key_env: .*K is not set"):
        read_api_key("K", where="plugin_config.x.api_key_env", service="X", environ={"K": ""})


KEY = "x-test-key-not-a-secret-0123456789"
WHERE = {"section": "plugin_config.x", "default_env": "X_API_KEY", "service": "X"}


def x_section(tmp_path: Path, section: dict[str, Any], environ: dict[str, str]) -> Any:
    """``plugin_config.x`` as a plugin receives it, through the real config loader."""
    loaded = load_config({"plugin_config": {"x": section}}, home=tmp_path, environ=environ)
    return loaded.plugin_section("x")


def test_section_api_key_from_an_env_reference(tmp_path: Path) -> None:
    section = x_section(tmp_path, {"api_key": {"$env": "MY_X_KEY"}}, {"MY_X_KEY": KEY})
    # the variable is read by the loader; os.environ and the default variable play no part
    assert section_api_key(section, environ={}, **WHERE) == KEY
    assert section_api_key(section, environ={"X_API_KEY": "other"}, **WHERE) == KEY


def test_section_api_key_from_api_key_env_or_the_default_variable() -> None:
    assert section_api_key({"api_key_env": "MY_X"}, environ={"MY_X": f" {KEY} "}, **WHERE) == KEY
    assert section_api_key({}, environ={"X_API_KEY": KEY}, **WHERE) == KEY
    assert section_api_key({"api_key_env": None}, environ={"X_API_KEY": KEY}, **WHERE) == KEY


@pytest.mark.parametrize(
    ("section", "environ", "needle"),
    [
        ({}, {}, r"plugin_config\.x\.api_key_env: .*X_API_KEY is not set or empty"),
        (
            {"api_key_env": "MY_X"},
            {"MY_X": "  "},
            r"plugin_config\.x\.api_key_env: .*MY_X is not set",
        ),
        ({"api_key": ""}, {}, r"plugin_config\.x\.api_key: .*not set or empty"),
        ({"api_key": "  "}, {}, r"plugin_config\.x\.api_key: .*not set or empty"),
        ({"api_key": None}, {}, r"plugin_config\.x\.api_key: .*not set or empty"),
        ({"api_key": ["a"]}, {}, r"plugin_config\.x\.api_key: write it as `api_key: \{\$env"),
        ({"api_key": KEY, "api_key_env": "MY_X"}, {"MY_X": KEY}, r"both set; keep one"),
        ({"api_key_env": KEY}, {}, r"plugin_config\.x\.api_key_env: must be the NAME"),
        ({"api_key_env": 3}, {}, r"plugin_config\.x\.api_key_env: must be the NAME"),
    ],
)
def test_section_api_key_errors_name_the_setting_and_never_echo(
    section: dict[str, Any], environ: dict[str, str], needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle) as caught:
        section_api_key(section, environ=environ, **WHERE)
    assert KEY not in str(caught.value)


def test_an_unset_reference_is_a_loader_error_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"plugin_config\.x\.api_key: .*MY_X_KEY is not set"):
        x_section(tmp_path, {"api_key": {"$env": "MY_X_KEY"}}, {})
    # an empty variable gets through the loader; the helper treats it like an unset one
    section = x_section(tmp_path, {"api_key": {"$env": "MY_X_KEY"}}, {"MY_X_KEY": ""})
    with pytest.raises(ConfigError, match=r"plugin_config\.x\.api_key: .*not set or empty"):
        section_api_key(section, environ={"X_API_KEY": KEY}, **WHERE)


def test_both_ways_at_once_through_the_loader(tmp_path: Path) -> None:
    section = x_section(
        tmp_path, {"api_key": {"$env": "MY_X_KEY"}, "api_key_env": "X_API_KEY"}, {"MY_X_KEY": KEY}
    )
    with pytest.raises(ConfigError, match=r"plugin_config\.x: api_key and api_key_env"):
        section_api_key(section, environ={"X_API_KEY": KEY}, **WHERE)


def test_section_api_key_not_required() -> None:
    assert section_api_key({}, environ={}, required=False, **WHERE) is None
    assert section_api_key({}, environ={"X_API_KEY": ""}, required=False, **WHERE) is None
    assert section_api_key({}, environ={"X_API_KEY": KEY}, required=False, **WHERE) == KEY
    # asking for a key that resolved to nothing is an error even when none is needed
    with pytest.raises(ConfigError, match=r"plugin_config\.x\.api_key: "):
        section_api_key({"api_key": ""}, environ={}, required=False, **WHERE)


def test_the_hint_is_part_of_the_not_set_message() -> None:
    with pytest.raises(ConfigError, match=r"X_API_KEY is not set.*; or use the local mode\)"):
        section_api_key({}, environ={}, hint="or use the local mode", **WHERE)


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://api.example.test/", True),
        ("http://127.0.0.1:8080", True),
        ("ftp://example.test", False),
        ("example.test", False),
        ("https://user:pw@example.test", False),
    ],
)
def test_check_base_url(url: str, ok: bool) -> None:
    if ok:
        assert not check_base_url(url, where="w", key_hint="k").endswith("/")
    else:
        with pytest.raises(ConfigError):
            check_base_url(url, where="w", key_hint="k")


def test_env_names() -> None:
    assert (
        ENV_NAME.match("MEM0_API_KEY") and not ENV_NAME.match("sk-abc") and not ENV_NAME.match("1X")
    )


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.text(max_size=12),
            st.sampled_from(["default", "default.default", "default.", "default.x", "x"]),
        ),
        max_size=8,
    )
)
def test_principal_is_injective_and_never_the_default_for_a_real_user(
    users: list[str | None],
) -> None:
    ids = {u or None for u in users}
    mapped = {u: principal(SessionInfo("s", user_id=u), "default") for u in ids}
    assert len(set(mapped.values())) == len(mapped)  # no two users share an id
    for user, value in mapped.items():
        assert (value == "default") == (user is None)
