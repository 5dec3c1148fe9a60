#!/usr/bin/env python3
"""Compression scaling, the incremental trigger check, the summariser input cap and anchor
retention, on transcripts of 50 to 4,000 turns.

1. ``compress()`` (estimate counter, deterministic ``summarizer="fallback"``, context 128,000,
   ``force=True`` so every phase runs) against ``json.loads`` + ``json.dumps`` of the same file,
   cold (the per-message cost cache cleared first) and warm (a second call on the same message
   objects: the host case, where each message was counted when it arrived); time per message
   should stay flat (largest transcript against 200 turns, within 2x).
2. ``Compressor.observe()`` after appending one message to an observed transcript, against a
   full ``count()`` of the same list (warm cache for both, so the ratio is the algorithm's).
3. ``serialize_turns`` of each middle (``messages[1:-20]``) against the 160,000-character cap.
4. Anchor retention: file paths and shell commands from the tool calls of the compacted middle
   that appear verbatim in the output (commands with whitespace collapsed); one-shot at
   32,000 and 128,000, and over five successive compactions of the 200-turn session.

The 50- and 200-turn transcripts are the repository's samples; larger ones are generated into
``--data-dir`` (default bench/out/, gitignored) by bench/gen_transcript.py when missing (slow:
several minutes each). Exits 1 when the warm call at 1,000 turns costs more than twice the
JSON round trip, time per message is not flat, the incremental
check is not O(new), a serialised middle exceeds the cap, or retention is under 95%.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.compression.anchors import ANCHOR_HEADER  # noqa: E402
from hermes_core.compression.engine import Compressor, compress  # noqa: E402
from hermes_core.compression.policy import summary_budget  # noqa: E402
from hermes_core.compression.result import CompressionResult  # noqa: E402
from hermes_core.compression.serialize import (  # noqa: E402
    MAX_SUMMARY_INPUT_CHARS,
    serialize_turns,
)
from hermes_core.compression.tool_results import clear_parse_cache  # noqa: E402
from hermes_core.config.settings import Settings  # noqa: E402
from hermes_core.tokens import default_cost_cache, get_counter  # noqa: E402

Message = dict[str, Any]
T = TypeVar("T")
SAMPLES = {50: "coding-50turns.json", 200: "coding-200turns.json"}
CONTEXT = 128_000
RETENTION_CONTEXTS = (32_000, 128_000)
SUCCESSIVE_CONTEXT = 32_000
SUCCESSIVE_COMPACTIONS = 5
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


@dataclass
class Refs:
    """Reference anchors: paths and (whitespace-collapsed) commands, in first-seen order."""

    paths: dict[str, None] = field(default_factory=dict)
    commands: dict[str, None] = field(default_factory=dict)

    def update(self, other: Refs) -> None:
        self.paths.update(other.paths)
        self.commands.update(other.commands)


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


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _call_args(call: Any) -> tuple[str, Any]:
    function = call.get("function") if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        return "", None
    name, raw = function.get("name"), function.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = raw
    return (name if isinstance(name, str) else ""), args


def _refs(messages: Iterable[Mapping[str, Any]]) -> Refs:
    """Paths and commands named in the tool-call arguments of ``messages``."""
    refs = Refs()
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            name, args = _call_args(call)
            if not isinstance(args, Mapping):
                continue
            for key, value in args.items():
                if key in PATH_KEYS:
                    for path in _strings(value):
                        if path.strip():
                            refs.paths[path.strip()] = None
                elif key in COMMAND_KEYS and TERMINAL_TOOL.search(name.lower()):
                    for command in _strings(value):
                        if command.strip():
                            refs.commands[_collapse(command)] = None
    return refs


def _text(messages: Iterable[Mapping[str, Any]]) -> str:
    """All text of ``messages``: contents, text parts, and tool-call argument values."""
    parts: list[str] = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(
                p["text"]
                for p in content
                if isinstance(p, Mapping) and isinstance(p.get("text"), str)
            )
        for call in msg.get("tool_calls") or []:
            parts.extend(_strings(_call_args(call)[1]))
    return "\n".join(parts)


def _kept(refs: Refs, text: str) -> tuple[int, int]:
    collapsed = _collapse(text)
    paths = sum(1 for p in refs.paths if p in text)
    commands = sum(1 for c in refs.commands if c in collapsed)
    return paths, commands


def _pct(kept: int, total: int) -> str:
    return f"{kept:,}/{total:,} {100.0 * kept / total:5.1f}%" if total else "-/- (none)"


def _ok(kept: int, total: int) -> bool:
    return total == 0 or kept / total >= MIN_RETENTION


def _summary_sizes(summary: str | None, context_length: int) -> str:
    """Prose tokens / budget (the growth guard's bound), then prose chars + ledger chars (the
    ledger has its own character bound)."""
    if not summary:
        return "-"
    at = summary.find(ANCHOR_HEADER)
    prose, ledger = (summary, "") if at < 0 else (summary[:at], summary[at:])
    tokens = get_counter(None, "estimate").count_text(prose)
    budget = summary_budget(context_length)
    return f"{tokens:>6,} /{budget:>6,} {len(prose.strip()):>7,} +{len(ledger):>6,}"


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
        raw_chars = len(_text(middle))
        seconds, text = _timed(partial(serialize_turns, middle))
        ok = len(text) <= MAX_SUMMARY_INPUT_CHARS
        good = good and ok
        print(
            f"{t.label:>6}{len(middle):>13,}{raw_chars:>12,}{len(text):>12,}"
            f"{seconds * 1e3:>8.1f}  {'ok' if ok else 'FAIL'}"
        )
    return good


# --------------------------------------------------------------------------- 4. anchors

RETENTION_HEADER = (
    f"{'paths in output':>22}{'commands in output':>22}{'paths in sum.':>15}{'cmds in sum.':>14}"
    f"  {'prose tok / budget':>16}{'prose ch':>9}{'+ledger':>8}"
)


def _retention_row(refs: Refs, result: CompressionResult, context_length: int) -> tuple[str, bool]:
    paths, commands = _kept(refs, _text(result.messages))
    s_paths, s_commands = _kept(refs, result.summary or "")
    n_p, n_c = len(refs.paths), len(refs.commands)
    row = (
        f"{_pct(paths, n_p):>22}{_pct(commands, n_c):>22}"
        f"{100.0 * s_paths / max(n_p, 1):>14.1f}%{100.0 * s_commands / max(n_c, 1):>13.1f}%"
        f"  {_summary_sizes(result.summary, context_length)}"
    )
    return row, _ok(paths, n_p) and _ok(commands, n_c)


def _one_shot(transcripts: list[Transcript]) -> bool:
    print("\n4a. anchor retention, one compaction (force=True, fallback summariser): paths and")
    print("    commands from the middle's tool calls found verbatim in the output (and in the")
    print("    summary alone); prose tokens (estimate) vs summary_budget(), prose + ledger chars")
    header = f"{'turns':>6}{'context':>9}{'middle':>8}" + RETENTION_HEADER
    print(header)
    print("-" * len(header))
    good = True
    settings = _settings()
    for t in transcripts:
        for context in RETENTION_CONTEXTS:
            result = compress(
                t.messages,
                context_length=context,
                config=settings,
                summarizer="fallback",
                force=True,
            )
            window = result.stats.get("window")
            if result.status != "compressed" or not window:
                print(f"{t.label:>6}{context:>9,}  {result.status}: {result.reason}")
                good = False
                continue
            middle = t.messages[window["head_end"] : window["tail_start"]]
            row, ok = _retention_row(_refs(middle), result, context)
            # The target (spec 10 §4, issue 3) is set on the sample transcripts; the ledger
            # has a fixed character bound, so a middle naming hundreds of paths keeps the
            # newest ones only: shown, but not held to 95%.
            held = t.turns <= 200
            good = good and (ok or not held)
            flag = "" if ok else ("  FAIL" if held else "  (beyond the ledger bound)")
            print(f"{t.label:>6}{context:>9,}{len(middle):>8,}{row}{flag}")
    return good


def _successive(transcripts: list[Transcript]) -> bool:
    sample = next((t for t in transcripts if t.turns == 200), None)
    if sample is None:
        return True
    print(f"\n4b. {SUCCESSIVE_COMPACTIONS} successive compactions of the 200-turn session, fed one")
    print("    message at a time; compress(force=True) at a turn-group boundary once observe()")
    print(f"    passes the threshold of a {SUCCESSIVE_CONTEXT:,} window; the compressed list is")
    print("    carried on; retention of every path/command compacted so far")
    comp = Compressor(_settings(), context_length=SUCCESSIVE_CONTEXT, summarizer="fallback")
    header = f"{'#':>2}{'at msg':>8}{'tokens':>16}{'middle':>8}" + RETENTION_HEADER
    print(f"    threshold {comp.threshold_tokens:,} tokens")
    print(header)
    print("-" * len(header))
    source, current, seen, done, good = sample.messages, [], Refs(), 0, True
    for i, msg in enumerate(source):
        current.append(msg)
        boundary = i + 1 == len(source) or source[i + 1].get("role") != "tool"
        if not boundary or comp.observe(current) < comp.threshold_tokens:
            continue
        result = comp.compress(current, force=True)
        window = result.stats.get("window")
        if result.status != "compressed" or not window:
            print(f"{done + 1:>2}{i + 1:>8,}  {result.status}: {result.reason}")
            return False
        middle = current[window["head_end"] : window["tail_start"]]
        seen.update(_refs(middle))
        done += 1
        row, ok = _retention_row(seen, result, SUCCESSIVE_CONTEXT)
        good = good and ok
        tokens = f"{result.tokens_before:,}->{result.tokens_after:,}"
        print(f"{done:>2}{i + 1:>8,}{tokens:>16}{len(middle):>8,}{row}{'' if ok else '  FAIL'}")
        current = list(result.messages)
        if done == SUCCESSIVE_COMPACTIONS:
            break
    if done < SUCCESSIVE_COMPACTIONS:
        print(f"(the session ended after {done} compactions)")
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
        "anchor retention (one-shot)": _one_shot(transcripts),
        "anchor retention (successive)": _successive(transcripts),
    }
    print()
    for name, ok in checks.items():
        print(f"{name:<32}{'ok' if ok else 'FAIL'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
