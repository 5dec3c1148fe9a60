"""Local (OSS) mode for real: Memory.from_config, qdrant in path mode, loopback embeddings."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mem0")

from fake_mem0 import FakeMem0

from hermes_core.errors import ConfigError
from hermes_core.provider_kit import InvalidPrincipal
from hermes_core.types import SessionInfo, Turn

ALICE = SessionInfo("s-alice", "alice")
BOB = SessionInfo("s-bob", "bob")


def test_sync_prefetch_and_isolation(fake: FakeMem0, local_config, build_provider):
    provider = build_provider(local_config)
    provider.memory_sync(Turn("my favourite colour is teal zqx123", ""), ALICE)
    assert provider.memory_prefetch("which colour zqx123", ALICE) == (
        "- my favourite colour is teal zqx123"
    )
    assert provider.memory_prefetch("which colour zqx123", BOB) is None
    embeds = [r for r in fake.requests if r.path == "/v1/embeddings"]
    assert embeds and embeds[0].body["input"] == ["my favourite colour is teal zqx123"]
    assert not any("chat/completions" in r.path for r in fake.requests)  # infer=False


def test_tools_bound_to_user(fake, local_config, build_provider):
    provider = build_provider(local_config)
    stored = json.loads(provider.memory_handle_tool(ALICE, "mem0_add", {"content": "bees 4417"}))
    memory_id = stored["stored"][0]["id"]
    refused = json.loads(provider.memory_handle_tool(BOB, "mem0_delete", {"memory_id": memory_id}))
    assert "belongs to this user" in refused["error"]
    found = json.loads(provider.memory_handle_tool(ALICE, "mem0_search", {"query": "bees 4417"}))
    assert [r["id"] for r in found["results"]] == [memory_id]
    gone = json.loads(provider.memory_handle_tool(ALICE, "mem0_delete", {"memory_id": memory_id}))
    assert gone == {"deleted": memory_id}


def test_default_principal(fake, local_config, build_provider):
    provider = build_provider(local_config)
    provider.memory_sync(Turn("the yellow door zqy", ""), SessionInfo("s"))
    record = provider.backend.search("yellow door zqy", "solo", 5)[0]
    assert record["user_id"] == "solo"


@pytest.mark.parametrize("variant", ["bob ", " bob", "bob\n", "\tbob", "Bob", "bob smith"])
def test_ids_mem0_would_trim_or_refuse_stay_apart(fake, local_config, build_provider, variant):
    """Mem0 trims user ids and refuses inner whitespace; the canonical id has neither."""
    provider = build_provider(local_config)
    bob, other = SessionInfo("s", "bob"), SessionInfo("s", variant)
    provider.memory_sync(Turn("bob keeps zqbob here", ""), bob)
    provider.memory_sync(Turn("the variant keeps zqvar here", ""), other)
    stored = json.loads(provider.memory_handle_tool(other, "mem0_add", {"content": "zqtool"}))
    assert stored["stored"], stored
    assert "zqvar" not in (provider.memory_prefetch("zqvar zqtool", bob) or "")
    assert "zqtool" not in (provider.memory_prefetch("zqvar zqtool", bob) or "")
    assert "zqbob" not in (provider.memory_prefetch("zqbob", other) or "")
    assert "zqvar" in (provider.memory_prefetch("zqvar", other) or "")
    owners = {r["user_id"] for r in provider.backend.search("zqbob zqvar zqtool", "u-bob", 50)}
    assert owners == {"u-bob"}


def test_the_empty_user_id_is_refused(fake, local_config, build_provider):
    provider = build_provider(local_config)
    empty = SessionInfo("s", "")
    with pytest.raises(InvalidPrincipal):
        provider.memory_sync(Turn("the empty one keeps zqempty", ""), empty)
    with pytest.raises(InvalidPrincipal):
        provider.memory_prefetch("zqempty", empty)
    answer = json.loads(provider.memory_handle_tool(empty, "mem0_add", {"content": "zqempty"}))
    assert "pass user_id=None" in answer["error"]
    assert provider.memory_prefetch("zqempty", SessionInfo("s")) is None


def test_embeddings_down_leaves_prefetch_none(fake, local_config, build_provider):
    provider = build_provider(local_config)
    fake.set_fault(500)
    assert provider.memory_prefetch("anything at all", ALICE) is None


def test_bad_oss_config_is_a_config_error(build_provider, mem0_env):
    with pytest.raises(ConfigError, match=r"plugin_config\.mem0\.oss_config"):
        build_provider({"mode": "oss", "oss_config": {"vector_store": {"provider": "nope"}}})
