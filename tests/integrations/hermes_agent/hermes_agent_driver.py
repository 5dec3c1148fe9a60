"""One hermes-agent process for the tests: ``python hermes_agent_driver.py SPEC.json``.

Builds hermes-agent's own ``AIAgent`` (its loop, its plugin loader, our engine and memory
provider from the config in ``$HERMES_HOME``) against the loopback agent model, runs the turns
the spec names and prints one JSON line: what the host kept and what our engine reported.
With ``resume``, the history comes from our store (a restarted host carrying on).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main(spec: dict[str, Any]) -> dict[str, Any]:
    from run_agent import AIAgent

    history: list[dict[str, Any]] = []
    if spec.get("resume"):
        import hermes_core as hc

        home = spec["our_home"]
        host = hc.Hermes.from_config({}, home=home)
        store = host.session_store
        assert store is not None
        history = [dict(r.message) for r in store.messages(spec["session_id"])]
        host.close()
    session_db = None
    if spec.get("session_db"):  # hermes-agent's own store, as its CLI opens it
        from hermes_state import SessionDB

        session_db = SessionDB()
    agent = AIAgent(
        session_db=session_db,
        base_url=spec["base_url"],
        api_key="sk-loopback",
        model="agent-model",
        quiet_mode=True,
        enabled_toolsets=["file", "todo", "memory"],
        session_id=spec["session_id"],
        user_id=spec.get("user_id"),
        skip_context_files=True,
        max_iterations=8,
    )
    engine = agent.context_compressor
    times = []
    notes = spec.get("notes", {})
    for n in range(spec["first"], spec["last"] + 1):
        started = time.perf_counter()
        text = f"turn {n}: please continue. {notes.get(str(n), '')}".strip()
        result = agent.run_conversation(text, conversation_history=history)
        times.append(time.perf_counter() - started)
        history = result["messages"]
    if spec.get("focus"):  # the user types /compress <focus>: the host's own path for it
        assert engine.has_content_to_compress(history)
        history, _prompt = agent._compress_context(
            history, "", focus_topic=spec["focus"], force=True
        )
    agent.shutdown_memory_provider(history)  # the host's own exit: provider and engine end
    return {
        "session_id": agent.session_id,
        "engine": type(engine).__name__,
        "compression_count": engine.compression_count,
        "tools": sorted(t["function"]["name"] for t in agent.tools),
        "messages": history,
        "times": times,
    }


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        out = main(json.load(handle))
    print("RESULT " + json.dumps(out))
