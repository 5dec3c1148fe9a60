"""``memory_forget`` on RetainDB: the user's queued turns are dropped from the queue file (no
byte of them left in it) and ``DELETE /v1/memories`` removes what the service kept; other
users' rows, queued or stored, stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_retaindb import FakeRetainDB

from hermes_core.errors import ProviderError
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.retaindb.provider import QUEUE_FILE


def _sync(provider, user: str | None, text: str) -> None:
    provider.memory_sync(Turn(text, "ok"), SessionInfo(f"s-{user}", user))


def _queue_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.glob(QUEUE_FILE + "*") if p.is_file())


def test_forget_drops_queued_turns_and_stored_memories(
    make_provider, fake: FakeRetainDB, tmp_path: Path
) -> None:
    provider = make_provider()
    _sync(provider, "alice", "alice keeps bees zqalicestored")
    _sync(provider, "bob", "bob keeps goats zqbobstored")
    assert provider.flush(5.0)
    provider.close()  # its writer must not deliver what is queued next
    paused = make_provider(home=tmp_path / "home", start_writer=False)
    _sync(paused, "alice", "alice lives in Porto zqalicequeued")
    _sync(paused, "bob", "bob lives in Faro zqbobqueued")
    assert paused.memory_forget("alice") == {"queued turns": 1, "memories": 1}
    (request,) = fake.requests_to("DELETE", "/v1/memories")
    assert request.query["user_id"] == "u-alice"
    assert [c.splitlines()[0] for c in fake.contents()] == ["User: bob keeps goats zqbobstored"]
    assert [r["user_id"] for r in paused.queue.rows()] == ["u-bob"]
    data = _queue_bytes(tmp_path / "home")
    assert b"zqalicequeued" not in data and b"zqbobqueued" in data


def test_a_failed_delete_is_raised(make_provider, fake: FakeRetainDB) -> None:
    provider = make_provider()
    fake.add("u-alice", "alice's")
    fake.fail(500)
    with pytest.raises(ProviderError, match="could not delete the user's memories"):
        provider.memory_forget("alice")
    fake.heal()
    assert fake.contents() == ["alice's"]  # nothing deleted, the error says so
    assert provider.memory_forget("alice") == {"queued turns": 0, "memories": 1}
