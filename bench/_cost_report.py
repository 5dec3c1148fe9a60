"""The tables bench/session_cost.py prints: bill and compactions per policy, ours' ratio against
each reference and its target, the cycle figures, and the fidelity per policy."""

from __future__ import annotations

import itertools
import statistics
from typing import Any

from _fidelity import share

from hermes_core.evals.facts import KINDS

#: ours' cost over each reference's, as issue 13 (0.19) and issue 25 (the 0.22 fork) ask
TARGETS = {"hermes-0.19": 0.80, "hermes-0.22": 0.85, "model-0.19": 0.80}


def _m(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    return f"{x / 1e3:.0f} K" if x >= 1e4 or x == 0 else f"{x / 1e3:.1f} K"


def _median(values: list[int], fmt: Any = _m) -> str:
    return str(fmt(statistics.median(values))) if values else "-"


def report(title: str, rows: list[dict]) -> None:
    print(f"\n### {title}\n")
    print(
        "| policy | requests | compactions (full + prune-only) | prompt tokens | cached | "
        "uncached | billed-eq input | summariser in / out | cost | max prompt | over threshold |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        n = r["full"] + r["pruned"]
        compactions = f"{n} ({r['full']} + {r['pruned']})" if r["pruned"] else str(n)
        print(
            f"| {r['policy']} | {r['requests']:,} | {compactions} | {_m(r['total'])} | "
            f"{_m(r['cached'])} | {_m(r['total'] - r['cached'])} | {_m(r['billed'])} | "
            f"{_m(r['s_in'])} / {_m(r['s_out'])} | {_m(r['cost'])} | {r['max']:,} | "
            f"{r['over']} ({100 * r['over'] / r['requests']:.1f}%) |"
        )
    by = {r["policy"]: r for r in rows}
    print()
    for ref, target in TARGETS.items():
        if ref not in by:
            continue
        for name in ("ours", "floor"):
            if name in by:
                ratio = by[name]["cost"] / by[ref]["cost"]
                goal = (
                    f"the issues ask for at most {target:.2f}"
                    if name == "ours"
                    else ("the best any policy keeping this tail gets")
                )
                bold = f"**{ratio:.3f}**" if name == "ours" else f"{ratio:.3f}"
                print(f"cost {name} / {ref}: {bold} ({goal})")
    fallbacks = {r["policy"]: r["fallbacks"] for r in rows if r.get("fallbacks")}
    if fallbacks:
        print(f"summary fallbacks (the summariser call failed): {fallbacks}")
    print(
        "\n| policy | requests per compaction (median gap) | after a compaction, all (full / "
        "prune-only): median prompt | median cached | median messages cached whole | replay time |"
    )
    print("|---|---|---|---|---|---|")
    for r in rows:
        after = r["after"]
        gaps = [b[4] - a[4] for a, b in itertools.pairwise(after)]
        gap = f"{r['requests'] / max(1, len(after)):.1f} ({_median(gaps, _g)})"
        cells = [_cell(after, column, r["pruned"] > 0, fmt) for column, fmt in ((1, _m), (2, _m))]
        whole = _cell(after, 3, r["pruned"] > 0, _g)
        print(f"| {r['policy']} | {gap} | {' | '.join(cells)} | {whole} | {r['seconds']:.0f} s |")
    if any(r["kept"] for r in rows):
        print(
            "\nFidelity: at each first request after a compaction, the share of the facts of "
            "all messages so far that the sent list holds; mean over compactions.\n"
        )
        print(f"| policy | compactions measured | {' | '.join(KINDS)} | all |")
        print("|---|---|" + "---|" * (len(KINDS) + 1))
        for r in rows:
            cells = [share(r["fidelity"][kind]) for kind in (*KINDS, "all")]
            print(f"| {r['policy']} | {len(r['kept'])} | {' | '.join(cells)} |")


def _g(x: float) -> str:
    return f"{x:g}"


def _cell(after: list[tuple], column: int, split: bool, fmt: Any) -> str:
    """The median over all compactions, then full / prune-only when there were both kinds."""
    cell = _median([a[column] for a in after], fmt)
    if split:
        kinds = [[a[column] for a in after if a[0] == k] for k in ("compressed", "pruned")]
        cell += f" ({' / '.join(_median(values, fmt) for values in kinds)})"
    return cell
