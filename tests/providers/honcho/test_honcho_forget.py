"""``memory_forget`` on Honcho, against the loopback fake: the user's sessions (with their
messages), the conclusions drawn by or about them and their card are deleted; another
user's, and the AI peer's shared state, stay."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("honcho")

from fake_honcho import FakeHoncho

from hermes_core.errors import ProviderError
from hermes_core.types import SessionInfo, Turn

ALICE = SessionInfo("s1", user_id="alice")
ALICE_2 = SessionInfo("s2", user_id="alice")
BOB = SessionInfo("s1", user_id="bob")


def _tool(provider: Any, session: SessionInfo, name: str, **arguments: Any) -> None:
    answer = json.loads(
        provider.memory_handle_tool(session=session, name=name, arguments=arguments)
    )
    assert answer["ok"], answer


def _plant(provider: Any, session: SessionInfo, word: str) -> None:
    provider.memory_sync(turn=Turn(user=f"my cat is {word}", assistant="ok"), session=session)
    _tool(provider, session, "honcho_conclude", content=f"owns a cat named {word}")
    _tool(provider, session, "honcho_profile", action="update", card=[f"Cat: {word}"])


def _texts(fake: FakeHoncho) -> str:
    store = fake.store
    parts = [m["content"] for m in store.messages.values()]
    parts += [c["content"] for c in store.conclusions.values()]
    parts += [line for card in store.cards.values() for line in card or []]
    return "\n".join(parts)


def test_forget_deletes_only_that_users_peer_data(make_provider, fake: FakeHoncho) -> None:
    provider = make_provider()
    _plant(provider, ALICE, "zqalice")
    provider.memory_sync(turn=Turn(user="again zqalice", assistant="ok"), session=ALICE_2)
    _plant(provider, BOB, "zqbob")
    answer = provider.memory_forget("alice")
    assert answer == {"conclusions": 1, "sessions": 2, "card entries": 1}
    texts = _texts(fake)
    assert "zqalice" not in texts and texts.count("zqbob") == 3
    assert set(fake.store.sessions) == {"u-bob--s-s1"}
    assert provider.memory_forget("alice") == {"conclusions": 0, "sessions": 0, "card entries": 0}


def test_a_failure_is_raised(make_provider, fake: FakeHoncho) -> None:
    provider = make_provider()
    _plant(provider, ALICE, "zqalice")
    with fake.faulty("500"), pytest.raises(ProviderError, match="could not delete peer u-alice"):
        provider.memory_forget("alice")
    assert "zqalice" in _texts(fake)
