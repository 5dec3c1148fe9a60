"""Hostile input against ordinary text of the same size, timed in one run (ratios, medians).

The tests guard the cost of hostile input by the patterns' shape (bounded repetition) and by
counted work, never by time, so that they pass or fail the same on any machine. This bench is
where the seconds are: each hostile shape of tests/test_redact.py against the plain text there,
and each of tests/threats/test_threat_scopes.py against its prose, scaled to the same length.
A pattern that backtracks shows as 100-10,000x; linear ones sit at 0.3-3x.

    python bench/hostile.py [--runs N]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "threats"), str(ROOT)]

import test_redact  # noqa: E402
import test_threat_scopes  # noqa: E402

from hermes_core.redact import redact  # noqa: E402
from hermes_core.threats import scan  # noqa: E402


def _seconds(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _ratio(hostile: Callable[[], object], plain: Callable[[], object], runs: int) -> float:
    """The median over ``runs`` of hostile/plain, the two timed turn about."""
    return statistics.median(_seconds(hostile) / max(_seconds(plain), 1e-6) for _ in range(runs))


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    rows: list[tuple[str, str, float]] = []
    plain = test_redact.PLAIN
    for name, body in sorted(test_redact.HOSTILE.items()):
        text = (test_redact._ALL_GATES + body)[: len(plain)]
        rows.append(("redact", name, _ratio(lambda t=text: redact(t), lambda: redact(plain), runs)))
    prose = test_threat_scopes.PROSE
    for name, text in sorted(test_threat_scopes.HOSTILE.items()):
        same = (prose * (len(text) // max(len(prose), 1) + 1))[: len(text)]
        rows.append(
            (
                "scan",
                name,
                _ratio(lambda t=text: scan(t, "strict"), lambda s=same: scan(s, "strict"), runs),
            )
        )
    width = max(len(name) for _, name, _ in rows)
    print(f"{'what':<7} {'input':<{width}} hostile/plain (median of {runs})")
    for what, name, ratio in rows:
        print(f"{what:<7} {name:<{width}} {ratio:6.2f}")
    for what in ("redact", "scan"):
        ratios = [ratio for kind, _, ratio in rows if kind == what]
        print(f"{what}: median {statistics.median(ratios):.2f}, worst {max(ratios):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
