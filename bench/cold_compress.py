#!/usr/bin/env python3
"""A cold compression, end to end, ours against hermes-agent 0.19's compressor: fresh processes.

Issue 27 item 12. Every figure is the wall time of a whole process (interpreter start, imports,
reading the file, the compression with an offline summary, writing the result), the way a
one-shot caller pays it. Per transcript and run, in a rotating order within the same run:

* ``ours one-shot``: ``hc.compress(messages, context_length=128,000, summarizer="fallback",
  force=True)`` in a small script that reads and writes JSON;
* ``ours CLI``: ``python -m hermes_core compress FILE --out OUT --context-length 128000
  --summarizer fallback --force``;
* ``reference``: hermes-agent 0.19's ``ContextCompressor`` (gpt-4o, a 128,000-token window,
  ``compress(force=True)``) driven by a script that reads and writes the same JSON, with no
  LLM: its summary call answers ``None``, so the compressor inserts its own static fallback
  summary (what it does whenever the summariser is unavailable);
* ``reference, no provider``: the same script without that stub: the compressor really tries
  its auxiliary client, finds no provider configured (an empty ``HOME``, no keys) and falls back
  the same way; slower, shown for context.

Each process gets an empty home and no API keys; bytecode is written and one warm-up run of each
is discarded, so no side pays for compiling sources. Medians of ``--runs``; the ratios are
ours / reference (the stubbed one), within one run on one machine.

With ``--before DIR`` (another checkout, e.g. ``git archive`` of an older commit) its one-shot
and CLI run in the same rotation, shown on a ``before`` line under each size.

Usage: python bench/cold_compress.py [--turns 50 200 1000 4000] [--runs 5] [--data-dir DIR]
           [--reference PYTHON]   (an interpreter with hermes-agent==0.19.0; default: this one)
           [--before DIR]
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
CONTEXT = 128_000

OURS = """
import json, sys
import hermes_core as hc
with open(sys.argv[1], encoding="utf-8") as f:
    messages = json.load(f)
result = hc.compress(messages, context_length=128_000, summarizer="fallback", force=True)
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(result.messages, f, ensure_ascii=False)
"""

REFERENCE = """
import json, logging, sys
logging.disable(logging.CRITICAL)
from agent.context_compressor import ContextCompressor
with open(sys.argv[1], encoding="utf-8") as f:
    messages = json.load(f)
compressor = ContextCompressor(model="gpt-4o", config_context_length=128_000, quiet_mode=True)
if sys.argv[3] == "stub":  # no LLM: the summary call fails, its static fallback stands in
    compressor._generate_summary = lambda *args, **kwargs: None
out = compressor.compress(messages, force=True)
assert compressor._last_summary_fallback_used, "the reference did not use its fallback"
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False)
"""

SIDES = ("ours one-shot", "ours CLI", "reference", "reference, no provider")
BEFORE = ("before one-shot", "before CLI")  # with --before DIR: another checkout's code


def _transcript(turns: int, data_dir: Path) -> Path:
    """The seed-1 transcript of ``turns`` turns, generated once (minutes for the long ones)."""
    path = data_dir / f"t{turns}.json"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} ({turns:,} turns) ...", flush=True)
        part = path.with_name(path.name + ".part")
        script = [sys.executable, str(REPO / "bench" / "gen_transcript.py"), "--seed", "1"]
        command = [*script, "--turns", str(turns), "--out", str(part)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        os.replace(part, path)
    return path


def _command(side: str, path: Path, out: Path, reference: str) -> list[str]:
    if side.endswith("one-shot"):
        return [sys.executable, "-c", OURS, str(path), str(out)]
    if side.endswith("CLI"):
        return [
            sys.executable,
            "-m",
            "hermes_core",
            "compress",
            str(path),
            "--out",
            str(out),
            "--context-length",
            str(CONTEXT),
            "--summarizer",
            "fallback",
            "--force",
        ]
    mode = "stub" if side == "reference" else "real"
    return [reference, "-c", REFERENCE, str(path), str(out), mode]


def _environment(home: Path, side: str, before: Path | None) -> dict[str, str]:
    """An empty home, no keys, bytecode on; ours imported from this checkout (``before``
    sides from the ``--before`` one)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "HERMES_HOME": str(home / ".hermes"),
        "LANG": "C.UTF-8",
    }
    if side.startswith("ours"):
        env["PYTHONPATH"] = str(REPO)
    elif side.startswith("before") and before is not None:
        env["PYTHONPATH"] = str(before)
    return env


