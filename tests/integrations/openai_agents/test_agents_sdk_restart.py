"""A restart of the host process: the second process resumes the conversation from our store.

Each process is a real Python process running the SDK's ``Runner`` (agents_sdk_support.py as
a script) against one loopback model, sharing only ``$HERMES_HOME``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agents_sdk_support import WINDOW, require_agents

require_agents()

from fake_openai import FakeLLM  # noqa: E402
from fake_responses import RESPONSES, AgentModel, responses_units  # noqa: E402

import hermes_core as hc  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def host_process(llm: FakeLLM, home: Path, first: int, last: int) -> dict[str, int]:
    paths = [str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    script = str(HERE / "agents_sdk_support.py")
    args = [llm.base_url, str(home), "resume-1", "alice", str(first), str(last)]
    done = subprocess.run(
        [sys.executable, script, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_second_process_resumes_the_conversation_from_our_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeLLM() as llm:
        llm.add_route(RESPONSES)
        model = AgentModel(window=WINDOW)
        llm.responder = model
        first = host_process(llm, home, 0, 36)
        assert first["history"] == 0 and first["compactions"] >= 1
        asked = len(llm.requests)
        second = host_process(llm, home, 36, 44)
        # the second process started from the stored (compacted) view, not from nothing
        assert second["history"] > 0
        resumed = responses_units(llm.requests[asked].json)
        texts = " ".join(u.text for u in resumed)
        assert "turn 35:" in texts  # the first process's last turn is in its first request
        assert "turn 36:" in texts
        assert model.refused == [] and model.broken == []
    host = hc.Hermes.from_config({"model": {"context_length": WINDOW}}, home=home)
    store = host.session_store
    assert store is not None
    rows = store.messages("resume-1", include_archived=True)
    asks = [r.message["content"] for r in rows if r.message.get("role") == "user"]
    # every turn of both processes is stored once, in order
    numbers = [int(str(a).split(":")[0].split()[1]) for a in asks if str(a).startswith("turn ")]
    assert numbers == list(range(44))
    host.close()
