"""hermes-agent 0.19's own loop (``AIAgent.run_conversation``) on our engine and memory:
32 turns with tool calls against a 16K loopback model, compaction through our code several
times, no request over the window, a valid transcript in the host, a restart (a second
process) that carries on from our store, and a second user who sees none of the first's."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_agent_support import make_home, need_hermes_agent, run_driver, workspace

need_hermes_agent()

from agent_model import AgentModel  # noqa: E402
from fake_openai import FakeLLM  # noqa: E402

import hermes_core as hc  # noqa: E402

WINDOW = 16_384
THRESHOLD = 6_000
FIRST, LAST = 20, 32  # the first process runs turns 1..FIRST, the restarted one to LAST


def test_thirty_two_turns_restart_and_store(tmp_path: Path) -> None:
    # a lower trigger than the 10K default crosses the same compaction and restart points in
    # half the turns (the run's length is its cost)
    home = make_home(tmp_path, threshold_tokens=THRESHOLD)
    files = workspace(tmp_path)

    def tool_for(n: int) -> tuple[str, dict[str, object]] | None:
        if n == 101:  # bob, in his own session, searches for what alice did
            return "hc_session_search", {"query": "turn"}
        if n == 102:
            return "hc_memory", {"action": "add", "target": "user", "content": "bob likes tea"}
        if n % 2 == 0:
            return "read_file", {"path": str(files / f"f{n % 6 + 1}.txt")}
        if n % 7 == 0:
            return "hc_memory", {"action": "add", "target": "memory", "content": f"fact {n}"}
        return None

    model = AgentModel(window=WINDOW, tool_for_turn=tool_for)
    with FakeLLM() as llm:
        llm.responder = model
        spec = {"base_url": llm.base_url, "session_id": "chat-1", "user_id": "alice"}
        first = run_driver(home, {**spec, "first": 1, "last": FIRST}, tmp_path)
        summaries_before = model.summaries
        restart_at = len(llm.requests)
        second = run_driver(
            home,
            {
                **spec,
                "first": FIRST + 1,
                "last": LAST,
                "resume": True,
                "our_home": str(home / "hermes-context"),
            },
            tmp_path,
        )
        resumed = llm.requests[restart_at].text
        seen_by_alice = len(llm.requests)
        bob = run_driver(
            home,
            {**spec, "session_id": "chat-2", "user_id": "bob", "first": 101, "last": 103},
            tmp_path,
        )
        bob_requests = [r.text for r in llm.requests[seen_by_alice:]]
    # the restarted host's first request carries on from our store: the summary and the tail
    assert "CONTEXT SUMMARY" in resumed and f"turn {FIRST}: please continue" in resumed
    assert f"turn {FIRST + 1}: please continue" in resumed
    # bob never sees alice's memory or sessions: not in his prompts, not from his search
    assert bob_requests and not any("fact 7" in text for text in bob_requests)
    search = next(m for m in bob["messages"] if m.get("role") == "tool")
    assert json.loads(search["content"])["results"] == []
    # our engine ran the host's compaction, several times, and nothing went over the window
    assert first["engine"] == second["engine"] == "HermesContextEngine"
    assert first["compression_count"] >= 3, first["stderr"][-3000:]
    assert second["compression_count"] >= 1
    assert model.rejected == [] and max(model.sizes) <= WINDOW
    assert summaries_before == model.summaries == 0  # no summariser configured: our fallback
    assert {"hc_memory", "hc_session_search", "memory", "read_file"} <= set(first["tools"])
    # the host's transcript stays valid for its provider (every tool call answered)
    for run in (first, second):
        assert hc.validate_messages(run["messages"]) == []
        assert any("[CONTEXT SUMMARY" in str(m.get("content")) for m in run["messages"])
    # our store holds the conversation under hermes-agent's session id, for alice only
    host = hc.Hermes.from_config({}, home=home / "hermes-context")
    store = host.session_store
    assert store is not None
    record = store.get_session("chat-1", user_id="alice")
    assert record is not None
    assert store.get_session("chat-1", user_id="bob") is None
    rows = store.messages("chat-1")
    assert any(f"turn {LAST}" in str(r.message.get("content")) for r in rows)
    assert any("[CONTEXT SUMMARY" in str(r.message.get("content")) for r in rows)
    host.close()
    # the model's memory writes went to our MEMORY.md (alice's), not hermes-agent's
    memory_files = list((home / "hermes-context").rglob("MEMORY.md"))
    assert memory_files and "fact 7" in memory_files[0].read_text(encoding="utf-8")


def test_compress_with_a_focus_through_the_hosts_own_path(tmp_path: Path) -> None:
    """``/compress deploy window``: hermes-agent's own compaction path (its lock, its
    memory-provider hook, its signature filter) hands the focus to our engine."""
    home = make_home(tmp_path)
    files = workspace(tmp_path)
    model = AgentModel(
        window=WINDOW,
        tool_for_turn=lambda n: ("read_file", {"path": str(files / "f1.txt")}) if n % 2 else None,
    )
    with FakeLLM() as llm:
        llm.responder = model
        spec = {"base_url": llm.base_url, "session_id": "chat-f", "first": 1, "last": 14}
        notes = {"4": "The deploy window is Tuesday 04:00 UTC, never Friday."}
        done = run_driver(home, {**spec, "notes": notes, "focus": "deploy window"}, tmp_path)
    assert done["compression_count"] >= 1
    summaries = [
        str(m["content"]) for m in done["messages"] if "CONTEXT SUMMARY" in str(m["content"])
    ]
    summary = summaries[-1]
    assert "## Focus: deploy window" in summary and "Tuesday 04:00 UTC" in summary
    assert hc.validate_messages(done["messages"]) == []


def test_a_host_that_rotates_session_ids_on_compaction(tmp_path: Path) -> None:
    """hermes-agent with ``compression.in_place: false`` continues in a child session id after
    each compaction; ours follows it there, for the same user."""
    home = make_home(tmp_path, threshold_tokens=THRESHOLD, in_place=False)
    files = workspace(tmp_path)
    model = AgentModel(
        window=WINDOW,
        tool_for_turn=lambda n: (
            ("read_file", {"path": str(files / f"f{n % 6 + 1}.txt")}) if n % 2 == 0 else None
        ),
    )
    with FakeLLM() as llm:
        llm.responder = model
        spec = {"base_url": llm.base_url, "session_id": "chat-r", "user_id": "hana"}
        done = run_driver(home, {**spec, "first": 1, "last": 18, "session_db": True}, tmp_path)
    assert done["compression_count"] >= 2 and done["session_id"] != "chat-r"
    assert model.rejected == [] and hc.validate_messages(done["messages"]) == []
    host = hc.Hermes.from_config({}, home=home / "hermes-context")
    store = host.session_store
    assert store is not None
    mine = store.list_sessions(user_id="hana")
    assert len(mine) >= 3  # the first id and a child per compaction, all hana's
    assert store.list_sessions(user_id=None) == []  # none lost its user on the way
    host.close()
