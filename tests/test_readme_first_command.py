"""Issue 27 item 8: the README's first command does what the README says: in a fresh home,
with the core install and no summariser LLM, ``compress`` of the bundled example writes a
transcript whose middle is the deterministic fallback summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _first_command() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)\n```", text, re.S)
    assert block, "README has no bash block"
    return block.group(1).strip()


def test_the_first_command_makes_a_venv_installs_the_core_and_compresses() -> None:
    steps = [s.strip() for s in _first_command().split("&&")]
    assert steps[0].startswith("python3 -m venv ") and steps[1].startswith(". ")
    assert steps[2] == "pip install -e ."  # the core install: no extra needed offline
    assert steps[3] == "hermes-context compress examples/coding-session.json --out compressed.json"


def test_the_first_command_writes_the_fallback_summary_it_promises(tmp_path: Path) -> None:
    out = tmp_path / "compressed.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES")}
    env.update(HERMES_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    command = ["compress", "examples/coding-session.json", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "the deterministic fallback" in done.stderr
    messages = json.loads(out.read_text(encoding="utf-8"))
    summaries = [m for m in messages if str(m.get("content", "")).startswith("[CONTEXT SUMMARY")]
    assert len(summaries) == 1 and summaries[0]["role"] in ("user", "assistant")
    at = messages.index(summaries[0])
    assert messages[at - 1]["role"] != summaries[0]["role"]  # the roles still alternate
    assert "Fallback summary" in summaries[0]["content"]
