"""The provider against the real SDK and a loopback fake: shapes, faults, user binding."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("supermemory")

from fake_supermemory import API_KEY, FakeServer
from supermemory_support import ENV, host_for, provider_config

from hermes_core.errors import ProviderError
from hermes_core.provider_kit import InvalidPrincipal, principal
from hermes_core.testing import plugin_context
from hermes_core.types import SessionInfo, Turn
from hermes_plugins.supermemory import SupermemoryProvider

ALICE = SessionInfo(session_id="s-alice", user_id="alice")
BOB = SessionInfo(session_id="s-bob", user_id="bob")


@pytest.fixture
def provider(fake: FakeServer, api_key: str, tmp_path: Path) -> Iterator[SupermemoryProvider]:
    plugin = SupermemoryProvider(
        plugin_context("supermemory", tmp_path, provider_config(fake, timeout=0.5))
    )
    yield plugin
    plugin.memory_shutdown()


def tool(provider: SupermemoryProvider, session: SessionInfo, name: str, **args: object) -> dict:
    answer = provider.memory_handle_tool(session=session, name=name, arguments=args)
    assert answer is not None
    result: dict = json.loads(answer)
    return result


# --- happy paths ---------------------------------------------------------------------------


def test_sync_then_prefetch(provider: SupermemoryProvider, fake: FakeServer) -> None:
    provider.memory_sync(
        turn=Turn(user="My cat is called Zephyrine.", assistant="Noted!", turn_index=3),
        session=ALICE,
    )
    add = fake.requests[-1]
    assert (add.method, add.path) == ("POST", "/ns/hermes_u-alice/document")
    assert add.headers["Authorization"] == f"Bearer {API_KEY}"
    assert add.body["content"] == "User: My cat is called Zephyrine.\n\nAssistant: Noted!"
    assert add.body["metadata"] == {
        "session_id": "s-alice",
        "turn_index": 3,
        "source": "turn",
        "hermes_container": "hermes_u-alice",
    }

    recalled = provider.memory_prefetch(query="what is my cat called zephyrine?", session=ALICE)
    assert recalled == "- User: My cat is called Zephyrine. Assistant: Noted!"
    search = fake.requests[-1]
    assert (search.method, search.path) == ("POST", "/ns/hermes_u-alice/search")
    assert search.body["query"] == "what is my cat called zephyrine?"
    assert search.body["limit"] == 5
    assert search.body["filter"] == {
        "field": "hermes_container",
        "operator": "eq",
        "value": "hermes_u-alice",
    }


def test_prefetch_skips_trivial_and_empty(provider: SupermemoryProvider, fake: FakeServer) -> None:
    assert provider.memory_prefetch(query="ok", session=ALICE) is None
    assert fake.requests == []
    assert provider.memory_prefetch(query="nothing stored yet", session=ALICE) is None


def test_sync_skips_empty_turn(provider: SupermemoryProvider, fake: FakeServer) -> None:
    provider.memory_sync(turn=Turn(user="  ", assistant=""), session=ALICE)
    assert fake.requests == []


def test_no_user_uses_default_principal(provider: SupermemoryProvider, fake: FakeServer) -> None:
    provider.memory_sync(turn=Turn(user="hello there", assistant="hi"), session=SessionInfo("s"))
    assert fake.requests[-1].path == "/ns/hermes_default/document"


def test_tools_store_search_forget(provider: SupermemoryProvider, fake: FakeServer) -> None:
    names = [schema["function"]["name"] for schema in provider.memory_tools(session=ALICE) or []]
    assert names == ["supermemory_store", "supermemory_search", "supermemory_forget"]

    stored = tool(provider, ALICE, "supermemory_store", content="Prefers tabs over spaces")
    assert stored["ok"] is True
    assert fake.requests[-1].body["metadata"]["source"] == "tool"

    found = tool(provider, ALICE, "supermemory_search", query="tabs", limit=3)
    assert found["count"] == 1
    assert found["results"][0]["document_id"] == stored["document_id"]
    assert fake.requests[-1].body["include"] == {"documents": True}

    gone = tool(provider, ALICE, "supermemory_forget", document_id=stored["document_id"])
    assert gone == {"ok": True, "deleted": stored["document_id"]}
    get, delete = fake.requests[-2:]
    assert (get.method, get.path) == ("GET", f"/ns/hermes_u-alice/document/{stored['document_id']}")
    assert (delete.method, delete.body) == ("DELETE", {"ids": [stored["document_id"]]})
    assert tool(provider, ALICE, "supermemory_search", query="tabs")["count"] == 0


def test_tool_bad_arguments_are_json_errors(
    provider: SupermemoryProvider, fake: FakeServer
) -> None:
    assert provider.memory_handle_tool(session=ALICE, name="mem0_search", arguments={}) is None
    assert "error" in tool(provider, ALICE, "supermemory_store", content="")
    assert "error" in tool(provider, ALICE, "supermemory_search", query="x", limit=0)
    assert "error" in tool(provider, ALICE, "supermemory_search", query="x", limit="3")
    assert "error" in tool(provider, ALICE, "supermemory_search")
    for bad in ["", "../hermes_u-bob/document/doc1", "a/b", "x" * 200, 7, "doc1\n"]:
        assert "error" in tool(provider, ALICE, "supermemory_forget", document_id=bad)
    assert fake.requests == []  # nothing reached the server


# --- user binding --------------------------------------------------------------------------


def test_bob_cannot_see_or_delete_alice(provider: SupermemoryProvider, fake: FakeServer) -> None:
    secret = tool(provider, ALICE, "supermemory_store", content="Alice's bank is Quixbank")
    doc_id = secret["document_id"]

    assert provider.memory_prefetch(query="which bank is Quixbank", session=BOB) is None
    assert tool(provider, BOB, "supermemory_search", query="Quixbank")["count"] == 0
    refused = tool(provider, BOB, "supermemory_forget", document_id=doc_id)
    assert "belongs to this user" in refused["error"]
    assert doc_id in fake.docs
    assert all(r.path.startswith("/ns/hermes_u-bob/") for r in fake.requests[1:])


@pytest.mark.parametrize("user", ["bob\n", "bob smith", "Bob", "ｂｏｂ", "x" * 1_000])
def test_odd_user_ids_get_their_own_safe_namespace(
    provider: SupermemoryProvider, fake: FakeServer, user: str
) -> None:
    session = SessionInfo(session_id="chat 42\n", user_id=user)
    provider.memory_sync(turn=Turn(user="I keep zqodd here", assistant="ok"), session=session)
    tag = f"hermes_{principal(session, 'default')}"
    assert fake.requests[-1].path == f"/ns/{tag}/document"
    assert fake.requests[-1].body["metadata"]["hermes_container"] == tag
    assert "zqodd" in (provider.memory_prefetch(query="zqodd here", session=session) or "")
    assert provider.memory_prefetch(query="zqodd here", session=BOB) is None
    assert tool(provider, session, "supermemory_store", content="zqtool fact")["ok"]
    assert tool(provider, BOB, "supermemory_search", query="zqtool")["count"] == 0


def test_the_empty_user_id_is_refused(provider: SupermemoryProvider, fake: FakeServer) -> None:
    empty = SessionInfo(session_id="s", user_id="")
    with pytest.raises(InvalidPrincipal):
        provider.memory_sync(turn=Turn(user="hello there", assistant="hi"), session=empty)
    with pytest.raises(InvalidPrincipal):
        provider.memory_prefetch(query="hello there", session=empty)
    answer = tool(provider, empty, "supermemory_store", content="zqempty")
    assert "pass user_id=None" in answer["error"]
    assert fake.requests == []


def test_client_side_checks_hold_when_the_server_leaks(
    provider: SupermemoryProvider, fake: FakeServer
) -> None:
    doc_id = tool(provider, ALICE, "supermemory_store", content="Alice's PIN hint is Marmalade")[
        "document_id"
    ]
    fake.state.leak_namespaces = True  # a broken server: ignores namespace and filter
    assert provider.memory_prefetch(query="marmalade hint", session=BOB) is None
    assert tool(provider, BOB, "supermemory_search", query="marmalade")["count"] == 0
    refused = tool(provider, BOB, "supermemory_forget", document_id=doc_id)
    assert "error" in refused
    assert not any(r.method == "DELETE" for r in fake.requests)
    assert doc_id in fake.docs


# --- faults --------------------------------------------------------------------------------

FAULTS = [
    pytest.param({"status": 401}, "HTTP 401", id="401"),
    pytest.param({"status": 429}, "HTTP 429", id="429"),
    pytest.param({"status": 500}, "HTTP 500", id="500"),
    pytest.param({"delay": 30.0}, "did not answer", id="timeout"),
    pytest.param({"malformed": True}, "could not be read", id="malformed"),
]


@pytest.mark.parametrize(("fault", "logged"), FAULTS)
def test_prefetch_faults_return_none_quickly(
    provider: SupermemoryProvider,
    fake: FakeServer,
    caplog: pytest.LogCaptureFixture,
    fault: dict[str, object],
    logged: str,
) -> None:
    caplog.set_level(logging.DEBUG, logger="hermes_context.plugins.supermemory")
    with fake.faulty(**fault):  # type: ignore[arg-type]
        started = time.monotonic()
        assert provider.memory_prefetch(query="anything about cats", session=ALICE) is None
        assert provider.memory_prefetch(query="anything about dogs", session=ALICE) is None
        # before a held request could have been answered: no wait for it, no retry storm
        assert time.monotonic() - started < 30.0
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1  # once, not per call
    assert logged in warnings[0].getMessage()
    assert API_KEY not in caplog.text
    assert len([r for r in fake.requests if r.path.endswith("/search")]) == 2  # no retries


@pytest.mark.parametrize(("fault", "logged"), FAULTS)
def test_sync_and_tool_faults(
    fake: FakeServer, api_key: str, tmp_path: Path, fault: dict[str, object], logged: str
) -> None:
    config = provider_config(fake, timeout=0.5, max_retries=0)
    plugin = SupermemoryProvider(plugin_context("supermemory", tmp_path, config))
    with fake.faulty(**fault):  # type: ignore[arg-type]
        with pytest.raises(ProviderError, match=logged) as error:
            plugin.memory_sync(turn=Turn(user="hello world", assistant="hi"), session=ALICE)
        assert API_KEY not in str(error.value)
        answer = tool(plugin, ALICE, "supermemory_search", query="hello")
        assert logged in answer["error"]
        answer = tool(plugin, ALICE, "supermemory_forget", document_id="doc1")
        assert logged in answer["error"]
    plugin.memory_shutdown()


def test_sync_retries_a_server_error_once(provider: SupermemoryProvider, fake: FakeServer) -> None:
    with fake.faulty(status=500), pytest.raises(ProviderError):
        provider.memory_sync(turn=Turn(user="hello world", assistant="hi"), session=ALICE)
    assert len(fake.requests) == 2  # max_retries: 1 (the default)


def test_recovers_after_fault(
    provider: SupermemoryProvider, fake: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="hermes_context.plugins.supermemory")
    tool(provider, ALICE, "supermemory_store", content="Uses Neovim nightly")
    with fake.faulty(status=500):
        assert provider.memory_prefetch(query="neovim", session=ALICE) is None
    assert provider.memory_prefetch(query="neovim", session=ALICE) == "- Uses Neovim nightly"
    assert "answers again" in caplog.text


def test_wrong_key_is_401_and_never_logged(
    fake: FakeServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(ENV, "sm_wrong_key_value_123456")
    plugin = SupermemoryProvider(plugin_context("supermemory", tmp_path, provider_config(fake)))
    assert plugin.memory_prefetch(query="anything at all", session=ALICE) is None
    assert "HTTP 401" in caplog.text
    assert "sm_wrong_key_value_123456" not in caplog.text
    plugin.memory_shutdown()


# --- through a real host -------------------------------------------------------------------


def test_loads_through_a_real_host(fake: FakeServer, api_key: str, tmp_path: Path) -> None:
    host = host_for(tmp_path, fake)
    try:
        assert host.plugins.records["supermemory"].status == "active"
        assert host.plugins.external_provider() == "supermemory"
        answers = host.plugins.call("memory_tools", session=ALICE)
        names = {tool["function"]["name"] for tools in answers for tool in tools}
        assert "supermemory_search" in names
    finally:
        host.close()


def test_missing_extra_message(fake: FakeServer, api_key: str, tmp_path: Path) -> None:
    import sys

    saved = {k: v for k, v in sys.modules.items() if k.startswith("hermes_plugins.supermemory")}
    for name in saved:
        del sys.modules[name]
    sys.modules["supermemory"] = None  # type: ignore[assignment]
    from hermes_core.errors import MissingExtraError

    try:  # the provider the config names must load: the host refuses to start without it
        with pytest.raises(MissingExtraError) as raised:
            host_for(tmp_path, fake)
    finally:
        del sys.modules["supermemory"]
        sys.modules.update(saved)
    assert "[supermemory]'" in raised.value.install_hint
