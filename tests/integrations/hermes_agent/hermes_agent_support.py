"""Shared plumbing of the hermes-agent tests: the skip-or-fail import rule, a hermes home with
our plugins installed and selected, and running the driver in its own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
REQUIRED = os.environ.get("HERMES_AGENT_REQUIRED") == "1"


def need_hermes_agent() -> None:
    """Skip without hermes-agent, unless the tox env says it must be there (then fail)."""
    for module in ("run_agent", "agent.context_engine", "agent.memory_provider"):
        if REQUIRED:
            __import__(module)
        else:
            pytest.importorskip(module)
    # hermes-agent's loader may have put its stand-in ``hermes_plugins`` package in place of
    # ours in this process: the door module takes ours back, as it does inside hermes-agent
    import hermes_context_hermes_agent  # noqa: F401


def make_home(root: Path, *, threshold_tokens: int = 10_000, in_place: bool = True) -> Path:
    """A hermes-agent home as a user sets it up: the install command, three config lines,
    and our own config (the trigger's cap) in its hermes-context folder."""
    from hermes_core.cli import main

    home = root / "hermes"
    home.mkdir(parents=True)
    assert main(["hermes-agent", "install", "--home", str(home)]) == 0
    (home / "config.yaml").write_text(
        "model:\n  context_length: 65536\n"
        f"compression:\n  in_place: {'true' if in_place else 'false'}\n"
        "context:\n  engine: hermes-context\n"
        "memory:\n  provider: hermes_context\n"
        "plugins:\n  enabled: [hermes-context]\n",
        encoding="utf-8",
    )
    ours = home / "hermes-context" / "config.yaml"  # the install wrote it; the user adds
    with ours.open("a", encoding="utf-8") as config:
        config.write(f"compression:\n  threshold_tokens: {threshold_tokens}\n")
    return home


def workspace(root: Path, files: int = 6) -> Path:
    folder = root / "ws"
    folder.mkdir()
    for i in range(1, files + 1):
        lines = [f"line {j} of file {i}: notes about module {i}" for j in range(70)]
        (folder / f"f{i}.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


def run_driver(home: Path, spec: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The driver in a fresh process (a real restart between calls)."""
    spec_file = tmp / f"spec-{spec['session_id']}-{spec['first']}.json"
    spec_file.write_text(json.dumps(spec), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES__", "HERMES_CONTEXT_"))}
    env["HERMES_HOME"] = str(home)
    # this checkout's code first: the installed package may be another checkout's
    root = HERE.parent.parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "tests" / "support"), str(HERE)])
    done = subprocess.run(
        [sys.executable, str(HERE / "hermes_agent_driver.py"), str(spec_file)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        timeout=600,
        check=False,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-4000:] + done.stdout[-2000:]
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    result["stderr"] = done.stderr
    return result
