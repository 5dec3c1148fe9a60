"""The shared provider helpers: tool schemas, API key from the environment, base URLs, and
the canonical principal every user id is mapped to."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.config import load_config
from hermes_core.errors import ConfigError
from hermes_core.provider_kit import (
    ENV_NAME,
    SESSION_KIND,
    InvalidPrincipal,
    anonymous_principal,
    canonical_id,
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
            st.text(min_size=1, max_size=12),
            st.text(alphabet="abAB -_.\n\u200b\u0301ｂ", min_size=1, max_size=6),
            st.sampled_from(["default", "default.default", "default.", "default.x", "x"]),
            st.sampled_from(["u-default", "u-x", "u_x", "a-default", canonical_id("X")]),
        ),
        max_size=8,
    )
)
def test_principal_is_injective_and_never_the_default_for_a_real_user(
    users: list[str | None],
) -> None:
    ids = set(users)
    mapped = {u: principal(SessionInfo("s", user_id=u), "default") for u in ids}
    assert len(set(mapped.values())) == len(mapped)  # no two users share an id
    for user, value in mapped.items():
        assert (value == "default") == (user is None)
        assert SAFE.fullmatch(value) and len(value) <= 59


#: what every backend accepts: the only characters a canonical id may hold
SAFE = re.compile(r"[a-z0-9_-]+")

#: The mapping is stable: memories are stored under these ids, so any change here orphans
#: them. These values must never change (digest: SHA-256 of the UTF-8 bytes, 32 hex).
GOLDEN = [
    ("bob", "u-bob"),
    ("chat-42", "u-chat-42"),
    ("a" * 48, "u-" + "a" * 48),
    ("u-bob", "u-u-bob"),
    ("Bob", "u_bob_cd9fb1e148ccd8442e5aa74904cc73bf"),
    ("bob ", "u_bob_30b93ee56af065a1e761e36439862eb2"),
    (" bob", "u_bob_f90e570d710dec6fa02a2f3129e489e4"),
    ("bob\n", "u_bob_1a1707bb54e5fb4deddd19f07adcb4f1"),
    ("\tbob", "u_bob_dc40ff6a5b33d98989c89925e147aa13"),
    ("\uff42\uff4f\uff42", "u_d4299b0d0535b967d048920a04d5e26d"),
    ("bob\u200b", "u_bob_08d38dbece5ddc5da55cbca0d6d6037f"),
    ("b\u043eb", "u_b-b_1a92cbb75f844c613a8cdb1ef0262ef3"),
    ("alice@example.com", "u_alice-example-com_ff8d9819fc0e12bf0d24892e45987e24"),
    ("a" * 1_000, "u_aaaaaaaaaaaaaaaaaaaaaaaa_41edece42d63e8d9bf515a9ba6932e1c"),
]


@pytest.mark.parametrize(("user", "expected"), GOLDEN)
def test_the_mapping_is_stable(user: str, expected: str) -> None:
    assert principal(SessionInfo("s", user_id=user), "default") == expected
    assert canonical_id(user) == expected
    if expected.startswith("u_"):  # operators can recompute the digest with sha256sum
        digest = hashlib.sha256(user.encode()).hexdigest()[:32]
        assert expected.endswith("_" + digest) or expected == f"u_{digest}"


def test_look_alikes_case_whitespace_and_normal_forms_stay_distinct() -> None:
    users = ["bob", "Bob", "BOB", "bob ", " bob", "bob\n", "\tbob", "b ob", "ｂｏｂ", "bob\u200b"]
    users += ["b\u043eb", "bo\u0301b", "b\u00f3b", "zo\u00eb", "zoe\u0308", "\ufb01le", "file"]
    users += ["a" * 48, "a" * 49, "a" * 1_000, "a" * 999 + "b", "a.b", "a_b", "a-b", "a--b"]
    users += ["\ud800", "\udc00x"]  # lone surrogates: still mapped, still distinct
    mapped = [canonical_id(user) for user in users]
    assert len(set(mapped)) == len(users)
    assert all(SAFE.fullmatch(m) and len(m) <= 59 and "--" not in m for m in mapped)


@given(st.text(min_size=1), st.text(min_size=1))
def test_canonical_id_is_injective_and_safe(first: str, second: str) -> None:
    one, two = canonical_id(first), canonical_id(second)
    assert (one == two) == (first == second)
    assert SAFE.fullmatch(one) and len(one) <= 59 and "--" not in one


def test_kinds_keep_namespaces_apart() -> None:
    assert canonical_id("chat-42", SESSION_KIND) == "s-chat-42"
    assert canonical_id("chat 42", SESSION_KIND).startswith("s_chat-42_")
    assert canonical_id("x", "k") != canonical_id("x", "kk")
    with pytest.raises(ValueError, match="kind"):
        canonical_id("x", "U")


@pytest.mark.parametrize("bad", ["", 7])
def test_the_empty_user_id_is_refused_not_anonymous(bad: object) -> None:
    with pytest.raises(InvalidPrincipal, match="pass user_id=None"):
        principal(SessionInfo("s", user_id=bad), "default")  # type: ignore[arg-type]
    for value in (bad, None):
        with pytest.raises(InvalidPrincipal):
            canonical_id(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("default", "expected"),
    [
        ("default", "default"),
        ("hermes-user", "hermes-user"),
        ("user", "user"),
        ("u-root", "a-u-root"),  # would look like a user's principal
        ("Solo", "a_solo_" + hashlib.sha256(b"Solo").hexdigest()[:32]),
        ("a--b", "a_a-b_" + hashlib.sha256(b"a--b").hexdigest()[:32]),
    ],
)
def test_the_anonymous_principal(default: str, expected: str) -> None:
    assert principal(SessionInfo("s"), default) == expected == anonymous_principal(default)
    assert not expected.startswith(("u-", "u_"))
