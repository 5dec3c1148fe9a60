"""hermes-agent 0.19's own loop (``AIAgent.run_conversation``) on our engine and memory:
64 turns with tool calls against a 16K loopback model, compaction through our code several
times, no request over the window, a valid transcript in the host, and a restart (a second
process) that carries on from our store."""

from __future__ import annotations

from pathlib import Path

from hermes_agent_support import make_home, need_hermes_agent, run_driver, workspace

need_hermes_agent()

from agent_model import AgentModel  # noqa: E402
from fake_openai import FakeLLM  # noqa: E402

import hermes_core as hc  # noqa: E402

WINDOW = 16_384


def test_sixty_four_turns_restart_and_store(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    files = workspace(tmp_path)

    def tool_for(n: int) -> tuple[str, dict[str, object]] | None:
        if n % 2 == 0:
            return "read_file", {"path": str(files / f"f{n % 6 + 1}.txt")}
        if n % 7 == 0:
            return "hc_memory", {"action": "add", "target": "memory", "content": f"fact {n}"}
        return None

    model = AgentModel(window=WINDOW, tool_for_turn=tool_for)
    with FakeLLM() as llm:
        llm.responder = model
        spec = {"base_url": llm.base_url, "session_id": "chat-1", "user_id": "alice"}
        first = run_driver(home, {**spec, "first": 1, "last": 40}, tmp_path)
        summaries_before = model.summaries
        second = run_driver(
            home,
            {
                **spec,
                "first": 41,
                "last": 64,
                "resume": True,
                "our_home": str(home / "hermes-context"),
            },
            tmp_path,
        )
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
    assert any("turn 64" in str(r.message.get("content")) for r in rows)
    assert any("[CONTEXT SUMMARY" in str(r.message.get("content")) for r in rows)
    host.close()
    # the model's memory writes went to our MEMORY.md (alice's), not hermes-agent's
    memory_files = list((home / "hermes-context").rglob("MEMORY.md"))
    assert memory_files and "fact 7" in memory_files[0].read_text(encoding="utf-8")
