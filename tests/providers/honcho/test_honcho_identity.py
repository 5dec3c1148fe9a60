"""Peer ids: a user can never pick an id that lands on another user's peer (review finding)."""

from __future__ import annotations

import pytest

pytest.importorskip("honcho")

from hermes_core.types import SessionInfo
from hermes_plugins.honcho.identity import safe_id, user_peer_id
from hermes_plugins.honcho.settings import HonchoSettings


def peer(user: str | None) -> str:
    return user_peer_id(SessionInfo("s", user_id=user), HonchoSettings())


def test_a_hashed_id_cannot_be_chosen_by_another_user() -> None:
    victim = peer("bob@example.com")
    assert "-" in victim
    assert peer(victim) != victim  # typing the victim's peer id gives a different peer


def test_no_user_named_like_the_default_or_assistant_peer_shares_it() -> None:
    settings = HonchoSettings()
    assert peer(None) == settings.peer_name
    assert peer(settings.peer_name) != settings.peer_name
    assert peer(settings.ai_peer) != settings.ai_peer


@pytest.mark.parametrize("user", ["alice", "a_b", "a-b", "a.b", "A", "a--b", "名前"])
def test_ids_are_stable_and_distinct(user: str) -> None:
    assert peer(user) == peer(user)
    others = {peer(u) for u in ["alice", "a_b", "a-b", "a.b", "A", "a--b", "名前"] if u != user}
    assert peer(user) not in others
    assert "--" not in safe_id(user)
