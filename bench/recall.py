#!/usr/bin/env python3
"""Recall through ``session_recall`` after repeated compactions (hermes_core/evals/recall.py).

Each transcript is replayed through a real session (SQLite store in a temp home, fallback
summariser, no network), a forced compaction every ``--every`` turn groups; then every
original tool output no longer in the context is asked for by its call id. Prints the share
returned byte-exact, those the threat scanner withheld (by design, as ``session_search`` does),
those lost (must be none: exit 1 otherwise), and the tokens the ``[ref ...]`` tags add.

Transcripts: the two samples (tests/data/transcripts) and bench/anchor_coverage.py's
generated sessions (``--turns``).

Usage: python bench/recall.py [--turns 150 1000] [--contexts 32000 128000] [--every 40]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "bench")]

from anchor_coverage import make_session  # noqa: E402

import hermes_core as hc  # noqa: E402
from hermes_core.config.loader import load_config  # noqa: E402
from hermes_core.evals.recall import replay_recall  # noqa: E402
from hermes_core.tokens import get_counter  # noqa: E402


def transcripts(turns: list[int]) -> list[tuple[str, list[dict[str, Any]]]]:
    data = REPO / "tests" / "data" / "transcripts"
    found = [
        (name, json.loads((data / f"{name}.json").read_text(encoding="utf-8")))
        for name in ("coding-50turns", "coding-200turns")
    ]
    return found + [(f"generated-{n}", make_session(n)) for n in turns]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[150, 1000])
    parser.add_argument("--contexts", type=int, nargs="*", default=[32_000, 128_000])
    parser.add_argument("--every", type=int, default=40)
    args = parser.parse_args()
    counter = get_counter("gpt-4o", "auto")
    print(
        "| transcript | window | compactions | archived outputs | recalled byte-exact "
        "| withheld (scanner) | lost | ref tokens / compaction | ref tokens / stand-in |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    lost = 0
    for name, messages in transcripts(args.turns):
        for window in args.contexts:
            with tempfile.TemporaryDirectory() as home:
                config = {"model": {"context_length": window}}
                with hc.Hermes(load_config(config, home=Path(home), environ={})) as host:
                    f = replay_recall(
                        host, "bench", messages, every=args.every, count_text=counter.count_text
                    )
            lost += f.lost
            print(
                f"| {name} | {window // 1000}K | {f.compactions} | {f.archived_outputs} "
                f"| {f.recall_share:.1%} | {f.withheld_outputs} | {f.lost} "
                f"| {f.tokens_per_compaction:.0f} | {f.tokens_per_stand_in:.1f} |",
                flush=True,
            )
    return 0 if lost == 0 else 1  # withheld by the threat scanner is by design; lost is not


if __name__ == "__main__":
    sys.exit(main())
