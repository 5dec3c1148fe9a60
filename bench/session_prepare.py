"""``Session.prepare()`` overhead per turn: O(the new messages), not O(the transcript).

A session is resumed over 1,000 and over 10,000 stored messages; then each turn appends a
user message, calls ``prepare`` (persist, trigger check, wire list) and ``end_turn`` with
the reply, as a host does. Compression is switched off so that only the per-turn overhead is
measured. Shown against a full recount of the transcript (what an O(n) design would pay at
least) in the same run. Medians of several runs; the ratio 10,000 / 1,000 is the figure that
matters (1.0 means flat).

    python bench/session_prepare.py [--turns 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import hermes_core as hc
from hermes_core.config.loader import load_config


def transcript(n: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(n // 2):
        messages.append({"role": "user", "content": f"question {i}: how does module {i} work?"})
        messages.append({"role": "assistant", "content": f"Module {i} parses the input. " * 4})
    return messages


def per_turn(home: Path, stored: int, turns: int) -> tuple[float, float]:
    """Median seconds per turn of prepare + end_turn, and of a full recount."""
    config = {"compression": {"enabled": False}, "model": {"context_length": 10_000_000}}
    host = hc.Hermes(load_config(config, home=home, environ={}))
    messages = transcript(stored)
    with host:
        session = host.session(f"s{stored}")
        session.prepare(messages)  # the stored history (one insert of everything)
        session.close()
        session = host.session(f"s{stored}")  # resumed: the view comes from the store
        timings, recounts = [], []
        for t in range(turns):
            messages.append({"role": "user", "content": f"follow-up {t}"})
            started = time.perf_counter()
            session.prepare(messages)
            messages.append({"role": "assistant", "content": f"reply {t}"})
            session.end_turn(messages)
            timings.append(time.perf_counter() - started)
            started = time.perf_counter()
            hc.count_tokens(messages)
            recounts.append(time.perf_counter() - started)
        session.close()
    return statistics.median(timings), statistics.median(recounts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    rows: dict[int, list[tuple[float, float]]] = {1_000: [], 10_000: []}
    for _ in range(args.repeats):
        for size, samples in rows.items():
            with tempfile.TemporaryDirectory() as home:
                samples.append(per_turn(Path(home), size, args.turns))
    print(f"{'stored':>8}  {'prepare+end_turn':>17}  {'full recount':>13}")
    medians = {}
    for size, samples in rows.items():
        turn = statistics.median(s[0] for s in samples)
        recount = statistics.median(s[1] for s in samples)
        medians[size] = (turn, recount)
        print(f"{size:>8,}  {turn * 1000:>14.2f} ms  {recount * 1000:>10.2f} ms")
    ratio = medians[10_000][0] / medians[1_000][0]
    recount_ratio = medians[10_000][1] / medians[1_000][1]
    print(f"10,000 / 1,000: prepare+end_turn {ratio:.2f}x, full recount {recount_ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
