"""Platform mode: the real MemoryClient against the loopback fake of Mem0's REST API."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

pytest.importorskip("mem0")

from fake_mem0 import FakeMem0
from mem0_support import API_KEY

from hermes_core.testing import make_host
from hermes_core.types import SessionInfo, Turn

ALICE = SessionInfo("s-alice", "alice")
BOB = SessionInfo("s-bob", "bob")


def test_sync_then_prefetch_request_shapes(fake: FakeMem0, platform_config, build_provider):
    provider = build_provider(platform_config)
    provider.memory_sync(Turn("I keep bees in Lisbon", "Lovely, bees in Lisbon."), ALICE)
    recalled = provider.memory_prefetch("where are my bees?", ALICE)
    assert recalled == "- I keep bees in Lisbon\n- Lovely, bees in Lisbon."
    assert fake.paths() == ["/v1/ping/", "/v3/memories/add/", "/v3/memories/search/"]
    add, search = fake.requests[1], fake.requests[2]
    assert add.headers["Authorization"] == f"Token {API_KEY}"
    assert add.body["messages"] == [
        {"role": "user", "content": "I keep bees in Lisbon"},
        {"role": "assistant", "content": "Lovely, bees in Lisbon."},
    ]
    assert add.body["filters"]["user_id"] == "u-alice" and add.body["user_id"] == "u-alice"
    assert add.body["infer"] is False and add.body["metadata"]["session_id"] == "s-alice"
    assert search.body == {
        "query": "where are my bees?",
        "filters": {"user_id": "u-alice"},
        "top_k": 10,
    }
    assert provider.memory_prefetch("where are my bees?", BOB) is None


def test_default_principal_when_session_has_no_user(fake, platform_config, build_provider):
    provider = build_provider({**platform_config, "user_id": "owner"})
    provider.memory_sync(Turn("remember the yellow door", ""), SessionInfo("s"))
    assert fake.requests[-1].body["filters"]["user_id"] == "owner"
    assert provider.memory_prefetch("yellow door", SessionInfo("s")) == "- remember the yellow door"


def test_tools_happy_path(fake, platform_config, build_provider):
    provider = build_provider(platform_config)
    names = [tool["function"]["name"] for tool in provider.memory_tools(ALICE)]
    assert names == ["mem0_search", "mem0_add", "mem0_update", "mem0_delete"]
    added = json.loads(provider.memory_handle_tool(ALICE, "mem0_add", {"content": "Likes tea"}))
    memory_id = added["stored"][0]["id"]
    found = json.loads(provider.memory_handle_tool(ALICE, "mem0_search", {"query": "tea"}))
    assert [r["id"] for r in found["results"]] == [memory_id]
    updated = provider.memory_handle_tool(
        ALICE, "mem0_update", {"memory_id": memory_id, "content": "Likes green tea"}
    )
    assert json.loads(updated) == {"updated": memory_id, "memory": "Likes green tea"}
    assert fake.memories[memory_id]["memory"] == "Likes green tea"
    deleted = provider.memory_handle_tool(ALICE, "mem0_delete", {"memory_id": memory_id})
    assert json.loads(deleted) == {"deleted": memory_id}
    assert memory_id not in fake.memories
    assert provider.memory_handle_tool(ALICE, "other_tool", {}) is None


@pytest.mark.parametrize(
    ("name", "arguments", "needle"),
    [
        ("mem0_search", {}, "'query' is required"),
        ("mem0_search", {"query": "x", "limit": 0}, "'limit'"),
        ("mem0_search", {"query": "x", "user_id": "alice"}, "unknown argument"),
        ("mem0_add", {"content": "   "}, "'content'"),
        ("mem0_update", {"memory_id": "x"}, "'content'"),
        ("mem0_delete", {"memory_id": 7}, "'memory_id'"),
    ],
)
def test_bad_arguments_are_json_errors(platform_config, build_provider, name, arguments, needle):
    provider = build_provider(platform_config)
    answer = json.loads(provider.memory_handle_tool(ALICE, name, arguments))
    assert needle in answer["error"]


def test_bob_cannot_touch_alices_record(fake, platform_config, build_provider):
    provider = build_provider(platform_config)
    secret_id = fake.seed("u-alice", "alice's locker code is 4417")
    for name, arguments in [
        ("mem0_delete", {"memory_id": secret_id}),
        ("mem0_update", {"memory_id": secret_id, "content": "hijacked"}),
    ]:
        answer = json.loads(provider.memory_handle_tool(BOB, name, arguments))
        assert "belongs to this user" in answer["error"]
    assert fake.memories[secret_id]["memory"] == "alice's locker code is 4417"
    assert "DELETE" not in {r.method for r in fake.requests}
    assert "PUT" not in {r.method for r in fake.requests}
    search = json.loads(provider.memory_handle_tool(BOB, "mem0_search", {"query": "locker code"}))
    assert search == {"results": []}


def test_leaky_server_results_are_dropped(fake, platform_config, build_provider):
    fake.ignore_filters = True
    fake.seed("u-alice", "alice's locker code is 4417")
    fake.seed("u-bob", "bob's locker is broken")
    provider = build_provider(platform_config)
    assert provider.memory_prefetch("locker", BOB) == "- bob's locker is broken"
    found = json.loads(provider.memory_handle_tool(BOB, "mem0_search", {"query": "locker"}))
    assert [r["memory"] for r in found["results"]] == ["bob's locker is broken"]


@pytest.mark.parametrize("fault", [401, 429, 500, "delay", "malformed"])
def test_faults_leave_prefetch_none_quickly(fake, platform_config, build_provider, fault, caplog):
    fake.seed("u-alice", "alice likes kites")
    provider = build_provider(platform_config)
    assert provider.memory_prefetch("kites", ALICE) == "- alice likes kites"
    fake.set_fault(fault)
    caplog.set_level(logging.WARNING)
    started = time.monotonic()
    assert provider.memory_prefetch("kites", ALICE) is None
    # a held request is held until the fault is cleared: returning at all proves no wait;
    # the bound only catches a retry storm
    assert time.monotonic() - started < 30.0
    answer = json.loads(provider.memory_handle_tool(ALICE, "mem0_search", {"query": "kites"}))
    assert answer["retryable"] is True
    with pytest.raises(Exception):  # noqa: B017 - sync may raise; the core logs it
        provider.memory_sync(Turn("more kites", "ok"), ALICE)
    fake.set_fault(None)  # a held request may still land once released: both are fine
    assert provider.memory_prefetch("kites", ALICE).startswith("- alice likes kites")
    assert API_KEY not in caplog.text
    ours = [r for r in caplog.records if r.name == "hermes_context.plugins.mem0"]
    assert len(ours) == 1  # once per failure streak


def test_bad_key_at_first_call(fake, platform_config, build_provider, monkeypatch):
    monkeypatch.setenv("MEM0_API_KEY", "m0-wrong")
    provider = build_provider(platform_config)  # the ping waits for the first call
    assert provider.memory_prefetch("anything", ALICE) is None
    assert fake.paths() == ["/v1/ping/"]


def test_circuit_breaker_pauses_and_recovers(fake, platform_config, build_provider):
    now = [1000.0]
    provider = build_provider(platform_config, clock=lambda: now[0])
    provider.memory_prefetch("warm up", ALICE)
    fake.set_fault(500)
    for _ in range(5):
        assert provider.memory_prefetch("kites", ALICE) is None
    sent = len(fake.requests)
    assert provider.memory_prefetch("kites", ALICE) is None
    answer = json.loads(provider.memory_handle_tool(ALICE, "mem0_search", {"query": "kites"}))
    assert "paused" in answer["error"]
    assert len(fake.requests) == sent  # nothing went out while open
    fake.set_fault(None)
    now[0] += 119.0
    assert provider.memory_prefetch("kites", ALICE) is None and len(fake.requests) == sent
    now[0] += 2.0
    fake.seed("u-alice", "alice likes kites")
    assert provider.memory_prefetch("kites", ALICE) == "- alice likes kites"
    assert provider.breaker.failures == 0


def test_loads_through_a_real_host(fake, platform_config, tmp_path):
    config: dict[str, Any] = {
        "memory": {"provider": "mem0"},
        "plugin_config": {"mem0": dict(platform_config)},
    }
    host = make_host(tmp_path / "home", config, builtins=None)
    try:
        assert host.plugins.records["mem0"].status == "active"
        assert host.plugins.external_provider() == "mem0"
        results = host.plugins.call("memory_prefetch", query="nothing here", session=ALICE)
        assert results == [] or results is None
    finally:
        host.close()
