"""Fidelity on a replay: what the sent list still holds of the facts the host has seen.

Why: a cheaper policy is only a win if it keeps what the agent needs to carry on. At each first
request after a compaction, the facts (hermes_core.evals.facts) of every transcript message so
far are looked for in the list sent (hermes_core.evals.kept.Holdings: ours' ledger counts, a
reference's summary counts). The facts are found once per transcript, so each compaction costs
one Holdings and a substring test per fact.
"""

from __future__ import annotations

import bisect
import statistics
from typing import Any

from hermes_core.evals.facts import KINDS, Fact
from hermes_core.evals.kept import Holdings

Message = dict[str, Any]


def kept_shares(facts: list[Fact], had: int, sent: list[Message]) -> dict[str, tuple[int, int]]:
    """Per kind, (facts held by ``sent``, facts) among those first seen in the ``had`` messages
    the host has so far (``facts`` sorted by index, as find_facts returns them)."""
    holdings = Holdings(sent)
    out = {kind: [0, 0] for kind in KINDS}
    for fact in facts[: bisect.bisect_left([f.index for f in facts], had)]:
        out[fact.kind][1] += 1
        out[fact.kind][0] += holdings.holds(fact)
    return {kind: (held, total) for kind, (held, total) in out.items()}


def fidelity(kept: list[dict[str, tuple[int, int]]]) -> dict[str, float | None]:
    """Mean share kept over compactions, per kind (compactions with facts of it) and overall."""
    out: dict[str, float | None] = {}
    for kind in (*KINDS, "all"):
        shares = []
        for k in kept:
            held, total = (
                k[kind] if kind != "all" else tuple(map(sum, zip(*k.values(), strict=True)))
            )
            if total:
                shares.append(held / total)
        out[kind] = statistics.fmean(shares) if shares else None
    return out


def share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"
