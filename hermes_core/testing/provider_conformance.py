"""The provider conformance suite: what every external memory provider must do.

Subclass :class:`ProviderConformance` in your provider's tests (the class name must start with
``Test`` for pytest to collect it) and supply the ``provider_host`` fixture and the adapters
below; the inherited tests then check, through the core :class:`MemoryManager` exactly as a
host would use it: recall after sync, two users kept apart, forget, update, unicode and a
25,000-character turn, and a provider that is down or hung without breaking the turn.

Example::

    class TestMyProviderConformance(ProviderConformance):
        @pytest.fixture
        def provider_host(self, tmp_path):
            host = make_host(tmp_path, {"memory": {"provider": "mine", "prefetch_timeout": 1}},
                             builtins=None)
            yield host
            host.close()

        def forget(self, host, manager, session, text): ...
        def update(self, host, manager, session, old, new): ...
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_core.host.hermes import Hermes
from hermes_core.memory.manager import MemoryManager
from hermes_core.types import SessionInfo, Turn

__all__ = ["ProviderConformance"]


def _token() -> str:
    return "zq" + uuid.uuid4().hex[:12]


class ProviderConformance:
    """Inherit, provide ``provider_host`` and the adapters; the ``test_*`` methods run."""

    #: Seconds a prefetch may take beyond the host's ``memory.prefetch_timeout``.
    timeout_slack: float = 1.5

    # --- what a provider's test supplies ---------------------------------------------------

    @pytest.fixture
    def provider_host(self) -> Iterator[Hermes]:
        """A host whose ``memory.provider`` is the provider under test (override this)."""
        pytest.fail("override the provider_host fixture in your ProviderConformance subclass")
        yield  # pragma: no cover

    def settle(self, host: Hermes, manager: MemoryManager) -> None:
        """Wait until synced turns can be recalled (default: the sync queue is drained)."""
        assert manager.flush(10.0), "the sync queue did not drain in 10 s"

    def forget(self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str) -> None:
        """Delete every memory of ``session``'s user containing ``text``, through the tools."""
        pytest.skip("this provider's test does not supply forget()")

    def update(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, old: str, new: str
    ) -> None:
        """Change the memory containing ``old`` to contain ``new``, through the tools."""
        pytest.skip("this provider's test does not supply update()")

    def provider_down(self, host: Hermes) -> contextlib.AbstractContextManager[Any]:
        """A context in which every backend call fails (HTTP 500, refused connection)."""
        pytest.skip("this provider's test does not supply provider_down()")

    def provider_hung(self, host: Hermes) -> contextlib.AbstractContextManager[Any]:
        """A context in which every backend call hangs far past the prefetch timeout."""
        pytest.skip("this provider's test does not supply provider_hung()")

    # --- helpers ------------------------------------------------------------------------------

    @pytest.fixture
    def manager(self, provider_host: Hermes) -> Iterator[MemoryManager]:
        manager = MemoryManager(provider_host)
        yield manager
        manager.shutdown(2.0)

    def remember(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, fact: str
    ) -> None:
        turn = Turn(user=f"Please remember this: {fact}", assistant=f"Noted: {fact}")
        assert manager.sync(turn, session)
        self.settle(host, manager)

    def recall(self, manager: MemoryManager, session: SessionInfo, about: str) -> str:
        return manager.prefetch(f"What do you know about {about}?", session)

    # --- the suite ----------------------------------------------------------------------------

    def test_is_the_one_active_external_provider(self, provider_host: Hermes) -> None:
        name = provider_host.settings.memory.provider
        assert name, "set memory.provider in the provider_host config"
        assert provider_host.plugins.records[name].status == "active"
        assert provider_host.plugins.external_provider() == name

    def test_recall_after_sync(self, provider_host: Hermes, manager: MemoryManager) -> None:
        session = SessionInfo("conformance-recall", user_id="alice")
        token = _token()
        self.remember(provider_host, manager, session, f"the project codename is {token}")
        recalled = self.recall(manager, session, token)
        assert token in recalled
        assert recalled.startswith("<memory-context>") and "background data" in recalled

    def test_two_users_are_isolated(self, provider_host: Hermes, manager: MemoryManager) -> None:
        alice = SessionInfo("conformance-alice", user_id="alice")
        bob = SessionInfo("conformance-bob", user_id="bob")
        a, b = _token(), _token()
        self.remember(provider_host, manager, alice, f"alice keeps {a}")
        self.remember(provider_host, manager, bob, f"bob keeps {b}")
        assert a in self.recall(manager, alice, a)
        assert b in self.recall(manager, bob, b)
        assert a not in self.recall(manager, bob, a)
        assert b not in self.recall(manager, alice, b)

    def test_forget(self, provider_host: Hermes, manager: MemoryManager) -> None:
        session = SessionInfo("conformance-forget", user_id="carol")
        token = _token()
        self.remember(provider_host, manager, session, f"temporary fact {token}")
        assert token in self.recall(manager, session, token)
        self.forget(provider_host, manager, session, token)
        self.settle(provider_host, manager)
        assert token not in self.recall(manager, session, token)

    def test_update(self, provider_host: Hermes, manager: MemoryManager) -> None:
        session = SessionInfo("conformance-update", user_id="dave")
        old, new = _token(), _token()
        self.remember(provider_host, manager, session, f"the deploy target is {old}")
        self.update(provider_host, manager, session, old, f"the deploy target is {new}")
        self.settle(provider_host, manager)
        assert new in self.recall(manager, session, new)
        assert old not in self.recall(manager, session, old)

    def test_unicode_and_a_25000_character_turn(
        self, provider_host: Hermes, manager: MemoryManager
    ) -> None:
        session = SessionInfo("conformance-unicode", user_id="erin")
        token = _token()
        fact = f"Ünïcödé naïve café 🦊 中文 עברית ✓ {token}"
        turn = Turn(user=fact, assistant="Noted. " + "long answer " * 2_100)
        assert len(turn.assistant) > 25_000
        assert manager.sync(turn, session)
        self.settle(provider_host, manager)
        recalled = self.recall(manager, session, token)
        assert token in recalled
        assert not any(e.kind == "provider_error" for e in manager.events), manager.events

    def test_provider_down_does_not_break_the_turn(
        self, provider_host: Hermes, manager: MemoryManager
    ) -> None:
        session = SessionInfo("conformance-down", user_id="frank")
        limit = manager.timeout + self.timeout_slack
        with self.provider_down(provider_host):
            started = time.monotonic()
            recalled = self.recall(manager, session, "anything")
            assert time.monotonic() - started < limit
            assert "anything" not in recalled
            assert manager.sync(Turn(user="hello there", assistant="hi"), session)
            manager.flush(limit)
        assert recalled == ""  # nothing recalled, and nothing raised

    def test_provider_hung_is_bounded_and_skipped_while_stuck(
        self, provider_host: Hermes, manager: MemoryManager
    ) -> None:
        session = SessionInfo("conformance-hung", user_id="grace")
        limit = manager.timeout + self.timeout_slack
        with self.provider_hung(provider_host):
            started = time.monotonic()
            self.recall(manager, session, "anything")
            assert time.monotonic() - started < limit
            started = time.monotonic()
            self.recall(manager, session, "anything else")  # still stuck: skipped at once
            assert time.monotonic() - started < 0.5
            kinds = [e.kind for e in manager.events]
            if "provider_timeout" in kinds:  # else its own client timeout answered in time
                assert "provider_skipped" in kinds
