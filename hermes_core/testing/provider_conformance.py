"""The provider conformance suite: what every external memory provider must do.

Subclass :class:`ProviderConformance` in your provider's tests (the class name must start with
``Test`` for pytest to collect it) and supply the ``provider_host`` fixture and the adapters
below; the inherited tests then check, through the core :class:`MemoryManager` exactly as a
host would use it: recall after sync, two users kept apart, user ids that differ however
little (whitespace, case, look-alike letters, normalisation forms, 1,000 characters, the
forms ``provider_kit.principal`` produces) never sharing memories, the empty user id never
being the anonymous principal, odd session ids, forget, update, unicode and a
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
        def tool_search(self, host, manager, session, text): ...  # optional
        def tool_remember(self, host, manager, session, fact): ...  # optional
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
from hermes_core.provider_kit import canonical_id
from hermes_core.types import SessionInfo, Turn

__all__ = ["DISTINCT_USER_IDS", "ODD_SESSION_IDS", "ProviderConformance"]


def _token() -> str:
    return "zq" + uuid.uuid4().hex[:12]


#: Pairs of user ids that differ, however little (``None`` is a session without a user id):
#: what is stored for one must never be recalled, or shown by a tool, for the other.
DISTINCT_USER_IDS: tuple[tuple[str, str | None, str], ...] = (
    ("trailing-space", "bob", "bob "),
    ("leading-space", "bob", " bob"),
    ("trailing-newline", "bob", "bob\n"),
    ("leading-tab", "bob", "\tbob"),
    ("only-whitespace-differs", "bob ", "bob\t"),
    ("inner-space", "bob smith", "bob_smith"),
    ("inner-newline", "bob", "bob\nmallory"),
    ("case", "bob", "Bob"),
    ("all-caps", "alice", "ALICE"),
    ("full-width", "bob", "\uff42\uff4f\uff42"),
    ("zero-width-space", "bob", "bob\u200b"),
    ("cyrillic-o", "bob", "b\u043eb"),
    ("combining-acute", "bob", "bo\u0301b"),
    ("nfc-vs-nfd", "zo\u00eb", "zoe\u0308"),
    ("ligature", "file", "\ufb01le"),
    ("long", "a" * 1_000, "a" * 999 + "b"),
    ("long-vs-longer", "a" * 1_000, "a" * 1_001),
    ("at-the-hash-limit", "a" * 48, "a" * 49),
    ("punctuation", "a.b", "a_b"),
    ("forged-readable-principal", "bob", "u-bob"),
    ("forged-hashed-principal", "Bob", canonical_id("Bob")),
    ("anonymous-vs-default", None, "default"),
    ("anonymous-vs-user", None, "user"),
    ("anonymous-vs-hermes-user", None, "hermes-user"),
)

#: Session ids a host may send (the session layer refuses some of them; a provider must not
#: depend on it): each must store and recall like any other.
ODD_SESSION_IDS: tuple[tuple[str, str], ...] = (
    ("spaces-and-newline", "chat 42\nthread"),
    ("slashes", "../../etc/passwd?x=1#y"),
    ("unicode", "会话-\uff53\u200b"),
    ("long", "s" * 1_000),
)


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

    def tool_search(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str
    ) -> str | None:
        """What the provider's search tool shows ``session``'s user for ``text`` (its JSON
        answer through ``manager.handle_tool_call``, as long as the answer does not echo the
        query); ``None`` when it has no such tool. Used to check a user's tools never show
        another user's records."""
        return None

    def tool_remember(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, fact: str
    ) -> bool:
        """Store ``fact`` for ``session``'s user through the provider's own tool (any answer
        is fine: for a refused user id it is an error); ``False`` when it has no such tool."""
        return False

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

    def seen_by_tools(
        self, host: Hermes, manager: MemoryManager, session: SessionInfo, text: str
    ) -> bool | None:
        """Whether the search tool shows ``session``'s user ``text`` (None: no search tool)."""
        answer = self.tool_search(host, manager, session, text)
        return None if answer is None else text in answer

    def assert_kept_apart(
        self,
        host: Hermes,
        manager: MemoryManager,
        first: SessionInfo,
        second: SessionInfo,
        *,
        second_is_refused: bool = False,
    ) -> None:
        """Facts synced (and stored through the tools) for one are never recalled or shown by
        a tool for the other; with ``second_is_refused`` the second may be refused outright
        (its own facts are then not required to come back)."""
        a, b = _token(), _token()
        for session, token in ((first, a), (second, b)):
            fact = f"Please remember this: my locker code is {token}"
            assert manager.sync(Turn(user=fact, assistant=f"Noted: {token}"), session)
        self.settle(host, manager)
        assert a in self.recall(manager, first, a), "the first user's fact is not recalled"
        if not second_is_refused:
            assert b in self.recall(manager, second, b), "the second user's fact is not recalled"
        assert a not in self.recall(manager, second, a), "the second user recalls the first's"
        assert b not in self.recall(manager, first, b), "the first user recalls the second's"
        if self.tool_search(host, manager, first, a) is not None:
            assert self.seen_by_tools(host, manager, first, a), "the search tool misses it"
            assert not self.seen_by_tools(host, manager, second, a)
            assert not self.seen_by_tools(host, manager, first, b)
        c, d = _token(), _token()
        if self.tool_remember(host, manager, first, f"tool fact {c}"):
            self.tool_remember(host, manager, second, f"tool fact {d}")
            self.settle(host, manager)
            if self.tool_search(host, manager, first, c) is not None:
                assert self.seen_by_tools(host, manager, first, c), "the stored fact is missing"
                if not second_is_refused:
                    assert self.seen_by_tools(host, manager, second, d)
                assert not self.seen_by_tools(host, manager, second, c)
                assert not self.seen_by_tools(host, manager, first, d)
            assert c not in self.recall(manager, second, c)
            assert d not in self.recall(manager, first, d)

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

    @pytest.mark.parametrize(
        ("first", "second"),
        [pytest.param(first, second, id=name) for name, first, second in DISTINCT_USER_IDS],
    )
    def test_user_ids_that_differ_never_share_memories(
        self,
        provider_host: Hermes,
        manager: MemoryManager,
        first: str | None,
        second: str,
    ) -> None:
        one = SessionInfo("conformance-ids", user_id=first)
        other = SessionInfo("conformance-ids", user_id=second)  # the same session id, too
        self.assert_kept_apart(provider_host, manager, one, other)
        errors = [e for e in manager.events if e.kind == "provider_error"]
        assert not errors, errors  # every one of these ids is accepted by the backend

    def test_the_empty_user_id_is_not_the_anonymous_principal(
        self, provider_host: Hermes, manager: MemoryManager
    ) -> None:
        """``""`` is refused (an error: nothing stored or recalled) or kept apart from the
        sessions without a user id; it never reads or writes their memories."""
        anonymous = SessionInfo("conformance-anonymous", user_id=None)
        empty = SessionInfo("conformance-empty", user_id="")
        self.assert_kept_apart(provider_host, manager, anonymous, empty, second_is_refused=True)
        self.assert_kept_apart(
            provider_host, manager, SessionInfo("c", user_id="bob"), empty, second_is_refused=True
        )

    @pytest.mark.parametrize(
        "session_id", [pytest.param(value, id=name) for name, value in ODD_SESSION_IDS]
    )
    def test_odd_session_ids_are_stored_and_recalled(
        self, provider_host: Hermes, manager: MemoryManager, session_id: str
    ) -> None:
        session = SessionInfo(session_id, user_id="olga")
        token = _token()
        self.remember(provider_host, manager, session, f"the session fact is {token}")
        assert token in self.recall(manager, session, token)
        assert token not in self.recall(manager, SessionInfo(session_id, user_id="olga2"), token)
        errors = [e for e in manager.events if e.kind == "provider_error"]
        assert not errors, errors

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
            skipped_before = [e.kind for e in manager.events].count("provider_skipped")
            started = time.monotonic()
            self.recall(manager, session, "anything else")  # still stuck: skipped at once
            assert time.monotonic() - started < limit
            kinds = [e.kind for e in manager.events]
            if "provider_timeout" in kinds:  # else its own client timeout answered in time
                # skipped, not waited for: told by the manager's events, not by a stopwatch
                # (a busy machine can take half a second to do nothing)
                assert kinds.count("provider_skipped") > skipped_before
