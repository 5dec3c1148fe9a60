#!/usr/bin/env python3
"""Fidelity that scales with room: path and command retention at 32K, 128K and 1M windows.

Issue 24 §5. The measure is bench/anchor_coverage.py's (what one forced ``compress()`` with
the fallback summariser and the estimate counter keeps of the middle's tool-call paths,
written files, commands, failed commands with an error line and the last command, verbatim
or by the ledger's documented grouped lines), run on ``bench/gen_transcript.py`` sessions of
several seeds and sizes at each window, plus repeated compactions of one long session.

* **one**: one compaction of the whole session; the 95% target for paths and commands
  applies where the grouped rendering of the middle's items ("compact") fits the ledger's
  render bound ("budget": the one the engine planned, ``stats["ledger"]``; the user's rules
  and the assistant's decisions have a fifth of it on top); written files, failed commands
  and the last command: 100% always.
* **repeated** (``--repeat``): one ``Compressor`` fed the session in order, compacted (forced)
  each time the prompt passes the threshold; after each compaction the latest summary is
  searched for everything compacted so far (the reference grows with every middle).

Seeds: the tuned seeds are the ones the ledger's rules were adjusted on; the sealed seeds
were only ever measured (bench/README.md says which are which). Transcripts are generated
into ``--data-dir`` when missing (about a minute per 150 turns). ``HERMES_CODE=DIR`` measures
another checkout's ``hermes_core`` (a "before" figure) with this script.

Usage: python bench/fidelity.py [--tuned 1 2] [--sealed 5 6] [--turns 150 300 1000]
           [--contexts 32000 128000 1000000] [--repeat 1000] [--data-dir DIR]
           [--skip-generate]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if code := os.environ.get("HERMES_CODE"):
    sys.path.insert(0, code)
    import hermes_core  # noqa: F401  - this checkout's, before anchor_coverage puts REPO first
sys.path.insert(0, str(REPO / "bench"))

import anchor_coverage as ac  # noqa: E402

from hermes_core.compression.anchors import ANCHOR_HEADER, ledger_bound  # noqa: E402
from hermes_core.compression.engine import Compressor  # noqa: E402
from hermes_core.compression.oneshot import compress  # noqa: E402
from hermes_core.tokens import get_counter  # noqa: E402

Message = dict[str, Any]
SHARES = ("paths", "commands", "edited", "failed", "last")


@dataclass
class Measured:
    shares: dict[str, tuple[int, int]]
    compact: int  # the grouped rendering's characters
    budget: int  # the ledger's render bound, characters (rules and decisions: a fifth on top)
    ledger: int  # the ledger section's characters
    ledger_tokens: int  # the same in tokens (o200k when it loads)

    def fits(self) -> bool:
        return self.compact <= self.budget

    def ok(self) -> bool:
        full = all(k == n for name, (k, n) in self.shares.items() if name in ac.FULL)
        most = all(k >= ac.MIN_SHARE * n for name, (k, n) in self.shares.items() if name in ac.MOST)
        return full and (most or not self.fits()) and self.ledger <= ledger_bound(self.budget)


def _render_bound(stats: Mapping[str, Any], threshold: int) -> int:
    """The bound the engine rendered the ledger with: planned (``stats["ledger"]``), else the
    fixed rule of the code before issue 24."""
    planned = stats.get("ledger")
    if isinstance(planned, Mapping):
        return int(planned["chars"])
    return min(8_000, max(1_000, int(threshold * 0.35)))


_TOKENS = get_counter(None, "auto")  # o200k when its BPE data loads, else the estimate


def score(summary: str, ref: ac.Reference, bound: int) -> Measured:
    at = summary.find(ANCHOR_HEADER)
    ledger = "" if at < 0 else summary[at:]
    found = ac.Found(summary)
    last = ref.last
    shares = {
        "paths": (sum(map(found.path, ref.paths)), len(ref.paths)),
        "commands": (sum(map(found.command, ref.commands)), len(ref.commands)),
        "edited": (sum(map(found.path, ref.edited)), len(ref.edited)),
        "failed": (sum(found.failure(c, e) for c, e in ref.failed.items()), len(ref.failed)),
        "last": (int(last is not None and found.command(last)), int(last is not None)),
    }
    tokens = _TOKENS.count_text(ledger) if ledger else 0
    return Measured(shares, ac.compact_chars(ref), bound, len(ledger), tokens)


def one(messages: list[Message], context: int) -> Measured:
    result = compress(
        messages, context_length=context, config=ac._settings(), summarizer="fallback", force=True
    )
    window = result.stats.get("window")
    if result.status != "compressed" or not window or result.summary is None:
        raise SystemExit(f"at {context:,}: {result.status}: {result.reason}")
    ref = ac.reference(messages[window["head_end"] : window["tail_start"]])
    threshold = int(result.stats["threshold_tokens"])
    return score(result.summary, ref, _render_bound(result.stats, threshold))


def _stand_in_commands(messages: list[Message]) -> set[str]:
    """Commands whose result ``messages`` hold only as pruning's one-line stand-in (``[tool]
    ran `cmd` -> exit N, ...``): their error lines left the transcript before any summary
    could read them (session_recall brings them back), so the ledger can keep the failure,
    not its error line."""
    calls = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            _, args = ac._args(call)
            if isinstance(args, Mapping) and isinstance(args.get("command"), str):
                calls[call.get("id")] = ac.collapse(args["command"])
    found = set()
    for msg in messages:
        text = msg.get("content")
        stand_in = msg.get("role") == "tool" and isinstance(text, str) and _STAND_IN.match(text)
        if stand_in and (command := calls.get(msg.get("tool_call_id"))) is not None:
            found.add(command)
    return found


_STAND_IN = re.compile(r"\[[^\]\n]{1,60}\] ran `")


def repeated(messages: list[Message], context: int) -> list[Measured]:
    """Feed ``messages`` in order; compact each time the prompt passes the threshold; score
    the latest summary against everything compacted so far. A failed command whose result
    was pruned to its stand-in before it was summarised counts as kept when the ledger lists
    it as failed (with "exit"): its error line was no longer there to keep."""
    compressor = Compressor(ac._settings(), context_length=context, summarizer="fallback")
    count, threshold = compressor.count, compressor.threshold_tokens
    current: list[Message] = []
    tokens, fed, first_head, rows = 0, 0, None, []
    pruned: set[str] = set()
    while fed < len(messages):
        current.append(messages[fed])
        tokens += count([messages[fed]])
        fed += 1
        pending = fed < len(messages) and messages[fed].get("role") == "tool"
        if tokens < threshold or pending:
            continue
        pruned |= _stand_in_commands(current)
        result = compressor.compress(current, force=True)
        if result.status != "compressed" or result.summary is None:
            raise SystemExit(f"at {context:,}, message {fed}: {result.status}: {result.reason}")
        summary_at = next(
            i for i, m in enumerate(result.messages) if result.summary in str(m.get("content"))
        )
        tail = len(result.messages) - summary_at - 1
        if first_head is None:
            first_head = int(result.stats["window"]["head_end"])
        ref = ac.reference(messages[first_head : fed - tail])
        for command in pruned & set(ref.failed):
            ref.failed[command] = []
        bound = _render_bound(result.stats, threshold)
        rows.append(score(result.summary, ref, bound))
        current = list(result.messages)
        tokens = count(current)
    return rows


def _transcript(seed: int, turns: int, data_dir: Path, skip: bool) -> list[Message] | None:
    path = data_dir / f"s{seed}_t{turns}.json"
    if not path.exists() and skip:
        print(f"skipped: {path} is missing", file=sys.stderr, flush=True)
        return None
    if not path.exists():
        print(f"generating {path} ...", file=sys.stderr, flush=True)
        part = path.with_name(path.name + ".part")
        script = REPO / "bench" / "gen_transcript.py"
        command = [sys.executable, str(script), "--seed", str(seed), "--turns", str(turns)]
        subprocess.run([*command, "--out", str(part)], check=True, stdout=subprocess.DEVNULL)
        os.replace(part, path)
    data: list[Message] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _pct(pair: tuple[int, int]) -> str:
    kept, total = pair
    return f"{100.0 * kept / total:.0f}% ({kept}/{total})" if total else "-"


def _row(label: str, context: int, m: Measured) -> str:
    cells = [label, f"{context:,}", *(_pct(m.shares[n]) for n in SHARES)]
    cells += [f"{m.compact:,}", f"{m.budget:,}", f"{m.ledger:,}", f"{m.ledger_tokens:,}"]
    return "| " + " | ".join(cells) + (" |" if m.ok() else " FAIL |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuned", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--sealed", type=int, nargs="*", default=[5, 6])
    parser.add_argument("--turns", type=int, nargs="*", default=[150, 300, 1000])
    parser.add_argument("--contexts", type=int, nargs="+", default=[32_000, 128_000, 1_000_000])
    parser.add_argument("--repeat", type=int, nargs="*", default=[1000], help="turns")
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--skip-generate", action="store_true", help="skip missing sessions")
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    head = "| transcript | window | paths | commands | edited | failed | last | compact "
    print(head + "| budget | ledger chars | ledger tokens |")
    print("|" + "---|" * 11)
    good = True
    for kind, seeds in (("tuned", args.tuned), ("sealed", args.sealed)):
        for turns in args.turns:
            for seed in seeds:
                messages = _transcript(seed, turns, args.data_dir, args.skip_generate)
                for context in args.contexts if messages is not None else ():
                    m = one(messages, context)
                    good = good and m.ok()
                    print(_row(f"{kind} seed {seed}, {turns:,} turns", context, m), flush=True)
    for turns in args.repeat:
        for kind, seeds in (("tuned", args.tuned), ("sealed", args.sealed)):
            for seed in seeds:
                messages = _transcript(seed, turns, args.data_dir, args.skip_generate)
                for context in args.contexts if messages is not None else ():
                    rows = repeated(messages, context)
                    good = good and all(r.ok() for r in rows)
                    label = f"{kind} seed {seed}, {turns:,} turns, {len(rows)} compactions"
                    print(_row(f"{label}, worst", context, min(rows, key=_worst_share)))
                    print(_row(f"{label}, last", context, rows[-1]), flush=True)
    print("\ntargets: edited, failed, last 100%; paths and commands >= 95% where compact <= budget")
    print("all targets met" if good else "FAIL: a target was missed")
    return 0 if good else 1


def _worst_share(m: Measured) -> tuple[bool, float]:
    """Sort key: rows that miss a target first, then the lowest path or command share."""
    low = min((k / n for name, (k, n) in m.shares.items() if n and name in ac.MOST), default=1.0)
    return (m.ok(), low)


if __name__ == "__main__":
    sys.exit(main())
