"""``memory_forget`` on Supermemory: ``DELETE /ns/{tag}`` of the user's own container, on the
loopback fake; other users' containers stay, failures are raised."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("supermemory")

from fake_supermemory import FakeServer, Fault
from supermemory_support import host_for, provider_config

from hermes_core.errors import ProviderError
from hermes_core.testing import plugin_context
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.supermemory import SupermemoryProvider


@pytest.fixture
def provider(fake: FakeServer, api_key: str, tmp_path: Path) -> Iterator[SupermemoryProvider]:
    plugin = SupermemoryProvider(
        plugin_context("supermemory", tmp_path, provider_config(fake, timeout=0.5))
    )
    yield plugin
    plugin.memory_shutdown()


def _sync(provider: SupermemoryProvider, user: str | None, text: str) -> None:
    provider.memory_sync(turn=Turn(user=text, assistant="ok"), session=SessionInfo("s", user))


def test_forget_deletes_the_users_container_only(provider, fake: FakeServer) -> None:
    _sync(provider, "alice", "alice keeps bees")
    _sync(provider, "alice", "alice lives in Porto")
    _sync(provider, "bob", "bob keeps goats")
    _sync(provider, None, "the owner keeps notes")
    assert provider.memory_forget("alice") == {"documents": 2, "memories": 0}
    (request,) = [r for r in fake.requests if r.method == "DELETE"]
    assert request.path.split("?")[0] == "/ns/hermes_u-alice"
    assert sorted(d.namespace for d in fake.docs.values()) == ["hermes_default", "hermes_u-bob"]
    assert provider.memory_forget("alice") == {}  # nothing left: the namespace is unknown
    assert provider.memory_forget(None) == {"documents": 1, "memories": 0}
    assert [d.namespace for d in fake.docs.values()] == ["hermes_u-bob"]


def test_a_failure_is_raised(provider, fake: FakeServer) -> None:
    _sync(provider, "alice", "alice keeps bees")
    fake.set_fault(Fault(status=500))
    with pytest.raises(ProviderError, match="could not delete container hermes_u-alice"):
        provider.memory_forget("alice")
    fake.set_fault(Fault())
    assert len(fake.docs) == 1


def test_through_a_host(fake: FakeServer, api_key: str, tmp_path: Path) -> None:
    with host_for(tmp_path / "home", fake) as host:
        host.plugins.call_one(
            "memory_sync",
            "supermemory",
            turn=Turn(user="alice keeps bees", assistant="ok"),
            session=SessionInfo("s", "alice"),
        )
        report = host.forget_user("alice")
    assert report.providers == {"supermemory": {"documents": 1, "memories": 0}}
    assert report.complete and fake.docs == {}