def _run(
    side: str, path: Path, out: Path, reference: str, home: Path, *, before: Path | None
) -> tuple[float, int]:
    """Wall seconds of one fresh process and the number of messages it wrote."""
    started = time.perf_counter()
    done = subprocess.run(
        _command(side, path, out, reference),
        env=_environment(home, side, before),
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 3):  # 3: the CLI wrote its result, still over the threshold
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise SystemExit(f"{side} failed on {path.name} (exit {done.returncode}):\n{tail}")
    return seconds, len(json.loads(out.read_text(encoding="utf-8")))


def _measure(
    path: Path, runs: int, reference: str, before: Path | None
) -> dict[str, tuple[float, int]]:
    """Median seconds and messages kept per side; the order rotates from run to run."""
    sides = SIDES + (BEFORE if before else ())
    times: dict[str, list[float]] = {side: [] for side in sides}
    kept: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="cold-compress-") as tmp:
        for run in range(runs + 1):  # run 0 warms bytecode and the page cache: discarded
            order = sides[run % len(sides) :] + sides[: run % len(sides)]
            for side in order:
                home = Path(tmp) / f"home-{run}-{sides.index(side)}"
                home.mkdir()
                out = home / "out.json"
                seconds, kept[side] = _run(side, path, out, reference, home, before=before)
                if run:
                    times[side].append(seconds)
    return {side: (statistics.median(times[side]), kept[side]) for side in sides}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200, 1000, 4000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--reference", default=sys.executable, metavar="PYTHON")
    parser.add_argument("--before", type=Path, metavar="DIR", help="a checkout to time as well")
    args = parser.parse_args()
    paths = {turns: _transcript(turns, args.data_dir.resolve()) for turns in args.turns}
    print(f"fresh processes, median wall time of {args.runs} runs (after one warm-up), ms")
    header = (
        f"{'turns':>6}{'msgs':>7}{'one-shot':>10}{'CLI':>8}{'ref':>8}{'ref, no LLM':>13}"
        f"{'one-shot/ref':>14}{'CLI/ref':>9}{'kept (ours/ref)':>17}"
    )
    print(header)
    print("-" * len(header))
    worst = 0.0
    for turns, path in paths.items():
        count = len(json.loads(path.read_text(encoding="utf-8")))
        figures = _measure(path, args.runs, args.reference, args.before)
        ours, cli, ref, real = (figures[side][0] for side in SIDES)
        worst = max(worst, ours / ref, cli / ref)
        kept = f"{figures['ours one-shot'][1]}/{figures['reference'][1]}"
        print(
            f"{turns:>6,}{count:>7,}{ours * 1e3:>10.0f}{cli * 1e3:>8.0f}{ref * 1e3:>8.0f}"
            f"{real * 1e3:>13.0f}{ours / ref:>13.2f}x{cli / ref:>8.2f}x{kept:>17}",
            flush=True,
        )
        if args.before:
            old, old_cli = figures["before one-shot"][0], figures["before CLI"][0]
            print(
                f"{'':>6}{'before':>7}{old * 1e3:>10.0f}{old_cli * 1e3:>8.0f}{'':>21}"
                f"{old / ref:>13.2f}x{old_cli / ref:>8.2f}x",
                flush=True,
            )
    print(f"worst ratio ours / reference: {worst:.2f}x (goal: at most 1.00x at every size)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
