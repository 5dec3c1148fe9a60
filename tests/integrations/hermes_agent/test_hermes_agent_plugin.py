"""Our hermes-agent plugin objects as hermes-agent calls them, one method at a time: bad
input from the host is a clear log line and a harmless answer, never an exception out of the
host's turn; tool names never collide; two users never see each other's memory or sessions."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_agent_support import need_hermes_agent

need_hermes_agent()

from hermes_plugins.hermes_agent.engine import HermesContextEngine  # noqa: E402
from hermes_plugins.hermes_agent.provider import HermesContextMemory  # noqa: E402
from hermes_plugins.hermes_agent.runtime import HOME_ENV, runtime  # noqa: E402


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    ours = tmp_path / "ours"
    monkeypatch.setenv(HOME_ENV, str(ours))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "hermes"))
    # as in hermes-agent, where loading the plugin registers its observer; set here, not left
    # to whichever test registered it first in this process (xdist splits them)
    monkeypatch.setattr(runtime(), "observing", True)
    yield ours
    runtime().close_all()


def started(session_id: str, user: str | None) -> tuple[HermesContextMemory, HermesContextEngine]:
    """As hermes-agent does it: the provider first (it hears the user), then the engine."""
    memory = HermesContextMemory()
    memory.initialize(session_id, platform="telegram", user_id=user, agent_context="primary")
    engine = HermesContextEngine()
    engine.update_model("agent-model", 65_536)
    engine.on_session_start(session_id, platform="telegram", model="agent-model")
    return memory, engine


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_calls_before_session_start_are_logged_not_raised(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = HermesContextEngine()
    messages = [{"role": "user", "content": "hi"}]
    assert engine.compress(messages) is messages
    assert engine.should_compress(90_000) is False
    assert engine.should_compress_preflight(messages) is False
    result = json.loads(engine.handle_tool_call("hc_session_search", {"query": "x"}))
    assert "error" in result
    memory = HermesContextMemory()
    assert memory.prefetch("hello") == "" and memory.system_prompt_block() == ""
    memory.sync_turn("u", "a", messages=messages)
    assert "error" in json.loads(memory.handle_tool_call("hc_memory", {"action": "add"}))
    logged = errors(caplog)
    assert any("compress was called before on_session_start" in m for m in logged)
    assert any("before initialize" in m for m in logged)
    assert all(m.startswith("hermes-context: ") for m in logged)


def test_bad_values_from_the_host_are_refused_clearly(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _memory, engine = started("chat-bad", "alice")
    engine.update_from_response({"prompt_tokens": "12", "completion_tokens": 3})
    engine.update_from_response(None)  # type: ignore[arg-type]
    assert engine.last_prompt_tokens == 0
    engine.update_from_response({"prompt_tokens": 1_200, "completion_tokens": 30})
    assert (engine.last_prompt_tokens, engine.last_total_tokens) == (1_200, 1_230)
    odd: list[Any] = [{"role": "user", "content": "hi"}, object()]
    assert engine.compress(odd) is odd  # an object of an unknown type: unchanged
    assert engine.compress("not a list") == "not a list"  # type: ignore[arg-type]
    assert engine.compress([{"role": "user", "content": "x"}], focus_topic=7) is not None  # type: ignore[arg-type]
    assert engine.should_compress("many") is False  # type: ignore[arg-type]
    assert engine.has_content_to_compress(None) is False  # type: ignore[arg-type]
    assert "error" in json.loads(engine.handle_tool_call("lcm_grep", {}))
    logged = " | ".join(errors(caplog))
    for phrase in (
        "prompt_tokens must be a whole number",
        "usage must be a mapping",
        "messages must be a list",
        "focus_topic must be text",
        "expected a message dict, got object",
    ):
        assert phrase in logged, phrase


def test_the_hosts_minus_one_sentinel_is_no_error(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """hermes-agent sets ``last_prompt_tokens = -1`` after a compaction ("no real count yet")
    and may hand it back: that is unknown, not bad input."""
    _memory, engine = started("chat-sentinel", None)
    assert engine.should_compress(-1) is False
    messages = [{"role": "user", "content": "hi"}]
    assert engine.compress(messages, current_tokens=-1) == messages
    assert errors(caplog) == []


def test_tool_names_never_collide_with_hermes_agents(home: Path) -> None:
    memory = HermesContextMemory()
    before = {s["name"] for s in memory.get_tool_schemas()}  # asked before initialize
    assert before == {"hc_memory", "hc_session_search", "session_recall"}
    engine_tools = [s["name"] for s in HermesContextEngine().get_tool_schemas()]
    assert engine_tools == ["hc_session_search", "session_recall"]
    memory, engine = started("chat-tools", "ivy")
    assert {s["name"] for s in memory.get_tool_schemas()} == before
    added = json.loads(
        memory.handle_tool_call("hc_memory", {"action": "add", "target": "memory", "content": "x1"})
    )
    assert "error" not in added
    found = json.loads(engine.handle_tool_call("hc_session_search", '{"query": "x1"}'))
    assert "error" not in found
    # session_recall reaches our session's archive through the engine (empty so far)
    recalled = json.loads(engine.handle_tool_call("session_recall", {"ref": "1"}))
    assert recalled == {"success": False, "error": recalled["error"]}
    assert recalled["error"].startswith("not found: no message of this conversation")


def test_engine_copies_are_fresh_and_unbound(home: Path) -> None:
    _memory, engine = started("chat-copy", None)
    twin = copy.deepcopy(engine)
    assert twin is not engine and twin.context_length == 65_536
    assert twin.threshold_tokens == engine.threshold_tokens
    assert twin.get_status()["session_id"] is None and engine.get_status()["session_id"]


def test_two_users_never_see_each_others_memory_or_sessions(home: Path) -> None:
    alice_memory, alice_engine = started("chat-alice", "alice")
    alice_memory.handle_tool_call(
        "hc_memory", {"action": "add", "target": "user", "content": "Alice keeps bees"}
    )
    alice_memory.handle_tool_call(
        "hc_memory", {"action": "add", "target": "memory", "content": "apiary ledger in use"}
    )
    turn = [
        {"role": "user", "content": "Plan the zebrafish tank move"},
        {"role": "assistant", "content": "The zebrafish tank moves on Monday."},
    ]
    alice_memory.sync_turn("", "", messages=turn)
    alice_engine.on_session_end("chat-alice", turn)
    alice_memory.shutdown()

    bob_memory, bob_engine = started("chat-bob", "bob")
    block = bob_memory.system_prompt_block()
    assert "bees" not in block and "apiary" not in block
    hits = json.loads(bob_engine.handle_tool_call("hc_session_search", {"query": "zebrafish"}))
    assert hits["results"] == []
    bob_memory.shutdown()

    again, engine = started("chat-alice-2", "alice")
    assert "bees" in again.system_prompt_block()
    hits = json.loads(engine.handle_tool_call("hc_session_search", {"query": "zebrafish"}))
    assert hits["results"] and "zebrafish" in json.dumps(hits["results"])


def test_a_rotating_compaction_keeps_the_user(home: Path) -> None:
    _memory, engine = started("chat-rot", "carol")
    engine.on_session_start(
        "chat-rot-child", boundary_reason="compression", old_session_id="chat-rot"
    )
    assert engine.get_status()["session_id"] == "chat-rot-child"
    assert engine._need("test").info.user_id == "carol"  # opened at its first use


def test_host_defaults_yield_to_our_config(home: Path) -> None:
    """Inside hermes-agent: each user's own MEMORY.md and no second background review, unless
    our config.yaml says otherwise."""
    settings = runtime().host(home).settings
    assert settings.memory.per_user_memory is True
    assert (settings.memory.nudge_interval, settings.skills.creation_nudge_interval) == (0, 0)
    other = home.parent / "configured"
    other.mkdir()
    (other / "config.yaml").write_text(
        "memory:\n  per_user_memory: false\n  nudge_interval: 5\n", encoding="utf-8"
    )
    configured = runtime().host(other).settings
    assert configured.memory.per_user_memory is False and configured.memory.nudge_interval == 5


def long_chat(turns: int = 40) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in range(turns):
        said = f"Step {n}: rework parser module part {n}. " + "Context words. " * 30
        if n == 5:
            said += "Note: the invoice exporter depends on the legacy CSV dialect."
        out.append({"role": "user", "content": said})
        out.append({"role": "assistant", "content": f"Step {n} reworked. " + "Done. " * 30})
    return out


def test_compress_keeps_the_focus_topic_and_memory_context(home: Path) -> None:
    """hermes-agent's ``/compress <focus>`` and its memory providers' ``memory_context``
    reach our summary (the fallback here: no summariser configured)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("compression:\n  threshold_tokens: 3000\n", "utf-8")
    _memory, engine = started("chat-focus", "dana")
    messages = long_chat()
    out = engine.compress(
        messages,
        focus_topic="invoice exporter",
        force=True,
        memory_context="The user ships on Thursdays.",
    )
    assert len(out) < len(messages) and engine.compression_count == 1
    summary = next(str(m["content"]) for m in out if "CONTEXT SUMMARY" in str(m["content"]))
    assert "## Focus: invoice exporter" in summary and "legacy CSV dialect" in summary
    assert "ships on Thursdays" in summary
    assert engine.get_status()["compression_count"] == 1


