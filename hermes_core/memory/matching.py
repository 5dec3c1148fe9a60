"""Which entry a replace or remove means: exact entry first, else the one entry containing it.

Why: models quote entries loosely. An exact match must win even when it is also a substring
of a longer entry ("tabs" vs "prefers tabs over spaces"); several candidates are an error with
short previews, so the model picks one instead of the store guessing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Match", "preview", "select_entry"]


@dataclass(frozen=True)
class Match:
    """The selected entry's index, or why none was selected (``error``, and the indices of
    the entries that matched when there were several)."""

    index: int | None
    error: str | None = None
    hits: tuple[int, ...] = ()


def preview(entry: str, limit: int = 80) -> str:
    """One line of at most ``limit`` characters, to show an entry in an error."""
    line = " ".join(entry.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def select_entry(entries: Sequence[str], old_text: str) -> Match:
    """The entry ``old_text`` designates: equal to it, else the unique entry containing it."""
    needle = old_text.strip()
    if not needle:
        return Match(None, "old_text is empty: quote the entry (or a unique part of it).")
    for i, entry in enumerate(entries):
        if entry == needle:
            return Match(i)
    hits = [i for i, entry in enumerate(entries) if needle in entry]
    if len(hits) == 1:
        return Match(hits[0])
    if not hits:
        return Match(None, f"no entry contains {preview(needle, 60)!r}.")
    return Match(
        None,
        f"multiple entries matched {preview(needle, 60)!r} ({len(hits)}): quote more of the "
        "one you mean.",
        tuple(hits),
    )
