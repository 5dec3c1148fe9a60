#!/usr/bin/env python3
"""The cold path with the default counter (tiktoken o200k): cold and warm compression against
the JSON round trip, and proof that estimating first changes no decision.

1. Speed, per transcript (the 50- and 200-turn samples, 1,000- and 4,000-turn generated ones):
   medians of ``--runs`` runs, each run timing in turn ``json.loads`` + ``json.dumps`` of the
   file, the cold call (cost, estimate and JSON-parse caches cleared), the warm call (a second
   call on the same message objects) and the cold call with every message counted exactly
   (the behaviour before estimates). The call is ``hc.compress(messages, context_length=128,000,
   summarizer="fallback", force=True)`` as in bench/compress.py, with the default counter; the
   BPE data is loaded before (its one-time load per process is shown apart). With
   ``--reference PYTHON`` (an interpreter with hermes-agent installed) the reference compressor
   (``ContextCompressor.compress(force=True)``, its deterministic fallback summary standing in
   for the LLM) is timed in that interpreter against its own JSON round trip.
2. The README's main job, ``hermes-context compress examples/coding-session.json --out FILE``,
   in fresh processes: wall time, estimate first against exact counting.
3. Decisions: each transcript compressed cold with estimates and with exact counts, forced and
   not, at windows whose trigger sits 50% under to 100% over the exact total (0.5% steps near
   it): status, the messages kept, the window, the pruning passes and the archive must be
   identical. Shows how many messages were counted exactly.
4. The error model of hermes_core/tokens/bounds.py: the worst |exact - estimate| of any single
   message and of contiguous ranges of messages, as a share of its bound (must stay under 1).

Exits 1 when a decision differs or the model's bound is exceeded.

Usage: python bench/compress_cold.py [--turns 50 200 1000 4000] [--data-dir DIR] [--runs N]
           [--cli-runs N] [--reference PYTHON] [--extra FILE ...]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import hermes_core as hc  # noqa: E402
from hermes_core.compression.tool_results import clear_parse_cache  # noqa: E402
from hermes_core.tokens import (  # noqa: E402
    BpeLoader,
    bounds,
    default_cost_cache,
    get_counter,
)
from hermes_core.tokens.costs import _measure  # noqa: E402

SAMPLES = {50: "coding-50turns.json", 200: "coding-200turns.json"}
CONTEXT = 128_000
COLD_TARGET, WARM_TARGET = 2.5, 1.5  # issue 12 §4, at 1,000 turns
REFERENCE_SCRIPT = r"""
import gc, json, logging, statistics, sys, time
logging.disable(logging.CRITICAL)
from agent.context_compressor import ContextCompressor
raw, runs = open(sys.argv[1]).read(), int(sys.argv[2])
json_s, ref_s = [], []
for _ in range(runs):
    gc.collect(); t = time.perf_counter(); json.dumps(json.loads(raw))
    json_s.append(time.perf_counter() - t)
    messages = json.loads(raw)
    ref = ContextCompressor(model="gpt-4o", config_context_length=128000, quiet_mode=True)
    ref._generate_summary = lambda *a, **k: None  # no LLM: its static fallback summary
    gc.collect(); t = time.perf_counter(); out = ref.compress(messages, force=True)
    ref_s.append(time.perf_counter() - t)
print(json.dumps({"json": statistics.median(json_s), "ref": statistics.median(ref_s),
                  "kept": len(out)}))