def test_a_new_session_of_the_same_agent_keeps_its_user(home: Path) -> None:
    """``/new``: hermes-agent ends the old id, resets the engine, starts the new id."""
    _memory, engine = started("chat-old", "erin")
    engine.on_session_end("chat-old", [{"role": "user", "content": "hello"}])
    engine.on_session_reset()
    engine.on_session_start("chat-new", old_session_id="chat-old", platform="telegram")
    assert engine._need("test").info.user_id == "erin"


def test_one_session_id_never_serves_two_users(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _memory, engine = started("chat-shared", "frank")
    intruder = HermesContextMemory()
    intruder.initialize("chat-shared", platform="telegram", user_id="gina")
    assert intruder.system_prompt_block() == ""  # no session: refused, logged
    assert any("open for another user" in m for m in errors(caplog))
    assert engine._need("test").info.user_id == "frank"


def test_an_engine_without_our_memory_provider(home: Path) -> None:
    """The engine alone never learns the user: on a gateway its search is refused (it would
    span every user's sessions); in the CLI (one local user) it works. A fork that never
    compacts (hermes-agent's background review) opens no session at all."""
    gateway = HermesContextEngine()
    gateway.on_session_start("chat-gw", platform="telegram", model="agent-model")
    refused = json.loads(gateway.handle_tool_call("hc_session_search", {"query": "x"}))
    assert "user's identity" in refused["error"]
    cli = HermesContextEngine()
    cli.on_session_start("chat-cli", platform="cli", model="agent-model")
    assert "error" not in json.loads(cli.handle_tool_call("hc_session_search", {"query": "x"}))
    fork = HermesContextEngine()
    fork.on_session_start("fork-1", platform="cli", model="agent-model")
    fork.update_from_response({"prompt_tokens": 900, "completion_tokens": 10})
    fork.on_session_end("chat-cli", [{"role": "user", "content": "the parent's words"}])
    store = runtime().host(home).session_store
    assert store is not None and store.get_session("fork-1", user_id=None) is None


def test_broken_tool_pairs_are_mended_so_compaction_goes_on() -> None:
    """A result with no call before it is dropped, a call the conversation left behind gets a
    stub result, a call still open at the end stays open; a whole list stays as it was."""
    import hermes_core as hc
    from hermes_plugins.hermes_agent.pairs import MISSING_RESULT, paired

    def call(call_id: str) -> dict[str, object]:
        function = {"name": "ls", "arguments": "{}"}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}],
        }

    good = [
        {"role": "user", "content": "hi"},
        call("a"),
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "assistant", "content": "done"},
    ]
    assert paired(good) == (good, [])
    broken = [
        {"role": "user", "content": "hi"},
        call("lost"),
        {"role": "tool", "tool_call_id": "ghost", "content": "?"},
        {"role": "user", "content": "next"},
        call("open"),
    ]
    mended, notes = paired(broken)
    assert [m.get("tool_call_id") for m in mended if m["role"] == "tool"] == ["lost"]
    assert mended[2]["content"] == MISSING_RESULT and mended[-1] is broken[-1]
    assert len(notes) == 2 and hc.validate_messages(mended, allow_pending_tool_calls=True) == []


