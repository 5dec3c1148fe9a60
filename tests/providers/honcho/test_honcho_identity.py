"""Peer ids: a user can never pick an id that lands on another user's peer (review finding)."""

from __future__ import annotations

import hashlib
import re

import pytest

pytest.importorskip("honcho")

from hermes_core.errors import ConfigError
from hermes_core.provider_kit import InvalidPrincipal
from hermes_core.types import SessionInfo
from hermes_plugins.honcho.identity import session_key, user_peer_id
from hermes_plugins.honcho.settings import HonchoSettings, parse_settings

#: what Honcho accepts as a peer or session id
HONCHO_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
ODD = ["alice", "a_b", "a-b", "a.b", "A", "a--b", "名前", "bob\n", " bob", "x" * 1_000, "u-alice"]


def peer(user: str | None) -> str:
    return user_peer_id(SessionInfo("s", user_id=user), HonchoSettings())


def test_peers_are_the_canonical_principal() -> None:
    assert peer("alice") == "u-alice"
    digest = hashlib.sha256(b"Alice").hexdigest()[:32]
    assert peer("Alice") == f"u_alice_{digest}"
    assert peer(None) == HonchoSettings().peer_name


def test_a_hashed_id_cannot_be_chosen_by_another_user() -> None:
    victim = peer("bob@example.com")
    assert victim.startswith("u_")
    assert peer(victim) != victim  # typing the victim's peer id gives a different peer


def test_no_user_named_like_the_default_or_assistant_peer_shares_it() -> None:
    settings = HonchoSettings()
    assert peer(None) == settings.peer_name
    assert peer(settings.peer_name) != settings.peer_name
    assert peer(settings.ai_peer) != settings.ai_peer


def test_the_empty_user_id_is_refused_not_anonymous() -> None:
    with pytest.raises(InvalidPrincipal, match="pass user_id=None"):
        peer("")


@pytest.mark.parametrize("user", ODD)
def test_ids_are_stable_distinct_and_honcho_safe(user: str) -> None:
    assert peer(user) == peer(user)
    others = {peer(u) for u in ODD if u != user}
    assert peer(user) not in others
    assert HONCHO_ID.fullmatch(peer(user)) and "--" not in peer(user)


@pytest.mark.parametrize("session_id", ["s1", "chat 42\n", "../x", "s" * 1_000, "会话"])
@pytest.mark.parametrize("user", ["alice", "x" * 1_000, None])
def test_session_keys_are_honcho_safe(user: str | None, session_id: str) -> None:
    key = session_key(SessionInfo(session_id, user_id=user), HonchoSettings())
    assert HONCHO_ID.fullmatch(key), key


def test_an_ai_peer_a_user_could_take_is_refused() -> None:
    for ai_peer in ("u-bob", "u_bob_0123", "U-Bob"):
        with pytest.raises(ConfigError, match=r"plugin_config\.honcho\.ai_peer: .*user's peer"):
            parse_settings({"ai_peer": ai_peer, "base_url": "http://127.0.0.1:1"}, environ={})
    assert parse_settings({"base_url": "http://127.0.0.1:1"}, environ={}).ai_peer == "hermes"
