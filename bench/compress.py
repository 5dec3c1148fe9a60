#!/usr/bin/env python3
"""Compression scaling, the incremental trigger check and the summariser input cap, on
transcripts of 50 to 4,000 turns (anchor retention: bench/anchor_coverage.py, which also
counts the grouped ledger lines a verbatim search misses).

1. ``compress()`` (estimate counter, deterministic ``summarizer="fallback"``, context 128,000,
   ``force=True`` so every phase runs) against ``json.loads`` + ``json.dumps`` of the same file,
   cold (the per-message cost cache cleared first) and warm (a second call on the same message
   objects: the host case, where each message was counted when it arrived); time per message
   should stay flat (largest transcript against 200 turns, within 2x).
2. ``Compressor.observe()`` after appending one message to an observed transcript, against a
   full ``count()`` of the same list (warm cache for both, so the ratio is the algorithm's).
3. ``serialize_turns`` of each middle (``messages[1:-20]``) against the 160,000-character cap.

The 50- and 200-turn transcripts are the repository's samples; larger ones are generated into
``--data-dir`` (default bench/out/, gitignored) by bench/gen_transcript.py when missing (slow:
several minutes each). Exits 1 when the warm call at 1,000 turns costs more than twice the
JSON round trip, time per message is not flat, the incremental
check is not O(new), or a serialised middle exceeds the cap.

Usage: python bench/compress.py [--turns 50 200 1000 4000] [--data-dir DIR] [--skip-generate]
           [--runs N] [--large-runs N] [--incremental-runs N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.compression.engine import Compressor  # noqa: E402
from hermes_core.compression.oneshot import compress  # noqa: E402
from hermes_core.compression.serialize import (  # noqa: E402
    MAX_SUMMARY_INPUT_CHARS,
    serialize_turns,
)
from hermes_core.compression.tool_results import clear_parse_cache  # noqa: E402
from hermes_core.config.settings import Settings  # noqa: E402
from hermes_core.tokens import default_cost_cache  # noqa: E402

Message = dict[str, Any]
T = TypeVar("T")
SAMPLES = {50: "coding-50turns.json", 200: "coding-200turns.json"}
CONTEXT = 128_000
MIN_RETENTION = 0.95
TARGET_RATIO = 2.0  # issue 3: compress() within 2x json.loads + json.dumps
FLAT_LIMIT = 2.0
INCREMENTAL_LIMIT = 0.05  # observe(+1) / full recount; an O(transcript) check would be ~1
PATH_KEYS = frozenset({"path", "file_path", "file", "filename", "paths"})
COMMAND_KEYS = frozenset({"command", "cmd"})
TERMINAL_TOOL = re.compile(r"term|shell|bash|zsh|exec|run|command|cmd|console")
_WS = re.compile(r"\s+")


@dataclass
class Transcript:
    turns: int
    path: Path
    raw: str
    messages: list[Message]

    @property
    def label(self) -> str:
        return f"{self.turns:,}"


# --------------------------------------------------------------------------- helpers


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _roundtrip(raw: str) -> str:
    return json.dumps(json.loads(raw))


def _settings() -> Settings:
    settings = Settings()
    settings.model.tokenizer = "estimate"
    return settings


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _generate(turns: int, path: Path) -> None:
    print(f"generating {path} ({turns:,} turns; this takes minutes) ...", flush=True)
    part = path.with_name(path.name + ".part")
    script = REPO / "bench" / "gen_transcript.py"
    command = [sys.executable, str(script), "--seed", "1", "--turns", str(turns)]
    subprocess.run([*command, "--out", str(part)], check=True, stdout=subprocess.DEVNULL)
    os.replace(part, path)


def _load(turns_list: Sequence[int], data_dir: Path, skip_generate: bool) -> list[Transcript]:
    loaded = []
    for turns in turns_list:
        if turns in SAMPLES:
            path = REPO / "tests" / "data" / "transcripts" / SAMPLES[turns]
        else:
            path = data_dir / f"t{turns}.json"
            if not path.exists():
                if skip_generate:
                    print(f"skipped {turns:,} turns: {path} is missing (--skip-generate)")
                    continue
                _generate(turns, path)
        raw = path.read_text(encoding="utf-8")
        loaded.append(Transcript(turns, path, raw, json.loads(raw)))
    return loaded


# --------------------------------------------------------------------------- 1. scaling


def _scaling(transcripts: list[Transcript], runs: int, large_runs: int) -> bool:
    print("\n1. compress() vs json.loads + json.dumps (estimate counter, fallback summariser,")
    print(f"   context {CONTEXT:,}, force=True; medians; cold = cost and parse caches cleared,")
    print("   warm = second call on the same message objects)")
    header = (
        f"{'turns':>6}{'msgs':>7}{'MB':>7}{'runs':>5}{'json ms':>9}{'cold ms':>9}{'warm ms':>9}"
        f"{'cold/json':>10}{'warm/json':>10}{'cold us/msg':>12}{'warm us/msg':>12}  status"
    )
    print(header)
    print("-" * len(header))
    settings = _settings()
    per_msg: dict[int, tuple[float, float]] = {}
    ratios: dict[int, float] = {}  # warm compress / json round trip
    good = True
    for t in transcripts:
        n = runs if t.turns <= 1000 else large_runs
        json_s = statistics.median(_timed(partial(_roundtrip, t.raw))[0] for _ in range(n))
        run = partial(
            compress,
            t.messages,
            context_length=CONTEXT,
            config=settings,
            summarizer="fallback",
            force=True,
        )
        cold: list[float] = []
        warm: list[float] = []
        statuses: set[str] = set()
        for _ in range(n):
            default_cost_cache().clear()
            clear_parse_cache()
            for times in (cold, warm):
                seconds, result = _timed(run)
                times.append(seconds)
                statuses.add(result.status)
        cold_s, warm_s = statistics.median(cold), statistics.median(warm)
        msgs = len(t.messages)
        per_msg[t.turns] = (cold_s / msgs * 1e6, warm_s / msgs * 1e6)
        ratios[t.turns] = warm_s / json_s
        good = good and statuses <= {"compressed"}
        print(
            f"{t.label:>6}{msgs:>7,}{len(t.raw.encode()) / 1e6:>7.2f}{n:>5}{json_s * 1e3:>9.1f}"
            f"{cold_s * 1e3:>9.1f}{warm_s * 1e3:>9.1f}{cold_s / json_s:>10.2f}"
            f"{warm_s / json_s:>10.2f}{per_msg[t.turns][0]:>12.1f}{per_msg[t.turns][1]:>12.1f}"
            f"  {','.join(sorted(statuses))}"
        )
    if 1000 in ratios:
        within = ratios[1000] <= TARGET_RATIO
        good = good and within
        print(
            f"warm compress / json round trip at 1,000 turns: {ratios[1000]:.2f}x"
            f" (target at most {TARGET_RATIO:.0f}x): {'ok' if within else 'FAIL'}"
        )
    base = 200 if 200 in per_msg else min(per_msg, default=0)
    top = max(per_msg, default=0)
    if top > base:
        cold_r = per_msg[top][0] / per_msg[base][0]
        warm_r = per_msg[top][1] / per_msg[base][1]
        flat = cold_r <= FLAT_LIMIT and warm_r <= FLAT_LIMIT
        good = good and flat
        print(
            f"time per message, {top:,} vs {base:,} turns: cold {cold_r:.2f}x, warm {warm_r:.2f}x"
            f" (flat = within {FLAT_LIMIT:.0f}x): {'ok' if flat else 'FAIL'}"
        )
    return good


# --------------------------------------------------------------------------- 2. incremental


def _incremental(transcripts: list[Transcript], runs: int) -> bool:
    print("\n2. incremental trigger check: Compressor.observe() after appending one new user")
    print("   message to an observed transcript vs a full count() recount of the same list;")
    print(f"   warm cost cache for both; medians of {runs} runs")
    header = (
        f"{'turns':>6}{'msgs':>7}{'observe +1 us':>15}{'count() ms':>12}{'ratio':>10}"
        f"{'same total':>12}"
    )
    print(header)
    print("-" * len(header))
    good = True
    for t in transcripts:
        comp = Compressor(_settings(), context_length=CONTEXT, summarizer="fallback")
        base = list(t.messages)
        comp.count(base)  # every message of the transcript was counted when it arrived
        inc: list[float] = []
        full: list[float] = []
        same = True
        for i in range(runs):
            comp.observe(base)  # the state a host has before the new message (untimed)
            grown = [*base, {"role": "user", "content": f"({i}) Thanks. Run the tests again."}]
            seconds, observed = _timed(partial(comp.observe, grown))
            inc.append(seconds)
            seconds, counted = _timed(partial(comp.count, grown))
            full.append(seconds)
            same = same and observed == counted
        inc_s, full_s = statistics.median(inc), statistics.median(full)
        ratio = inc_s / full_s
        check = ratio <= INCREMENTAL_LIMIT if t.turns >= 1000 else True
        good = good and same and check
        print(
            f"{t.label:>6}{len(base) + 1:>7,}{inc_s * 1e6:>15.1f}{full_s * 1e3:>12.2f}"
            f"{ratio:>10.5f}{'yes' if same else 'NO':>12}{'' if check else '  FAIL'}"
        )
    print(f"(check: ratio <= {INCREMENTAL_LIMIT} from 1,000 turns, and the same total as count())")
    return good


# --------------------------------------------------------------------------- 3. input cap


def _input_cap(transcripts: list[Transcript]) -> bool:
    print(f"\n3. summariser input: serialize_turns(messages[1:-20]) vs {MAX_SUMMARY_INPUT_CHARS:,}")
    header = f"{'turns':>6}{'middle msgs':>13}{'raw chars':>12}{'serialised':>12}{'ms':>8}  check"
    print(header)
    print("-" * len(header))
    good = True
    for t in transcripts:
        middle = t.messages[1:-20]
        raw_chars = sum(len(str(m.get("content") or "")) for m in middle)  # contents only
        seconds, text = _timed(partial(serialize_turns, middle))
        ok = len(text) <= MAX_SUMMARY_INPUT_CHARS
        good = good and ok
        print(
            f"{t.label:>6}{len(middle):>13,}{raw_chars:>12,}{len(text):>12,}"
            f"{seconds * 1e3:>8.1f}  {'ok' if ok else 'FAIL'}"
        )
    return good


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200, 1000, 4000])
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--skip-generate", action="store_true", help="skip missing transcripts")
    parser.add_argument("--runs", type=int, default=5, help="runs up to 1,000 turns")
    parser.add_argument("--large-runs", type=int, default=3, help="runs above 1,000 turns")
    parser.add_argument("--incremental-runs", type=int, default=25)
    args = parser.parse_args()

    args.data_dir.mkdir(parents=True, exist_ok=True)
    transcripts = _load(sorted(set(args.turns)), args.data_dir, args.skip_generate)
    if not transcripts:
        print("no transcripts to measure")
        return 1
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; transcripts:")
    for t in transcripts:
        shown = t.path.relative_to(REPO) if t.path.is_relative_to(REPO) else t.path
        print(f"  {t.label:>6} turns: {shown}")

    checks = {
        "2x json, flat per message": _scaling(transcripts, args.runs, args.large_runs),
        "incremental check O(new)": _incremental(transcripts, args.incremental_runs),
        "summariser input cap": _input_cap(transcripts),
    }
    print()
    for name, ok in checks.items():
        print(f"{name:<32}{'ok' if ok else 'FAIL'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