def test_the_engine_compacts_a_list_with_a_broken_pair(home: Path) -> None:
    engine = HermesContextEngine()
    engine.update_model("m", 8192)
    engine.on_session_start("broken-pairs", platform="cli", model="m")
    words = "lorem ipsum dolor sit amet " * 60
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    for turn in range(14):
        messages.append({"role": "user", "content": f"q{turn} {words}"})
        if turn == 3:
            function = {"name": "ls", "arguments": "{}"}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "lost", "type": "function", "function": function}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": "ghost", "content": words})
        messages.append({"role": "assistant", "content": f"a{turn} {words}"})
    out = engine.compress(messages, current_tokens=20_000)
    assert len(out) < len(messages) and engine.compression_count == 1
    import hermes_core as hc

    assert hc.validate_messages(out) == []


def test_an_early_decision_waits_for_the_overhead_and_compacts_as_optional(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost schedule weighs the messages alone: until hermes-agent's own prompt and tools
    are measured (at the first compaction) it takes no early decision; after, the compaction
    it asked for runs as optional (dropped if it cuts little), not forced."""
    _memory, engine = started("chat-early", "dana")
    session = engine._need("test")
    compressor = session.compressor
    messages = long_chat()
    tokens = compressor.count(messages) + 4_000  # hermes-agent's prompt and tools besides
    assert tokens < compressor.threshold_tokens

    def due() -> None:  # an account that says "due" for any prompt twice a tiny landing
        carry = compressor.carry
        carry.after = carry.summary_after = 100
        carry.estimated, carry.miss, carry.summariser = False, 0.0, 0.0

    due()
    assert engine.should_compress(tokens) is False and compressor.early_due
    engine.compress(messages, current_tokens=tokens, force=True)  # the user's /compress
    assert compressor.carry.fixed == 4_000
    due()
    calls: list[dict[str, Any]] = []
    real = session.compact
    monkeypatch.setattr(session, "compact", lambda *a, **k: calls.append(k) or real(*a, **k))
    grown = engine._need("test").view.sent + long_chat(10)
    assert engine.should_compress(compressor.count(grown) + 4_000) is True
    engine.compress(grown, current_tokens=compressor.count(grown) + 4_000)
    assert calls[-1]["optional"] is True and calls[-1]["force"] is False
    engine.compress(grown, current_tokens=compressor.count(grown) + 4_000, force=True)
    assert calls[-1]["optional"] is False and calls[-1]["force"] is True  # no decision pending
