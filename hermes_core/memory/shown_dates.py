"""What the model is told about dates and appended drift in a write's answer.

Why in the answer and nowhere else: the prompt snapshot stays as it is (dates would cost
tokens in every session); the dates matter when the model decides what to replace or remove,
which is exactly when a write is refused as over the limit or naming no entry, so those
answers list each entry's dates beside the entries (``entry_dates``, same order).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.memory.dates import EntryDates, short_dates
from hermes_core.memory.documents import Updated
from hermes_core.memory.matching import preview

__all__ = ["lineage", "report_appended", "with_dates"]

log = logging.getLogger("hermes_context.memory")
Result = dict[str, Any]


def lineage(
    ops: Sequence[Mapping[str, Any]], selected: Sequence[str | None], entries: Sequence[str]
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(old entry, new entry) of each replace, and the entries an add found already there:
    what the dates need to know of a write (see :func:`hermes_core.memory.dates.apply_changes`)."""
    renamed: list[tuple[str, str]] = []
    used: list[str] = []
    for op, old in zip(ops, selected, strict=False):
        content = str(op.get("content") or "")
        if op["action"] == "replace" and old is not None:
            renamed.append((old, content))
        elif op["action"] == "add" and content in entries:
            used.append(content)
    return tuple(renamed), tuple(used)


def with_dates(result: Result, dated: Sequence[tuple[str, EntryDates | None]]) -> None:
    """Add ``entry_dates`` (``added 2026-03-01, last used 12d ago``) beside the listed
    entries of a refusal, in the same order."""
    listed = result.get("entries")
    if not isinstance(listed, list) or not listed:
        return
    now = time.time()
    result["entry_dates"] = [short_dates(d, now) for _, d in dated[: len(listed)]]
    if "error" in result:
        result["error"] += (
            " entry_dates gives each listed entry's dates, in the same order: prefer merging "
            "or dropping old entries not used for long."
        )


def report_appended(result: Result, file_name: str, updated: Updated[Result]) -> None:
    """Say that text appended to the block by other means was kept as entries of its own
    (and where the copy of the text before is)."""
    shown = [preview(entry, 60) for entry in updated.appended]
    result["appended"] = shown
    sentence = (
        f" Text added to {file_name} by other means after its last entry was kept as "
        f"{'an entry' if len(shown) == 1 else 'entries'} of its own "
        f"({'; '.join(repr(s) for s in shown)}).{updated.appended_note}"
    )
    key = "message" if result.get("success") else "error"
    result[key] = str(result.get(key, "")) + sentence
    log.info("%s: appended text kept as entries of its own:%s", file_name, sentence)
