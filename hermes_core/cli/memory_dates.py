"""``memory show --dates``: each entry with when it was added, last changed and last used.

Why apart from the snapshot: the prompt never shows dates (they would cost tokens in every
session); a person deciding what to prune wants them beside each entry, as the model gets
them when memory is full. Entries are shown as the prompt shows them (a blocked one as its
placeholder); the caller escapes what it prints.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from hermes_core.memory.dates import dates_object, entry_key, short_dates
from hermes_core.memory.entries import TARGET_FILES
from hermes_core.memory.matching import preview
from hermes_core.memory.snapshot import sanitize
from hermes_core.memory.store import MemoryStore

__all__ = ["dates_json", "dates_lines"]


def dates_lines(store: MemoryStore, targets: Sequence[str]) -> list[str]:
    """``# MEMORY.md (where)`` and one numbered line per entry: its dates, then a preview."""
    now = time.time()
    lines: list[str] = []
    for target in targets:
        dated = store.dated(target)
        lines.append(f"# {TARGET_FILES[target]} ({store.where(target)}): {len(dated)} entries")
        shown = sanitize(target, [entry for entry, _ in dated], store.scan)
        for n, ((_, dates), text) in enumerate(zip(dated, shown, strict=True), 1):
            lines.append(f"{n:>3}. [{short_dates(dates, now)}] {preview(text, 100)}")
    return lines


def dates_json(store: MemoryStore, target: str) -> list[dict[str, Any]]:
    """Each entry's ``sha256`` and dates (UTC ISO 8601; null when not dated yet)."""
    return [{"sha256": entry_key(e), **dates_object(d)} for e, d in store.dated(target)]
