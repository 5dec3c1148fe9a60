"""The shared provider helpers: tool schemas, API key from the environment, base URLs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.errors import ConfigError
from hermes_core.provider_kit import (
    ENV_NAME,
    check_base_url,
    function_tool,
    principal,
    read_api_key,
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
