"""``memory_forget`` on Mem0: local mode for real (qdrant on disk, loopback embeddings) and
the platform's ``DELETE /v1/memories/`` on the loopback fake. Only the user's principal is
deleted: another user's, the default principal's and another agent's memories stay."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mem0")

from fake_mem0 import FakeMem0

from hermes_core.errors import ProviderError
from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn

ALICE = SessionInfo("s-alice", "alice")
BOB = SessionInfo("s-bob", "bob")
SOLO = SessionInfo("s-solo")


def _stored(provider, session: SessionInfo, query: str) -> list[str]:
    user = provider.principal(session)
    return [r["memory"] for r in provider.backend.search(query, user, 10)]


def test_local_forget_deletes_only_that_user(fake: FakeMem0, local_config, build_provider):
    provider = build_provider(local_config)
    for session, word in ((ALICE, "zqalice"), (BOB, "zqbob"), (SOLO, "zqsolo")):
        provider.memory_sync(Turn(f"my colour is teal {word}", ""), session)
        provider.memory_sync(Turn(f"my city is Porto {word}", ""), session)
    assert provider.memory_forget("alice") == {"memories": 2}
    assert _stored(provider, ALICE, "teal Porto zqalice") == []
    assert len(_stored(provider, BOB, "teal Porto zqbob")) == 2
    assert len(_stored(provider, SOLO, "teal Porto zqsolo")) == 2
    assert provider.memory_forget("alice") == {"memories": 0}  # again: nothing left
    assert provider.memory_forget(None) == {"memories": 2}  # the default principal, by name
    assert len(_stored(provider, BOB, "teal Porto zqbob")) == 2


def test_platform_forget_sends_the_principal(fake: FakeMem0, platform_config, build_provider):
    provider = build_provider({**platform_config, "agent_id": "hermes"})
    kept = fake.seed("u-bob", "bob's")
    fake.seed("u-alice", "alice's")
    fake.memories[fake.seed("u-alice", "other app's")]["agent_id"] = "other"
    for record in fake.memories.values():
        record.setdefault("agent_id", "hermes")
    assert provider.memory_forget("alice") == {"users": 1}
    (request,) = [r for r in fake.requests if r.method == "DELETE"]
    assert "user_id=u-alice" in request.path and "agent_id=hermes" in request.path
    assert sorted(r["memory"] for r in fake.memories.values()) == ["bob's", "other app's"]
    assert kept in fake.memories


def test_platform_failure_is_raised_with_what_to_do(fake, platform_config, build_provider):
    provider = build_provider(platform_config)
    fake.seed("u-alice", "alice's")
    fake.set_fault(500)
    with pytest.raises(ProviderError, match="could not delete the user's memories"):
        provider.memory_forget("alice")
    fake.set_fault(None)
    assert len(fake.memories) == 1


def test_host_reports_mem0(fake: FakeMem0, platform_config, tmp_path: Path):
    fake.seed("u-alice", "alice's")
    fake.seed("u-bob", "bob's")
    config = {"memory": {"provider": "mem0"}, "plugin_config": {"mem0": dict(platform_config)}}
    with make_host(tmp_path / "home", config, builtins=None) as hermes:
        report = hermes.forget_user("alice")
    assert report.providers == {"mem0": {"users": 1}} and report.complete
    assert [r["memory"] for r in fake.memories.values()] == ["bob's"]
