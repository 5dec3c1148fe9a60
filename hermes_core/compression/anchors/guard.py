"""The growth guard: a new summary's prose shrunk to its budget, then the ledger with every
anchor of the previous summary's ledger merged back in, so nothing vanishes between
compactions.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hermes_core.compression.anchors.ledger import (
    DEFAULT_LEDGER_CHARS,
)
from hermes_core.compression.anchors.recognisers import (
    parse_anchor_section,
    split_summary,
)

__all__ = ["guard_summary"]


# --- growth guard ------------------------------------------------------------------------

_HEADING = re.compile(r"#{1,6}\s.{0,200}|\*\*[^*\n]{1,120}\*\*:?|[A-Z][\w &/,()-]{0,60}:")


def _largest(n: int, fits: Callable[[int], bool]) -> int:
    """The largest k in [0, n] with fits(k), by binary search (fits(0) is assumed)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _shrink(prose: str, budget: int, count: Callable[[str], int]) -> str:
    """Drop trailing body lines (headings kept; the last kept line may be cut at a word with
    "…"), else trailing lines, else characters, until ``count(prose) <= budget``. Binary
    searches: O(log n) calls to ``count``."""
    if budget <= 0 or count(prose) <= budget:
        return prose if budget > 0 else ""
    lines = prose.split("\n")
    heading = [bool(_HEADING.fullmatch(line.strip())) for line in lines]
    body = [i for i, h in enumerate(heading) if not h]

    def keep(k: int, cut: int = 0) -> str:
        """Headings, the first ``k`` body lines, and ``cut`` characters of the next one."""
        chosen = set(body[:k])
        partial = body[k] if cut and k < len(body) else -1
        out = [
            (x[:cut].rsplit(" ", 1)[0] + " …" if i == partial else x)
            for i, x in enumerate(lines)
            if heading[i] or i in chosen or i == partial
        ]
        return "\n".join(out).strip()

    def fits(text: str) -> bool:
        return count(text) <= budget

    if fits(keep(0)):
        k = _largest(len(body), lambda k: fits(keep(k)))
        cut = _largest(len(lines[body[k]]) - 1, lambda c: fits(keep(k, c))) if k < len(body) else 0
        return keep(k, cut if cut >= 20 else 0)
    k = _largest(len(lines), lambda k: fits("\n".join(lines[:k]).strip()))
    first = lines[0]
    text = "\n".join(lines[:k]) if k else first[: _largest(len(first), lambda c: fits(first[:c]))]
    return text.strip()


def guard_summary(
    new_summary: str,
    previous_summary: str | None,
    budget_tokens: int,
    count: Callable[[str], int],
    *,
    max_ledger_chars: int = DEFAULT_LEDGER_CHARS,
) -> str:
    """The accepted summary: prose shrunk to ``budget_tokens`` (the budget is the prose's; the
    ledger has its own character bound), then the ledger with every anchor of the previous
    summary's ledger merged back in (older), so nothing vanishes between compactions."""
    prose, ledger = split_summary(new_summary)
    if previous_summary:
        ledger = parse_anchor_section(previous_summary).merge(ledger)
    prose = _shrink(prose, budget_tokens, count)
    return "\n\n".join(part for part in (prose, ledger.render(max_ledger_chars)) if part)