"""


def _load(turns: int, data_dir: Path) -> Path:
    if turns in SAMPLES:
        return REPO / "tests" / "data" / "transcripts" / SAMPLES[turns]
    path = data_dir / f"t{turns}.json"
    if not path.exists():
        print(f"generating {path} ({turns:,} turns; minutes) ...", flush=True)
        part = path.with_name(path.name + ".part")
        script = [sys.executable, str(REPO / "bench" / "gen_transcript.py"), "--seed", "1"]
        command = [*script, "--turns", str(turns), "--out", str(part)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        os.replace(part, path)
    return path


def _cold() -> None:
    default_cost_cache().clear()
    bounds.clear_estimates()
    clear_parse_cache()


@contextmanager
def _exact_counts() -> Iterator[None]:
    """Every message counted exactly, as before the estimate-first table."""
    with mock.patch.object(bounds, "ESTIMATED_COUNTERS", frozenset()):
        yield


def _timed(fn: Callable[[], Any], into: list[Any] | None = None) -> float:
    gc.collect()
    started = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - started
    if into is not None:
        into.append(value)
    return seconds


def _compress(messages: list[dict[str, Any]], **kw: Any) -> hc.CompressionResult:
    kw.setdefault("context_length", CONTEXT)
    return hc.compress(messages, summarizer="fallback", **kw)


# --------------------------------------------------------------------------- 1. speed


def _reference(python: str | None, path: Path, runs: int) -> dict[str, float] | None:
    if not python:
        return None
    done = subprocess.run(
        [python, "-c", REFERENCE_SCRIPT, str(path), str(runs)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        print(f"  (reference failed: {done.stderr.strip().splitlines()[-1:]})")
        return None
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def _speed(
    paths: dict[int, Path], runs: int, reference: str | None
) -> dict[int, tuple[float, ...]]:
    print("\n1. hc.compress(context_length=128,000, summarizer='fallback', force=True), default")
    print(f"   counter; medians of {runs} runs, each timing json, cold, warm, exact cold in turn")
    load = statistics.median(_timed(lambda: BpeLoader().encoding("o200k_base")) for _ in range(3))
    print(f"   (one-time BPE load per process, o200k_base: {load * 1e3:.0f} ms)")
    header = (
        f"{'turns':>6}{'msgs':>7}{'json ms':>9}{'cold ms':>9}{'warm ms':>9}{'exact ms':>10}"
        f"{'cold/json':>10}{'warm/json':>10}{'exact/json':>11}{'exact %':>9}{'ref/json':>10}"
    )
    print(header)
    print("-" * len(header))
    ratios: dict[int, tuple[float, ...]] = {}
    for turns, path in paths.items():
        raw = path.read_text(encoding="utf-8")
        messages = json.loads(raw)
        times: dict[str, list[float]] = {"json": [], "cold": [], "warm": [], "exact": []}
        results: list[hc.CompressionResult] = []
        for _ in range(runs):
            times["json"].append(_timed(lambda: json.dumps(json.loads(raw))))  # noqa: B023
            _cold()
            times["cold"].append(_timed(lambda: _compress(messages, force=True), results))  # noqa: B023
            times["warm"].append(_timed(lambda: _compress(messages, force=True)))  # noqa: B023
            _cold()
            with _exact_counts():
                times["exact"].append(
                    _timed(lambda: _compress(messages, force=True))  # noqa: B023
                )
        json_s, cold_s, warm_s, exact_s = (statistics.median(v) for v in times.values())
        counted = len(messages) - results[-1].stats["estimated_costs"]
        ref = _reference(reference, path, max(3, runs // 2))
        ref_ratio = f"{ref['ref'] / ref['json']:>10.2f}" if ref else f"{'-':>10}"
        ratios[turns] = (cold_s / json_s, warm_s / json_s, ref["ref"] / ref["json"] if ref else 0)
        print(
            f"{turns:>6,}{len(messages):>7,}{json_s * 1e3:>9.1f}{cold_s * 1e3:>9.1f}"
            f"{warm_s * 1e3:>9.1f}{exact_s * 1e3:>10.1f}{cold_s / json_s:>10.2f}"
            f"{warm_s / json_s:>10.2f}{exact_s / json_s:>11.2f}"
            f"{100 * counted / len(messages):>8.1f}%{ref_ratio}"
        )
    print("(exact %: messages counted exactly by the cold call; ref/json: the reference in its")
    print(" own interpreter against its own JSON round trip, when --reference is given)")
    if 1000 in ratios:
        cold, warm, _ = ratios[1000]
        print(
            f"at 1,000 turns: cold {cold:.2f}x (target {COLD_TARGET}x), warm {warm:.2f}x "
            f"(target {WARM_TARGET}x)"
        )
    return ratios


# --------------------------------------------------------------------------- 2. the CLI


def _cli(runs: int) -> None:
    example = REPO / "examples" / "coding-session.json"
    print(f"\n2. hermes-context compress {example.relative_to(REPO)} --out FILE, fresh processes,")
    print(f"   median wall time of {runs} (each process loads the BPE data)")
    patch = "from hermes_core.tokens import bounds; bounds.ESTIMATED_COUNTERS = frozenset(); "
    modes = {"estimate first": "", "exact counts": patch}
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    reports: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as home:
        out = Path(home) / "out.json"
        env = {**os.environ, "HERMES_HOME": home}
        for _ in range(runs):
            for mode, prefix in modes.items():
                code = (
                    f"{prefix}import sys; from hermes_core.cli import main; "
                    f"sys.exit(main(['compress', {str(example)!r}, '--out', {str(out)!r}]))"
                )
                started = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-c", code],
                    check=False,
                    capture_output=True,
                    text=True,
                    env=env,
                )
                times[mode].append(time.perf_counter() - started)
                reports[mode] = done.stderr.splitlines()[0] if done.stderr else "?"
    for mode, seconds in times.items():
        print(f"   {mode:<15}{statistics.median(seconds) * 1e3:>7.0f} ms   {reports[mode]}")


# --------------------------------------------------------------------------- 3. decisions


def _decision(result: hc.CompressionResult) -> tuple[Any, ...]:
    return (
        result.status,
        json.dumps(result.messages, sort_keys=True),
        result.stats.get("window"),
        result.stats.get("passes"),
        json.dumps(result.archived, sort_keys=True),
        result.tokens_after if result.status in ("compressed", "pruned") else None,
    )


def _windows(total: int) -> list[int]:
    """Windows whose trigger (75% under 512K, else 50%) lands at these shares of ``total``."""
    shares = [0.5, 0.9, 0.97, 0.99, 0.995, 1.0, 1.005, 1.01, 1.03, 1.1, 2.0]
    windows = []
    for share in shares:
        trigger = total * share
        window = math.ceil(trigger / 0.75)
        windows.append(window if window < 512_000 else math.ceil(trigger / 0.5))
    return windows


def _decisions(paths: list[Path]) -> bool:
    print("\n3. decisions, estimate first vs exact counts (cold caches for both): status, kept")
    print("   messages, window, passes, archive, tokens after; windows put the trigger at 50%")
    print("   to 200% of the exact total, forced and not")
    header = f"{'transcript':<24}{'msgs':>7}{'exact total':>13}{'cases':>7}{'same':>6}"
    print(header + f"{'counted exactly (min-max)':>28}")
    print("-" * (len(header) + 28))
    good = True
    for path in paths:
        messages = json.loads(path.read_text(encoding="utf-8"))
        total = hc.count_tokens(messages)
        same = cases = 0
        counted: list[float] = []
        for window in _windows(total):
            for force in (False, True):
                results = []
                for exact in (False, True):
                    _cold()
                    if exact:
                        with _exact_counts():
                            results.append(_compress(messages, context_length=window, force=force))
                    else:
                        results.append(_compress(messages, context_length=window, force=force))
                cases += 1
                same += _decision(results[0]) == _decision(results[1])
                counted.append(1 - results[0].stats["estimated_costs"] / len(messages))
        good = good and same == cases
        print(
            f"{path.name:<24}{len(messages):>7,}{total:>13,}{cases:>7}{same:>6}"
            f"{100 * min(counted):>14.0f}% - {100 * max(counted):.0f}%"
            f"{'' if same == cases else '  FAIL'}"
        )
    return good


# --------------------------------------------------------------------------- 4. the model


class _NoText:
    name = "none"

    def count_text(self, text: str) -> int:
        return 0


def _model(paths: list[Path]) -> bool:
    print("\n4. error model (tokens/bounds.py): worst |exact - estimate| / bound, one message and")
    print("   contiguous ranges of messages (a grid of about 160,000 ranges per transcript)")
    exact, none = get_counter(None, "tiktoken"), _NoText()
    estimate = get_counter(None, "estimate")
    worst_all = 0.0
    for path in paths:
        rows = []
        for message in json.loads(path.read_text(encoding="utf-8")):
            fixed = _measure(message, none, 1500).total
            rows.append(
                (
                    _measure(message, exact, 1500).total - fixed,
                    _measure(message, estimate, 1500).total - fixed,
                )
            )
        sums = [(0, 0, 0.0, 0.0)]
        for real, guess in rows:
            lin, sq = bounds.spread(guess)
            e, g, li, s = sums[-1]
            sums.append((e + real, g + guess, li + lin, s + sq))
        step = max(1, len(rows) // 400)
        single = max(
            abs(r - g) / (bounds.spread(g)[0] + bounds.Z * math.sqrt(bounds.spread(g)[1]))
            for r, g in rows
        )
        ranges = 0.0
        for i in range(0, len(rows), step):
            for j in range(i + 1, len(rows) + 1, step):
                e, g, li, s = (b - a for a, b in zip(sums[i], sums[j], strict=True))
                ranges = max(ranges, abs(e - g) / (li + bounds.Z * math.sqrt(s)))
        worst_all = max(worst_all, single, ranges)
        print(f"   {path.name:<24} one message {single:.2f}, ranges {ranges:.2f}")
    print(f"   worst {worst_all:.2f} (must stay under 1)")
    return worst_all < 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200, 1000, 4000])
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cli-runs", type=int, default=5)
    parser.add_argument("--reference", metavar="PYTHON", help="an interpreter with hermes-agent")
    parser.add_argument("--extra", type=Path, nargs="*", default=[], help="more transcripts (3-4)")
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    paths = {turns: _load(turns, args.data_dir) for turns in sorted(set(args.turns))}
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores, counter {get_counter(None).name}"
    )
    get_counter(None, "tiktoken")  # the BPE data, loaded once
    if not args.skip_speed:
        _speed(paths, args.runs, args.reference)
        _cli(args.cli_runs)
    checked = [*paths.values(), *args.extra]
    same = _decisions(checked)
    model = _model(checked)
    verdicts = {"decisions identical": same, "model bound": model}
    print("\n" + "; ".join(f"{name}: {'ok' if ok else 'FAIL'}" for name, ok in verdicts.items()))
    return 0 if same and model else 1


if __name__ == "__main__":
    sys.exit(main())
