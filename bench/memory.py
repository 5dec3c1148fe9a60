#!/usr/bin/env python3
"""File-memory throughput, concurrent writers, and threat-scanner speed on hostile input.

1. Single process: operations per second of ``add``, ``replace`` and ``remove`` (limits
   raised; the built-in strict scanner on), against a bare durable write of the same file (temp
   file, fsync, rename: the floor any crash-safe store pays) measured in the same run.
2. 8 processes adding at once: total operations per second against the single-process rate,
   and lost updates (entries reported written but missing: must be 0).
3. The scanner on 64 KiB inputs built to make regexes backtrack (long near-matches, runs of
   spaces, nested brackets, invisible characters, many trigger words) against 64 KiB of
   ordinary prose: the ratio shows whether any input is pathological.

Medians of ``--runs`` repetitions. Exits 1 when an update is lost, or a hostile input takes
more than ``--max-scan-ratio`` times the prose (default 20) or more than 0.5 s.

Usage: python bench/memory.py [--ops N] [--runs N] [--max-scan-ratio X]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.memory import MemoryStore  # noqa: E402
from hermes_core.memory.entries import parse_entries  # noqa: E402
from hermes_core.memory.files import atomic_write  # noqa: E402
from hermes_core.threats import scan  # noqa: E402

BIG = 10**8
CAP = 65_536


def _store(directory: Path) -> MemoryStore:
    return MemoryStore(directory, memory_char_limit=BIG, user_char_limit=BIG)


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _entry(n: int) -> str:
    return f"Project fact number {n}: the build uses make target build-{n} on CI"


def _one_run(ops: int) -> dict[str, float]:
    """Seconds for ``ops`` adds, bare writes, replaces and removes in a fresh directory."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        store = _store(directory)
        add = _timed(lambda: [store.add("memory", _entry(n)) for n in range(ops)])
        text, bare = store.raw("memory"), directory / "bare.md"
        bare_write = _timed(lambda: [atomic_write(bare, text) for _ in range(ops)])
        replace = _timed(
            lambda: [store.replace("memory", _entry(n), _entry(n) + " (v2)") for n in range(ops)]
        )
        remove = _timed(lambda: [store.remove("memory", _entry(n) + " (v2)") for n in range(ops)])
        assert store.entries("memory") == []
    return {"bare durable write": bare_write, "add": add, "replace": replace, "remove": remove}


def single_process(ops: int, runs: int) -> float:
    print(f"1. single process, {ops} operations each (built-in scanner on); medians of {runs}")
    results = [_one_run(ops) for _ in range(runs)]
    rows = {name: [r[name] for r in results] for name in results[0]}
    base = statistics.median(rows["bare durable write"])
    print(f"{'operation':<20}{'ops/s':>10}{'ms/op':>9}{'vs bare write':>15}")
    for name, times in rows.items():
        median = statistics.median(times)
        print(f"{name:<20}{ops / median:>10,.0f}{median / ops * 1e3:>9.2f}{median / base:>14.2f}x")
    return ops / statistics.median(rows["add"])


def _writer(directory: str, worker: int, count: int, start: object, done: object) -> None:
    store = _store(Path(directory))
    start.wait()  # type: ignore[attr-defined]
    written = [
        e
        for n in range(count)
        if store.add("memory", e := f"worker {worker} entry {n}: {'x' * 20}")["success"]
    ]
    done.put(written)  # type: ignore[attr-defined]


def concurrent(per_worker: int, runs: int, single_rate: float) -> bool:
    workers = 8
    print(f"\n2. {workers} processes adding {per_worker} entries each at once; medians of {runs}")
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    rates: list[float] = []
    lost_total = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            start, done = context.Event(), context.Queue()
            procs = [
                context.Process(target=_writer, args=(tmp, w, per_worker, start, done))
                for w in range(workers)
            ]
            for proc in procs:
                proc.start()
            time.sleep(0.2)  # every worker imported and waiting
            began = time.perf_counter()
            start.set()
            reported = [entry for _ in procs for entry in done.get(timeout=300)]
            elapsed = time.perf_counter() - began
            for proc in procs:
                proc.join()
            present = set(parse_entries((Path(tmp) / "MEMORY.md").read_text(encoding="utf-8")))
            lost_total += sum(1 for entry in reported if entry not in present)
            rates.append(len(reported) / elapsed)
    rate = statistics.median(rates)
    print(
        f"total ops/s {rate:,.0f} ({rate / single_rate:.2f}x one process); lost updates: "
        f"{lost_total} ({'ok' if lost_total == 0 else 'FAIL'})"
    )
    return lost_total == 0


def _hostile_inputs() -> dict[str, str]:
    def fill(unit: str) -> str:
        return (unit * (CAP // len(unit) + 1))[:CAP]

    return {
        "ordinary prose": fill("The user prefers short answers and runs the tests with tox. "),
        "ignore ignore ... (no object)": fill("ignore "),
        "ignore all previous previous ...": "ignore all " + fill("previous "),
        "run of spaces": "ignore" + " " * (CAP - 20) + "instructions",
        "nested brackets": fill("(["),
        "zero-width runs": fill("a\u200b"),
        "curl $ $ $ ...": "curl " + fill("$"),
        "send ... to http": "send " + fill("data and "),
        "api_key = aaaa...": "api_key = " + "a" * (CAP - 20),
        "html comment opened": "<!-- " + fill("ignore previous "),
        "mixed scripts": fill("іgnоrе аll рrеvіоus "),
        "over the cap (1 MiB)": fill("ignore all ") * 16,
    }


def scanner(runs: int, max_ratio: float) -> bool:
    print(f"\n3. scanner, strict scope, inputs of 64 KiB (capped); medians of {runs}")
    inputs = _hostile_inputs()
    times = {
        name: statistics.median(_timed(lambda t=text: scan(t, "strict")) for _ in range(runs))
        for name, text in inputs.items()
    }
    base = times["ordinary prose"]
    good = True
    print(f"{'input':<34}{'ms':>8}{'MB/s':>9}{'vs prose':>10}{'findings':>10}  check")
    for name, seconds in times.items():
        ratio = seconds / base
        ok = ratio <= max_ratio and seconds <= 0.5
        good = good and ok
        found = len(scan(inputs[name], "strict"))
        size = min(len(inputs[name]), CAP) / 1e6
        print(
            f"{name:<34}{seconds * 1e3:>8.2f}{size / seconds:>9.1f}{ratio:>9.2f}x{found:>10}"
            f"  {'ok' if ok else 'FAIL'}"
        )
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-scan-ratio", type=float, default=20.0)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    rate = single_process(args.ops, args.runs)
    ok_lost = concurrent(args.ops // 4, max(3, args.runs // 2), rate)
    ok_scan = scanner(args.runs, args.max_scan_ratio)
    return 0 if ok_lost and ok_scan else 1


if __name__ == "__main__":
    raise SystemExit(main())
