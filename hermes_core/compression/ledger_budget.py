"""How many characters the anchor ledger may take: a share of the room a compaction creates.

Why: a fixed bound (8,000 characters, about 2,300 tokens) kept the same share of a long
middle's paths and commands at a 128K window as at 32K, while the compacted prompt sat at a
tenth of its threshold. What a compaction leaves free is the threshold less what the compacted
prompt holds besides the ledger (the kept head and tail and the prose's budget); the ledger
gets a fixed share of that headroom, so it grows with the window and the next compaction still
comes no sooner than the share says. Bounds: never below the bound the ledger had before
(35% of the threshold's tokens in characters, 1,000 to 8,000), so a small window keeps what
it had; never above a ceiling that keeps the summary a small part of a 1M window's threshold.

The budget is the whole section's, rules and decisions included: the render's bound
(``max_chars``) is what leaves room for their fifth on top (:func:`ledger_bound`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Final

from hermes_core.compression.anchors.items import DEFAULT_LEDGER_CHARS, ledger_bound

__all__ = [
    "CHARS_PER_TOKEN",
    "HEADROOM_SHARE",
    "MAX_LEDGER_TOKENS",
    "LedgerBudget",
    "floor_chars",
    "ledger_budget",
]

#: The ledger's share of the headroom a compaction creates.
HEADROOM_SHARE: Final = 0.20
#: At most this many tokens for the whole section (5% of a 1M window's 500,000 threshold).
MAX_LEDGER_TOKENS: Final = 25_000
#: Characters per token of a ledger: paths and commands are dense (punctuation and short
#: words); o200k and the estimate both give 3.3-3.9 on rendered ledgers, so 3 errs on the
#: side of a smaller section.
CHARS_PER_TOKEN: Final = 3
_FLOOR_SHARE: Final = 0.35
_FLOOR_MIN: Final = 1_000


@dataclass(frozen=True)
class LedgerBudget:
    """The ledger's room for one compaction: ``chars`` is the render bound (``max_chars``),
    ``section_chars`` the whole section's (``ledger_bound(chars)``); tokens are the
    trigger's units."""

    threshold_tokens: int
    kept_tokens: int  # head, tail and the prose's budget: the compacted prompt but the ledger
    headroom_tokens: int
    share_tokens: int  # HEADROOM_SHARE of the headroom, within the ceiling
    chars: int
    section_chars: int

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def floor_chars(threshold_tokens: int) -> int:
    """The bound the ledger had before it followed the window: 35% of the threshold's tokens
    in characters, 1,000 to 8,000."""
    return min(DEFAULT_LEDGER_CHARS, max(_FLOOR_MIN, int(threshold_tokens * _FLOOR_SHARE)))


def _render_bound(section_chars: int) -> int:
    """The largest ``max_chars`` whose whole section (:func:`ledger_bound`) fits."""
    chars = section_chars * 5 // 6
    while ledger_bound(chars + 1) <= section_chars:
        chars += 1
    while chars > 0 and ledger_bound(chars) > section_chars:
        chars -= 1
    return chars


def ledger_budget(threshold_tokens: int, kept_tokens: int) -> LedgerBudget:
    """The ledger's budget when the compacted prompt holds ``kept_tokens`` besides it (in the
    trigger's units): ``HEADROOM_SHARE`` of ``threshold_tokens - kept_tokens``, at most
    ``MAX_LEDGER_TOKENS``, in characters at ``CHARS_PER_TOKEN``; never under
    :func:`floor_chars`."""
    headroom = max(0, threshold_tokens - max(0, kept_tokens))
    share = min(MAX_LEDGER_TOKENS, int(headroom * HEADROOM_SHARE))
    chars = max(floor_chars(threshold_tokens), _render_bound(share * CHARS_PER_TOKEN))
    return LedgerBudget(
        threshold_tokens=threshold_tokens,
        kept_tokens=kept_tokens,
        headroom_tokens=headroom,
        share_tokens=share,
        chars=chars,
        section_chars=ledger_bound(chars),
    )
