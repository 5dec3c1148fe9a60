"""A session resumed in a new process carries on where the old one stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from host_support import assistant, make_hermes, user

CONFIG = {"model": {"context_length": 8_000}}

FIRST_PROCESS = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, sys.argv[2])
    from host_support import make_hermes, run_turns
    host = make_hermes(__import__("pathlib").Path(sys.argv[1]), {"model": {"context_length": 8000}})
    session = host.session("r1", user_id="carol")
    prompt = session.system_prompt("base")
    messages = [{"role": "system", "content": prompt}]
    prose = " ".join(f"Sentence {k} explains one more detail of the plan." for k in range(40))
    steps = [f"step {n}: {prose}" for n in range(16)]
    sent = run_turns(session, messages, steps, with_tools=False, usage_ratio=1.25)
    state = session.compressor.export_state()
    print(json.dumps({
        "prompt": prompt,
        "wire": sent[-1],
        "view": len(session.view.sent),
        "ratio": session.compressor.running.correction_ratio,
        "compactions": session.compressor.compactions,
        "previous_summary": session.compressor.previous_summary,
        "state_keys": sorted(state),
    }))
    sys.stdout.flush()
    os._exit(0)  # no close(): the process just ends, as a crash would
    """
)


def first_process(home: Path) -> dict[str, Any]:
    support = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", FIRST_PROCESS, str(home), support],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_new_process_resumes_the_same_session(tmp_path: Path) -> None:
    before = first_process(tmp_path)
    assert before["compactions"] >= 1 and before["previous_summary"]
    with make_hermes(tmp_path, CONFIG) as host:
        host.session("other").handle_tool_call(
            "memory", {"action": "add", "target": "memory", "content": "Written meanwhile."}
        )
        session = host.session("r1", user_id="carol")
        assert session.system_prompt("base") == before["prompt"]  # frozen across the restart
        assert len(session.view.sent) == before["view"]
        assert session.compressor.compactions == before["compactions"]
        assert session.compressor.previous_summary == before["previous_summary"]
        assert abs(session.compressor.running.correction_ratio - before["ratio"]) < 1e-9
        # the host hands in the list it last sent plus the reply and a new question
        messages = [*before["wire"], assistant("answer 15"), user("next")]
        wire = session.prepare(messages)
        assert wire[: len(before["wire"])] == before["wire"]
        rows = host.session_store.messages("r1")  # type: ignore[union-attr]
        contents = [r.message.get("content") for r in rows]
        assert contents.count("next") == 1 and contents.count("answer 15") == 1


def test_the_host_mark_survives_so_a_host_with_its_own_list_adds_nothing_twice(
    tmp_path: Path,
) -> None:
    own = [{"role": "system", "content": "sys"}, user("one")]
    with make_hermes(tmp_path) as host:
        host.session("h1").prepare(own)
    own += [assistant("two"), user("three")]
    with make_hermes(tmp_path) as host:
        session = host.session("h1")
        session.prepare(own)
        rows = host.session_store.messages("h1")  # type: ignore[union-attr]
        assert [r.message["content"] for r in rows] == ["sys", "one", "two", "three"]
