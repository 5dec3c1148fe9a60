"""The anchor ledger type: its categories, per-item bounds, rendered section and parser.

Why: extraction (:mod:`anchor_extract`) builds ledgers and the growth guard (:mod:`anchors`)
merges them; both need this type, so it sits below them and neither imports the other. The
idea as a whole is described in :mod:`hermes_core.compression.anchors`.

Retention: every path and command of a middle, and of every earlier middle, stays in the
rendered section while they fit in ``max_chars`` (after the other categories shrink to their
newest item); past that the least recently seen go first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from hermes_core.redact import redact

__all__ = [
    "ANCHOR_HEADER",
    "DEFAULT_LEDGER_CHARS",
    "AnchorLedger",
    "parse_anchor_section",
    "split_summary",
]


ANCHOR_HEADER: Final = "## Anchors (carried verbatim)"
#: Render bound. 8,000 characters (about 2,000 tokens) holds every path and command of the
#: 200-turn sample session; past it the oldest items go first (see :meth:`AnchorLedger.render`).
DEFAULT_LEDGER_CHARS: Final = 8000

_FIELDS: Final = ("paths", "commands", "urls", "errors", "identifiers", "asks")
_LABELS: Final = ("Files:", "Commands:", "URLs:", "Errors:", "Identifiers:", "User asks:")
_LABEL_FIELD: Final = dict(zip(_LABELS, _FIELDS, strict=True))
_ITEM_CHARS: Final = dict(zip(_FIELDS, (300, 300, 300, 200, 80, 200), strict=True))
_MAX_ITEMS: Final = dict(zip(_FIELDS, (1000, 1000, 300, 300, 300, 200), strict=True))

_WS = re.compile(r"\s+")
_NOTE = re.compile(r"\(\d{1,9} older omitted\)")


def _cut_head(text: str, n: int) -> str:
    """The first ``n`` characters, ending at whitespace when one is near, so no token is split."""
    if len(text) <= n:
        return text
    for i in range(n - 1, max(n - 400, 0), -1):
        if text[i].isspace():
            return text[:i]
    return text[:n]


def _clean(text: str, limit: int) -> str:
    """One redacted line of at most ``limit`` characters (redacted before any cut)."""
    return _clean_head(_cut_head(text, 8 * limit), limit)


@lru_cache(maxsize=4096)  # the same path or command is added many times over a transcript
def _clean_head(text: str, limit: int) -> str:
    text = redact(_WS.sub(" ", text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _unique(items: Sequence[Any], name: str) -> list[str]:
    limit = _ITEM_CHARS.get(name, 200)
    seen: dict[str, None] = {}
    for item in items:
        if isinstance(item, str) and (clean := _clean(item, limit)):
            seen[clean] = None
    return list(seen)


@dataclass
class AnchorLedger:
    """Anchors in order (oldest first); render() bounds them, merge() carries them on."""

    paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)

    def _lists(self) -> list[list[str]]:
        return [self.paths, self.commands, self.urls, self.errors, self.identifiers, self.asks]

    def is_empty(self) -> bool:
        return not any(self._lists())

    def merge(self, newer: AnchorLedger) -> AnchorLedger:
        """Union, de-duplicated; an item seen again moves to its newer place, so the oldest
        (first dropped by render) are the ones not seen lately. Each category keeps its newest
        items when over its count cap."""
        merged: dict[str, list[str]] = {}
        for name, old, new in zip(_FIELDS, self._lists(), newer._lists(), strict=True):
            fresh = _unique(new, name)
            present = set(fresh)
            items = [x for x in _unique(old, name) if x not in present] + fresh
            merged[name] = items[-_MAX_ITEMS.get(name, 200) :]
        return AnchorLedger(**merged)

    def render(self, max_chars: int = DEFAULT_LEDGER_CHARS) -> str:
        """The section, at most ``max_chars`` characters ("" when empty or nothing fits).

        Over the bound, the oldest items go first, from the largest category first: URLs,
        errors, identifiers and asks down to their newest item, then paths and commands, then
        the rest. A ``(N older omitted)`` line says what went.
        """
        cats = [_unique(items, name) for name, items in zip(_FIELDS, self._lists(), strict=True)]
        start = _plan(cats, max_chars)
        if start is None:
            return ""
        lines = [ANCHOR_HEADER]
        for i in range(len(cats)):
            if cats[i]:
                lines.append(_LABELS[i])
                if start[i]:
                    lines.append(f"({start[i]} older omitted)")
                lines.extend(f"- {item}" for item in cats[i][start[i] :])
        return "\n".join(lines)

    def crowds_out_older(self, max_chars: int = DEFAULT_LEDGER_CHARS) -> bool:
        """True when :meth:`render` would leave out at least one path and one command: an
        older path or command could then never be shown (each category drops its oldest
        first), which lets extraction stop walking back through a long middle."""
        cats = [_unique(items, name) for name, items in zip(_FIELDS, self._lists(), strict=True)]
        start = _plan(cats, max_chars)
        return start is not None and start[0] > 0 and start[1] > 0


def _plan(cats: list[list[str]], max_chars: int) -> list[int] | None:
    """Per category, how many of its oldest items :meth:`AnchorLedger.render` leaves out; a
    category that does not fit at all is emptied in ``cats``. None when nothing fits."""
    start = [0] * len(cats)
    kept = [sum(len(x) + 3 for x in items) for items in cats]

    def cost(i: int) -> int:
        if not cats[i] and not start[i]:
            return 0
        note = len(f"({start[i]} older omitted)") + 1 if start[i] else 0
        return len(_LABELS[i]) + 1 + kept[i] + note

    def total() -> int:
        return len(ANCHOR_HEADER) + sum(cost(i) for i in range(len(cats)))

    for group, floor in (((2, 3, 4, 5), 1), ((0, 1), 0), ((2, 3, 4, 5), 0)):
        while total() > max_chars:
            open_ = [i for i in group if len(cats[i]) - start[i] > floor]
            if not open_:
                break
            i = max(open_, key=lambda j: (kept[j], -j))
            kept[i] -= len(cats[i][start[i]]) + 3
            start[i] += 1
    shown = [i for i in range(len(cats)) if start[i] < len(cats[i])]
    while shown and total() > max_chars:  # labels and notes alone are too long
        last = shown.pop()
        cats[last], start[last], kept[last] = [], 0, 0  # mutates the caller's list: render
    return start if shown else None


def split_summary(text: str) -> tuple[str, AnchorLedger]:
    """The prose (text outside ledger sections, stripped) and the ledger (every section merged
    in order, so a section the LLM copied into its prose is still recovered)."""
    prose: list[str] = []
    ledger = AnchorLedger()
    lines = text.splitlines() if isinstance(text, str) else []
    i = 0
    while i < len(lines):
        if lines[i].strip() != ANCHOR_HEADER:
            prose.append(lines[i])
            i += 1
            continue
        found: dict[str, list[str]] = {name: [] for name in _FIELDS}
        current: str | None = None
        i += 1
        while i < len(lines):
            line = lines[i].strip()
            if line in _LABEL_FIELD:
                current = _LABEL_FIELD[line]
            elif line.startswith("- ") and current is not None:
                found[current].append(line[2:])
            elif line and not _NOTE.fullmatch(line):
                break
            i += 1
        ledger = ledger.merge(AnchorLedger(**found))
    return "\n".join(prose).strip(), ledger


def parse_anchor_section(summary_text: str) -> AnchorLedger:
    """The ledger of a previous summary (inverse of :meth:`AnchorLedger.render`)."""
    return split_summary(summary_text)[1]
