"""Prefetch, sync, tools and faults against the loopback fake, through the real SDK."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("honcho")

from fake_honcho import FakeHoncho

from hermes_core.provider_kit import InvalidPrincipal
from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn

ALICE = SessionInfo("s1", user_id="alice")
BOB = SessionInfo("s1", user_id="bob")
MakeProvider = Callable[..., Any]


def tool(provider: Any, session: SessionInfo, name: str, **arguments: Any) -> dict[str, Any]:
    answer = provider.memory_handle_tool(session=session, name=name, arguments=arguments)
    assert isinstance(answer, str)
    result: dict[str, Any] = json.loads(answer)
    return result


# --- sync ---------------------------------------------------------------------------------


def test_sync_adds_both_messages_bound_to_the_user(
    make_provider: MakeProvider, fake: FakeHoncho, honcho_env: str
) -> None:
    provider = make_provider()
    provider.memory_sync(turn=Turn(user="I like green tea", assistant="Noted."), session=ALICE)
    posts = [r for r in fake.requests if r.path.endswith("/messages") and r.method == "POST"]
    assert len(posts) == 1
    assert posts[0].path == "/v3/workspaces/ws/sessions/u-alice--s-s1/messages"
    messages = posts[0].body["messages"]
    assert [m["peer_id"] for m in messages] == ["u-alice", "hermes"]
    assert [m["content"] for m in messages] == ["I like green tea", "Noted."]
    assert all(m["metadata"]["hermes_user"] == "u-alice" for m in messages)
    assert all(m["metadata"]["hermes_session"] == "s1" for m in messages)
    for request in fake.requests:
        assert request.headers["Authorization"] == f"Bearer {honcho_env}"
    session = next(r for r in fake.requests if r.path == "/v3/workspaces/ws/sessions")
    assert session.body["metadata"] == {"hermes_user": "u-alice"}
    assert set(session.body["peers"]) == {"u-alice", "hermes"}


def test_long_messages_are_chunked(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider(message_max_chars=25_000)
    text = ("word " * 5_000 + "\n") * 12  # about 300,000 characters
    provider.memory_sync(turn=Turn(user=text, assistant="ok"), session=ALICE)
    sent = [m for r in fake.requests if r.path.endswith("/messages") for m in r.body["messages"]]
    user_parts = [m for m in sent if m["peer_id"] == "u-alice"]
    assert len(user_parts) > 1
    assert all(len(m["content"]) <= 25_000 for m in user_parts)
    assert "".join(m["content"] for m in user_parts) == text
    assert user_parts[0]["metadata"]["chunks"] == len(user_parts)


def test_empty_sides_are_skipped(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider()
    provider.memory_sync(turn=Turn(user="  ", assistant=""), session=ALICE)
    assert not [r for r in fake.requests if r.path.endswith("/messages")]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [("per-session", "u-alice--s-s1"), ("global", "u-alice--global")],
)
def test_session_strategy(
    make_provider: MakeProvider, fake: FakeHoncho, strategy: str, expected: str
) -> None:
    make_provider(session_strategy=strategy).memory_sync(
        turn=Turn(user="hi there", assistant="hello"), session=ALICE
    )
    assert f"/v3/workspaces/ws/sessions/{expected}/messages" in fake.paths("POST")


def test_per_directory_strategy(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    make_provider(session_strategy="per-directory").memory_sync(
        turn=Turn(user="hi there", assistant="hello"), session=ALICE
    )
    [path] = [p for p in fake.paths("POST") if p.endswith("/messages")]
    assert path.startswith("/v3/workspaces/ws/sessions/u-alice--dir-")


def test_no_user_id_uses_peer_name(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    make_provider(peer_name="owner").memory_sync(
        turn=Turn(user="hi there", assistant="hello"), session=SessionInfo("s9")
    )
    assert "/v3/workspaces/ws/sessions/owner--s-s9/messages" in fake.paths("POST")


def test_odd_user_ids_get_distinct_safe_peers(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider()
    for user in ("a.b", "a_b", "hermes", "ünï cödé"):
        provider.memory_sync(
            turn=Turn(user="hi there", assistant="hello"), session=SessionInfo("s", user_id=user)
        )
    peers = {
        m["peer_id"]
        for r in fake.requests
        if r.path.endswith("/messages")
        for m in r.body["messages"]
    }
    peers.discard("hermes")
    assert len(peers) == 4
    assert all(p.replace("-", "").replace("_", "").isalnum() and p.isascii() for p in peers)


def test_the_fake_refuses_ids_honcho_refuses(fake: FakeHoncho, honcho_env: str) -> None:
    """So the odd-id tests below prove what reaches the wire is Honcho-safe."""
    headers = {"Authorization": f"Bearer {honcho_env}"}
    with httpx.Client(base_url=fake.base_url, headers=headers) as client:
        assert client.post("/v3/workspaces", json={"id": "ws"}).status_code == 200
        assert client.post("/v3/workspaces/ws/peers", json={"id": "bob\n"}).status_code == 422
        assert client.post("/v3/workspaces/ws/peers", json={"id": "x" * 101}).status_code == 422
        assert client.post("/v3/workspaces/ws/peers", json={"id": "u-bob"}).status_code == 200


@pytest.mark.parametrize("user", ["bob\n", "bob smith", "Bob", "ｂｏｂ", "x" * 1_000])
def test_odd_user_and_session_ids_reach_honcho_in_its_alphabet(
    make_provider: MakeProvider, fake: FakeHoncho, user: str
) -> None:
    provider = make_provider()
    session = SessionInfo("chat 42\n" + "s" * 200, user_id=user)
    provider.memory_sync(turn=Turn(user="I keep zqodd here", assistant="ok"), session=session)
    assert "zqodd" in (provider.memory_prefetch(query="where is zqodd?", session=session) or "")
    assert all(r.path.isascii() and "%" not in r.path for r in fake.requests)
    bob = SessionInfo("chat 42\n" + "s" * 200, user_id="bob")
    assert "zqodd" not in (provider.memory_prefetch(query="where is zqodd?", session=bob) or "")


def test_the_empty_user_id_is_refused(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider()
    empty = SessionInfo("s1", user_id="")
    with pytest.raises(InvalidPrincipal):
        provider.memory_sync(turn=Turn(user="hello there", assistant="hi"), session=empty)
    with pytest.raises(InvalidPrincipal):
        provider.memory_prefetch(query="what do I like?", session=empty)
    refused = tool(provider, empty, "honcho_search", query="like")
    assert refused["ok"] is False and "pass user_id=None" in refused["error"]
    assert fake.requests == []


def test_separator_in_ids_cannot_merge_two_users_sessions(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider()
    for session in (SessionInfo("b--s1", user_id="a"), SessionInfo("s1", user_id="a--b")):
        provider.memory_sync(turn=Turn(user="hi there", assistant="hello"), session=session)
    paths = {p for p in fake.paths("POST") if p.endswith("/messages")}
    assert len(paths) == 2


def test_session_switch_continues_the_parent(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider()
    child = SessionInfo("s2", user_id="alice", parent_session_id="s1")
    provider.memory_session_switch(session=child, parent_session_id="s1")
    provider.memory_sync(turn=Turn(user="hi there", assistant="hello"), session=child)
    assert "/v3/workspaces/ws/sessions/u-alice--s-s1/messages" in fake.paths("POST")


# --- prefetch -------------------------------------------------------------------------------


def test_prefetch_recalls_card_conclusions_and_messages(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider()
    provider.memory_sync(
        turn=Turn(user="my cat is called zqmarmalade", assistant="Lovely name."), session=ALICE
    )
    assert tool(provider, ALICE, "honcho_conclude", content="Owns a cat named zqmarmalade")["ok"]
    assert tool(provider, ALICE, "honcho_profile", action="update", card=["Name: Alice"])["ok"]
    fake.requests.clear()
    recalled = provider.memory_prefetch(query="what is zqmarmalade doing?", session=ALICE)
    assert recalled is not None
    assert "Name: Alice" in recalled
    assert "- Owns a cat named zqmarmalade" in recalled
    assert "[user] my cat is called zqmarmalade" in recalled
    assert "<memory-context>" not in recalled  # the core wraps it
    search = next(r for r in fake.requests if r.path == "/v3/workspaces/ws/search")
    assert search.body["filters"] == {"metadata": {"hermes_user": "u-alice"}}
    context = next(r for r in fake.requests if r.path.endswith("/context"))
    assert context.path == "/v3/workspaces/ws/peers/u-alice/context"
    assert context.query["search_query"] == "what is zqmarmalade doing?"


def test_prefetch_excerpt_finds_a_token_deep_in_a_long_message(
    make_provider: MakeProvider,
) -> None:
    provider = make_provider()
    text = "filler " * 3_000 + "the vault code is zqdeep42 " + "filler " * 500
    provider.memory_sync(turn=Turn(user=text, assistant="ok"), session=ALICE)
    recalled = provider.memory_prefetch(query="what is zqdeep42", session=ALICE)
    assert recalled is not None and "zqdeep42" in recalled
    assert len(recalled) < 4 * provider.settings.context_tokens


@pytest.mark.parametrize("query", ["ok", "Thanks!", "continue", "  ", "thank you.", "go on"])
def test_trivial_prompts_start_no_request(
    make_provider: MakeProvider, fake: FakeHoncho, query: str
) -> None:
    provider = make_provider()
    assert provider.memory_prefetch(query=query, session=ALICE) is None
    assert fake.requests == []


def test_recall_mode_tools_skips_prefetch(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider(recall_mode="tools")
    assert provider.memory_prefetch(query="what do I like?", session=ALICE) is None
    assert fake.requests == []
    assert provider.memory_tools(session=ALICE)


def test_recall_mode_context_offers_no_tools(make_provider: MakeProvider) -> None:
    provider = make_provider(recall_mode="context")
    assert provider.memory_tools(session=ALICE) is None
    assert not tool(provider, ALICE, "honcho_search", query="x")["ok"]


def test_nothing_found_is_none(make_provider: MakeProvider) -> None:
    assert make_provider().memory_prefetch(query="what about zqnothing", session=ALICE) is None


# --- faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["401", "429", "500", "malformed", "delay"])
def test_faults_leave_prefetch_none_quickly(
    make_provider: MakeProvider,
    fake: FakeHoncho,
    caplog: pytest.LogCaptureFixture,
    honcho_env: str,
    kind: str,
) -> None:
    provider = make_provider()
    provider.memory_sync(turn=Turn(user="zqfault lives here", assistant="ok"), session=ALICE)
    caplog.set_level(logging.WARNING)
    with fake.faulty(kind, seconds=30.0):
        for _ in range(2):
            started = time.monotonic()
            assert provider.memory_prefetch(query="where is zqfault", session=ALICE) is None
            # before the held request could have been answered: no wait for it, no retry storm
            assert time.monotonic() - started < 30.0
    warnings = [r for r in caplog.records if "honcho recall failed" in r.getMessage()]
    assert len(warnings) == 1  # logged once, not per call
    assert honcho_env not in caplog.text
    # and it recovers once the fault is gone
    assert "zqfault" in (provider.memory_prefetch(query="where is zqfault", session=ALICE) or "")


def test_wrong_key_is_a_401_and_no_exception(
    make_provider: MakeProvider, fake: FakeHoncho, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HONCHO_API_KEY", "hk-wrong")
    provider = make_provider()
    assert provider.memory_prefetch(query="what do I like?", session=ALICE) is None
    assert tool(provider, ALICE, "honcho_search", query="like")["ok"] is False


def test_retry_gets_through_a_single_429(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider(max_retries=1)
    provider.memory_sync(turn=Turn(user="zqretry here", assistant="ok"), session=ALICE)
    fake.inject("429", times=1)
    assert "zqretry" in (provider.memory_prefetch(query="zqretry?", session=ALICE) or "")


def test_sync_failure_raises_for_the_core_to_log(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider()
    with fake.faulty("500"), pytest.raises(Exception, match="500"):
        provider.memory_sync(turn=Turn(user="hello there", assistant="hi"), session=ALICE)


# --- tools and user binding -------------------------------------------------------------------


def test_tool_schemas_are_prefixed(make_provider: MakeProvider) -> None:
    tools = make_provider().memory_tools(session=ALICE)
    names = {t["function"]["name"] for t in tools}
    assert names == {
        "honcho_search",
        "honcho_profile",
        "honcho_context",
        "honcho_conclude",
        "honcho_forget",
    }


def test_foreign_tool_name_is_not_ours(make_provider: MakeProvider) -> None:
    provider = make_provider()
    assert provider.memory_handle_tool(session=ALICE, name="mem0_search", arguments={}) is None


@pytest.mark.parametrize(
    ("name", "arguments", "needle"),
    [
        ("honcho_search", {}, "'query'"),
        ("honcho_search", {"query": "x", "limit": 0}, "'limit'"),
        ("honcho_search", {"query": "x", "bogus": 1}, "unknown argument"),
        ("honcho_profile", {"action": "delete"}, "'action'"),
        ("honcho_profile", {"action": "update", "card": "nope"}, "'card'"),
        ("honcho_conclude", {"content": ""}, "'content'"),
        ("honcho_conclude", {"content": "x", "replaces": "zzz"}, "not a record id"),
        ("honcho_forget", {"id": 42}, "'id'"),
        ("honcho_forget", {"id": "m:only"}, "not a record id"),
    ],
)
def test_bad_arguments_get_a_json_error(
    make_provider: MakeProvider, name: str, arguments: dict[str, Any], needle: str
) -> None:
    result = tool(make_provider(), ALICE, name, **arguments)
    assert result["ok"] is False
    assert needle in result["error"]


def test_profile_and_context_tools(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider()
    assert tool(provider, ALICE, "honcho_profile", action="read") == {"ok": True, "card": []}
    tool(provider, ALICE, "honcho_profile", action="update", card=["Prefers tea"])
    put = next(r for r in fake.requests if r.method == "PUT")
    assert put.path == "/v3/workspaces/ws/peers/u-alice/card"
    assert put.body == {"peer_card": ["Prefers tea"]}
    assert tool(provider, ALICE, "honcho_profile", action="read")["card"] == ["Prefers tea"]
    assert tool(provider, BOB, "honcho_profile", action="read")["card"] == []
    tool(provider, ALICE, "honcho_conclude", content="Works on compilers")
    context = tool(provider, ALICE, "honcho_context", query="compilers")
    assert context["peer_card"] == ["Prefers tea"]
    assert "Works on compilers" in context["representation"]
    created = next(r for r in fake.requests if r.path == "/v3/workspaces/ws/conclusions")
    assert created.body == {
        "conclusions": [
            {"observer_id": "u-alice", "observed_id": "u-alice", "content": "Works on compilers"}
        ]
    }


def test_backend_failure_in_a_tool_is_a_json_error(
    make_provider: MakeProvider, fake: FakeHoncho, honcho_env: str
) -> None:
    provider = make_provider()
    with fake.faulty("500"):
        result = tool(provider, ALICE, "honcho_search", query="anything")
    assert result["ok"] is False and "unavailable" in result["error"]
    assert honcho_env not in result["error"]


def test_bob_cannot_see_or_forget_alices_records(
    make_provider: MakeProvider, fake: FakeHoncho
) -> None:
    provider = make_provider()
    provider.memory_sync(turn=Turn(user="alice secret zqalice", assistant="ok"), session=ALICE)
    tool(provider, ALICE, "honcho_conclude", content="alice fact zqalice")
    found = tool(provider, ALICE, "honcho_search", query="zqalice")["results"]
    ids = {r["kind"]: r["id"] for r in found}
    assert set(ids) == {"message", "conclusion"}

    assert tool(provider, BOB, "honcho_search", query="zqalice")["results"] == []
    assert "zqalice" not in (provider.memory_prefetch(query="zqalice?", session=BOB) or "")
    for record_id in ids.values():
        refused = tool(provider, BOB, "honcho_forget", id=record_id)
        assert refused["ok"] is False and "no such record" in refused["error"]
        replaced = tool(provider, BOB, "honcho_conclude", content="bob wins", replaces=record_id)
        assert replaced["ok"] is False
    assert not [c for c in fake.store.conclusions.values() if c["content"] == "bob wins"]
    assert [r["id"] for r in tool(provider, ALICE, "honcho_search", query="zqalice")["results"]]
    assert len(tool(provider, ALICE, "honcho_search", query="zqalice")["results"]) == 2


def test_records_from_a_server_that_ignores_filters_are_dropped(
    make_provider: MakeProvider, fake: FakeHoncho, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = make_provider()
    provider.memory_sync(turn=Turn(user="alice keeps zqleak", assistant="ok"), session=ALICE)
    tool(provider, ALICE, "honcho_conclude", content="alice zqleak fact")
    original_search, original_query = fake._search, fake._query_conclusions
    monkeypatch.setattr(fake, "_search", lambda body: original_search({**body, "filters": None}))
    monkeypatch.setattr(
        fake, "_query_conclusions", lambda body: original_query({**body, "filters": None})
    )
    assert "zqleak" not in (provider.memory_prefetch(query="zqleak?", session=BOB) or "")
    assert tool(provider, BOB, "honcho_search", query="zqleak")["results"] == []


def test_forget_and_correct_own_records(make_provider: MakeProvider, fake: FakeHoncho) -> None:
    provider = make_provider()
    provider.memory_sync(turn=Turn(user="I live in zqparis", assistant="ok"), session=ALICE)
    [message] = tool(provider, ALICE, "honcho_search", query="zqparis")["results"]
    result = tool(
        provider, ALICE, "honcho_conclude", content="Lives in zqlyon", replaces=message["id"]
    )
    assert result["ok"] is True
    put = next(r for r in fake.requests if r.method == "PUT" and "/messages/" in r.path)
    assert put.body == {
        "metadata": {"hermes_session": "s1", "turn": 0, "hermes_forgotten": "u-alice"}
    }
    recalled = provider.memory_prefetch(query="zqparis or zqlyon?", session=ALICE) or ""
    assert "zqlyon" in recalled and "zqparis" not in recalled
    forgot = tool(provider, ALICE, "honcho_forget", id=result["id"])
    assert forgot == {"ok": True, "id": result["id"], "status": "deleted"}
    assert fake.store.conclusions == {}
    again = tool(provider, ALICE, "honcho_forget", id=result["id"])
    assert again["ok"] is False


# --- through a real host -----------------------------------------------------------------------


def test_loads_through_a_real_host(tmp_path: Path, honcho_config: dict[str, Any]) -> None:
    host = make_host(
        tmp_path,
        {"memory": {"provider": "honcho"}, "plugin_config": {"honcho": honcho_config}},
        builtins=None,
    )
    try:
        assert host.plugins.records["honcho"].status == "active"
        assert host.plugins.external_provider() == "honcho"
    finally:
        host.close()
