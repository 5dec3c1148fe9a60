"""Writes that keep the dates in step, and the public pair to read and write a block's dates.

Why here and not in each backend: the files and PostgreSQL (and a third-party backend) must
agree on what a write does to the dates and on what appended drift is, so each runs the
store's decision through :func:`decide_dated` inside its own concurrency control (the file
lock, the version check) and stores the text and the metadata it returns together.
:func:`read_block_dates` / :func:`write_block_dates` are what an export and an import use.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from hermes_core.memory.dates import (
    META_VERSION,
    BlockMeta,
    EntryDates,
    Split,
    apply_changes,
    dates_of,
    dump_meta,
    entry_key,
    load_meta,
    mark_written,
    reconcile,
    split_appended,
)
from hermes_core.memory.documents import DatedDocuments, Decision, MemoryDocuments, Scope
from hermes_core.memory.entries import parse_entries

__all__ = [
    "DatedDecision",
    "block_view",
    "decide_dated",
    "read_block_dates",
    "write_block_dates",
]

T = TypeVar("T")


@dataclass(frozen=True)
class DatedDecision(Generic[T]):
    """The store's decision, the metadata to store with it (None: leave it as it is) and
    the entries split off appended drift (non-empty only when the text is rewritten)."""

    decision: Decision[T]
    meta: dict[str, Any] | None
    appended: tuple[str, ...] = ()
    #: the text to store (the decision's, with a final newline when asked for; None: none)
    stored: str | None = None
    #: the write removes or rewrites an entry the store never wrote (a hand edit): a copy of
    #: the text as it was is kept first, since that entry may hold a note typed into it
    copy_first: bool = False


def decide_dated(
    text: str | None,
    raw_meta: object,
    decide: Callable[[str | None], Decision[T]],
    now: float | None = None,
    *,
    final_newline: bool = False,
) -> DatedDecision[T]:
    """Run ``decide`` on the text as the store reads it (appended drift split off), and
    work out the metadata of the result. A refused write changes no metadata either.
    ``final_newline``: the text is stored ending in a newline (files: so that a line appended
    by ``echo note >>`` starts a line of its own and is told apart from a hand edit that
    extends the last line)."""
    now = time.time() if now is None else now
    meta = load_meta(raw_meta)
    split = split_appended(text, meta)
    decision = decide(split.text)
    base = reconcile(meta, parse_entries(split.text or ""), now)
    if decision.text is not None:
        after = parse_entries(decision.text)
        changed = apply_changes(base, after, now, renamed=decision.renamed, used=decision.used)
        stored = decision.text
        if final_newline and stored and not stored.endswith("\n"):
            stored += "\n"
        known = meta.lookup()
        gone = set(parse_entries(split.text or "")) - set(after)
        foreign = bool(known) and any(entry_key(entry) not in known for entry in gone)
        return DatedDecision(
            decision,
            dump_meta(mark_written(changed, stored, text)),
            split.appended,
            stored,
            copy_first=foreign,
        )
    if decision.succeeded and decision.used:
        current = parse_entries(split.text or "")
        return DatedDecision(
            decision, dump_meta(apply_changes(base, current, now, used=decision.used))
        )
    return DatedDecision(decision, None)


def block_view(documents: MemoryDocuments, target: str, scope: Scope, text: str | None) -> Split:
    """``text`` as the store reads it: with dated documents, text appended after the store's
    own is split off into entries of its own."""
    if not isinstance(documents, DatedDocuments) or text is None:
        return Split(text)
    return split_appended(text, load_meta(documents.read_meta(target, scope)))


def block_meta(documents: MemoryDocuments, target: str, scope: Scope) -> BlockMeta:
    """The block's metadata (empty for documents that keep none)."""
    if not isinstance(documents, DatedDocuments):
        return BlockMeta()
    return load_meta(documents.read_meta(target, scope))


def dated_entries(
    documents: MemoryDocuments, target: str, scope: Scope
) -> list[tuple[str, EntryDates | None]]:
    """Each entry of the block as the store reads it, with its dates (None: not dated)."""
    text = documents.read(target, scope)
    meta = block_meta(documents, target, scope)
    entries = parse_entries(split_appended(text, meta).text or "")
    return list(zip(entries, dates_of(entries, meta), strict=True))


def read_block_dates(documents: MemoryDocuments, target: str, scope: Scope) -> dict[str, Any]:
    """The dates of one block as a JSON object (``{"v": 1, "entries": [{"sha256",
    "created", "updated", "last_used"}], "written": ...}``; ``{}`` for documents that keep
    no dates). Entries are named by the sha256 of their text."""
    if not isinstance(documents, DatedDocuments):
        return {}
    return dump_meta(load_meta(documents.read_meta(target, scope)))


def write_block_dates(
    documents: MemoryDocuments, target: str, scope: Scope, dates: Mapping[str, Any]
) -> int:
    """Give the block's entries the dates of ``dates`` (an object :func:`read_block_dates`
    made, e.g. in another home); returns how many entries took them. Records for entries the
    block does not hold are ignored, entries without one keep theirs; which text the store
    wrote last stays this block's own. Raises :class:`ValueError` (nothing changed) for an
    object that is not such metadata, or documents that keep no dates."""
    if not isinstance(documents, DatedDocuments):
        raise ValueError(f"{documents.kind} memory keeps no dates; nothing was changed")
    if not isinstance(dates, Mapping) or dates.get("v") != META_VERSION:
        raise ValueError(
            f"dates must be an object with v: {META_VERSION} and a list of entries (as "
            "read_block_dates returns); nothing was changed"
        )
    if not isinstance(dates.get("entries"), list):
        raise ValueError("dates has no list of entries; nothing was changed")
    given = load_meta(dates).lookup()
    taken = 0

    def change(text: str | None, raw: object) -> object:
        nonlocal taken
        meta = load_meta(raw)
        entries = parse_entries(split_appended(text, meta).text or "")
        base = reconcile(meta, entries, time.time())
        merged = tuple((key, given.get(key, d)) for key, d in base.entries)
        taken = sum(1 for key, _ in base.entries if key in given)
        return dump_meta(replace(meta, entries=merged)) if taken else None

    documents.update_meta(target, scope, change)
    return taken
