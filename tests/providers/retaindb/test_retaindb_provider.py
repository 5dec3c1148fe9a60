"""Prefetch, sync and tools against the loopback fake: request shapes, user binding, faults."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("httpx")

from fake_retaindb import FakeRetainDB
from retaindb_support import API_KEY_ENV, provider_config

from hermes_core.provider_kit import InvalidPrincipal, canonical_id, principal
from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.retaindb import RetainDBProvider
from hermes_plugins.retaindb import provider as retaindb_provider_module

Make = Callable[..., RetainDBProvider]
ALICE = SessionInfo(session_id="s-alice", user_id="alice")
BOB = SessionInfo(session_id="s-bob", user_id="bob")


def call(provider: RetainDBProvider, session: SessionInfo, name: str, **args: object) -> dict:
    answer = provider.memory_handle_tool(session=session, name=name, arguments=args)
    assert answer is not None
    return json.loads(answer)


def test_sync_is_queued_then_posted_with_auth_user_and_idempotency_key(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider(project="proj-a")
    fake.delay = 60.0  # every request is held until heal()
    provider.memory_sync(turn=Turn(user="I deploy with kubectl", assistant="Noted."), session=ALICE)
    assert fake.contents() == []  # sync returned while the network had not answered
    fake.heal()
    assert provider.flush(5.0)
    (post,) = fake.requests_to("POST", "/v1/memories")
    assert post.headers["authorization"] == f"Bearer {fake.api_key}"
    assert post.body["project"] == "proj-a"
    assert post.body["user_id"] == "u-alice"
    assert post.body["session_id"] == "s-s-alice"
    assert post.body["content"] == "User: I deploy with kubectl\nAssistant: Noted."
    assert post.body["idempotency_key"] == post.headers["idempotency-key"]
    assert provider.queue.counts() == {"pending": 0, "parked": 0}


def test_prefetch_searches_for_the_user_and_formats_one_memory_per_line(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider()
    fake.add("u-alice", "Alice prefers tabs over spaces")
    fake.add("u-alice", "Alice deploys on Fridays")
    fake.add("u-bob", "Bob prefers spaces")
    text = provider.memory_prefetch(query="what does she prefer?", session=ALICE)
    assert text == "- Alice prefers tabs over spaces"
    (search,) = fake.requests_to("POST", "/v1/search")
    assert search.body == {
        "project": "default",
        "user_id": "u-alice",
        "query": "what does she prefer?",
        "limit": 8,
    }
    assert provider.memory_prefetch(query="nothing matches zzzz", session=ALICE) is None


def test_prefetch_shows_a_window_around_the_match_of_a_long_memory(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider(snippet_chars=200)
    fake.add("u-alice", "filler " * 3000 + "the vault code word is pelican " + "more " * 1000)
    text = provider.memory_prefetch(query="pelican", session=ALICE)
    assert text is not None and "pelican" in text and len(text) < 260


def test_session_without_user_uses_the_configured_principal(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider(user_id="solo")
    anonymous = SessionInfo(session_id="s0")
    provider.memory_sync(turn=Turn(user="remember the walrus", assistant="ok"), session=anonymous)
    assert provider.flush(5.0)
    assert fake.contents("solo") == ["User: remember the walrus\nAssistant: ok"]
    assert provider.memory_prefetch(query="walrus", session=anonymous) is not None
    assert provider.memory_prefetch(query="walrus", session=ALICE) is None


def test_tools_schemas_and_happy_paths(make_provider: Make, fake: FakeRetainDB) -> None:
    provider = make_provider()
    names = [tool["function"]["name"] for tool in provider.memory_tools(session=ALICE) or []]
    assert names == ["retaindb_search", "retaindb_remember", "retaindb_forget", "retaindb_profile"]
    stored = call(provider, ALICE, "retaindb_remember", content="Alice's cat is named Miso")
    assert stored["ok"] and stored["id"]
    found = call(provider, ALICE, "retaindb_search", query="cat name")
    assert [r["content"] for r in found["results"]] == ["Alice's cat is named Miso"]
    profile = call(provider, ALICE, "retaindb_profile")
    assert profile["profile"]["user_id"] == "u-alice" and profile["profile"]["memory_count"] == 1
    (get_profile,) = fake.requests_to("GET", "/v1/profile")
    assert get_profile.query == {"project": "default", "user_id": "u-alice"}
    assert call(provider, ALICE, "retaindb_forget", id=stored["id"]) == {
        "ok": True,
        "deleted": stored["id"],
    }
    assert fake.contents() == []
    assert provider.memory_handle_tool(session=ALICE, name="mem0_search", arguments={}) is None


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        ("retaindb_search", {}, "'query'"),
        ("retaindb_search", {"query": "x", "limit": 0}, "'limit'"),
        ("retaindb_remember", {"content": 5}, "'content'"),
        ("retaindb_remember", {"content": "x" * 25_001}, "longer"),
        ("retaindb_forget", {}, "'id'"),
        ("retaindb_forget", {"id": "../profile"}, "not a valid"),
    ],
)
def test_bad_arguments_answer_a_json_error(
    make_provider: Make, fake: FakeRetainDB, name: str, args: dict, words: str
) -> None:
    answer = call(make_provider(), ALICE, name, **args)
    assert answer["ok"] is False and words in answer["error"]
    assert fake.requests_to("DELETE", "/") == []


def test_bob_can_neither_see_nor_delete_alices_memories(
    make_provider: Make, fake: FakeRetainDB
) -> None:
    provider = make_provider()
    alice_id = fake.add("u-alice", "Alice's bank PIN hint is the garden")
    fake.leak = True  # a server bug answers every user's records: the client must filter
    assert provider.memory_prefetch(query="garden hint", session=BOB) is None
    assert call(provider, BOB, "retaindb_search", query="garden")["results"] == []
    refused = call(provider, BOB, "retaindb_forget", id=alice_id)
    assert refused["ok"] is False and "no memory" in refused["error"]
    assert fake.requests_to("DELETE", "/") == []  # refused before any delete was sent
    assert fake.contents("u-alice") == ["Alice's bank PIN hint is the garden"]
    # Alice herself still can.
    assert call(provider, ALICE, "retaindb_forget", id=alice_id)["ok"] is True


@pytest.mark.parametrize("fault", ["401", "429", "500", "timeout", "malformed"])
def test_faults_leave_prefetch_none_quickly_and_tools_answer_errors(
    make_provider: Make,
    fake: FakeRetainDB,
    fault: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = make_provider(recall_cooldown=60)
    fake.add("u-alice", "Alice likes lighthouses")
    if fault == "401":
        fake.api_key = "another-key-entirely"
    elif fault == "timeout":
        fake.delay = 5.0
    elif fault == "malformed":
        fake.malformed = True
    else:
        fake.fail(int(fault))
    caplog.set_level(logging.DEBUG, logger="hermes_context")
    assert provider.memory_prefetch(query="lighthouses", session=ALICE) is None
    assert len(fake.requests) == 1  # one try, no retry loop the turn would wait for
    assert provider.memory_prefetch(query="lighthouses", session=ALICE) is None
    # after a timeout the next recall is skipped (recall_cooldown); other faults fail fast
    assert len(fake.requests) == (1 if fault == "timeout" else 2)
    warnings = [r for r in caplog.records if "recall failed" in r.getMessage()]
    assert len(warnings) == 1  # logged once, not per turn
    answer = call(provider, ALICE, "retaindb_search", query="lighthouses")
    assert answer["ok"] is False and "RetainDB" in answer["error"]
    assert fake.api_key not in caplog.text and "rdb-test-key" not in caplog.text
    fake.heal()
    fake.api_key = "rdb-test-key-0000"
    # past the cooldown: the provider's clock moves on a minute, no test waits for it
    later = SimpleNamespace(monotonic=lambda: time.monotonic() + 61)
    monkeypatch.setattr(retaindb_provider_module, "time", later)
    assert (
        provider.memory_prefetch(query="lighthouses", session=ALICE) == "- Alice likes lighthouses"
    )


def test_loads_through_a_real_host(fake: FakeRetainDB, api_key: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    host = make_host(
        home,
        {
            "memory": {"provider": "retaindb"},
            "plugin_config": {"retaindb": provider_config(fake)},
        },
        builtins=None,
    )
    try:
        assert host.plugins.records["retaindb"].status == "active"
        assert host.plugins.external_provider() == "retaindb"
        provider = host.plugins.get_plugin("retaindb")
        assert isinstance(provider, RetainDBProvider)
        assert provider.queue.path == home / "retaindb_queue.db"
        assert provider.settings.api_key_env == API_KEY_ENV
    finally:
        host.close()


@pytest.mark.parametrize("user", ["bob\n", "bob smith", "Bob", "ｂｏｂ", "x" * 1_000])
def test_odd_user_and_session_ids_are_sent_canonical(
    make_provider: Make, fake: FakeRetainDB, user: str
) -> None:
    provider = make_provider()
    session = SessionInfo(session_id="chat 42\n/../x", user_id=user)
    provider.memory_sync(turn=Turn(user="I keep zqodd here", assistant="ok"), session=session)
    assert provider.flush(5.0)
    (post,) = fake.requests_to("POST", "/v1/memories")
    assert post.body["user_id"] == principal(session, "default")
    assert post.body["session_id"] == canonical_id("chat 42\n/../x", "s")
    assert "zqodd" in (provider.memory_prefetch(query="zqodd", session=session) or "")
    assert provider.memory_prefetch(query="zqodd", session=BOB) is None
    assert call(provider, session, "retaindb_remember", content="zqtool fact")["ok"]
    assert call(provider, BOB, "retaindb_search", query="zqtool")["results"] == []


def test_the_empty_user_id_is_refused(make_provider: Make, fake: FakeRetainDB) -> None:
    provider = make_provider()
    empty = SessionInfo(session_id="s", user_id="")
    with pytest.raises(InvalidPrincipal):
        provider.memory_sync(turn=Turn(user="hello there", assistant="hi"), session=empty)
    with pytest.raises(InvalidPrincipal):
        provider.memory_prefetch(query="hello", session=empty)
    answer = call(provider, empty, "retaindb_remember", content="zqempty")
    assert answer["ok"] is False and "pass user_id=None" in answer["error"]
    assert provider.queue.counts() == {"pending": 0, "parked": 0}
    assert fake.requests == []
