"""Dates of memory entries (created, updated, last used) and where the store's own text ends.

Why a sidecar and not the text: the text rides in every system prompt, the dates only matter
when the model (or a person) decides what to replace or remove, so they are kept beside it
(``MEMORY.md.meta.json``, or a column of the row) and shown only where that decision is made.
Entries are known by content (the sha256 of the entry as stored), so a hand edit is never an
error: an entry nobody dated is new, or updated when it took the place of a dated one.

The sidecar also remembers the text the store last wrote (its sha256 and length). Text found
after that, glued onto the last entry (``echo note >> MEMORY.md``), is *appended drift*: it is
split off as an entry of its own instead of becoming part of the entry it touches. Pure
functions; the documents read and store the sidecar under their own concurrency control.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from hermes_core.memory.entries import parse_entries, render_entries, round_trips

__all__ = [
    "META_VERSION",
    "BlockMeta",
    "EntryDates",
    "Split",
    "apply_changes",
    "dates_object",
    "dates_of",
    "dump_meta",
    "entry_key",
    "iso",
    "load_meta",
    "load_written",
    "mark_written",
    "moment",
    "reconcile",
    "short_dates",
    "split_appended",
]

META_VERSION: Final = 1
_ISO: Final = "%Y-%m-%dT%H:%M:%SZ"


def entry_key(entry: str) -> str:
    """The identity of an entry: the sha256 of its text as stored (the audit log's too)."""
    return hashlib.sha256(entry.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class EntryDates:
    """Unix times: when the entry was first stored (or first seen, when written by hand),
    when its text last changed, and when a write last named it (None: never)."""

    created: float
    updated: float
    last_used: float | None = None


@dataclass(frozen=True)
class BlockMeta:
    """The dated entries of one block in text order, and the sha256 and length in characters
    of the text the store last wrote (None: not known, as for a file from before dates)."""

    entries: tuple[tuple[str, EntryDates], ...] = ()
    written: tuple[str, int] | None = None
    #: the sha256 of the text that one replaced: a text still equal to it is one a crash
    #: kept between storing the dates and the text, never text with something appended
    previous: str | None = None

    def lookup(self) -> dict[str, EntryDates]:
        return dict(self.entries)


@dataclass(frozen=True)
class Split:
    """The text as the store reads it (hand-appended text split off as entries of their
    own) and those appended entries (empty: nothing was glued on)."""

    text: str | None
    appended: tuple[str, ...] = ()


def iso(moment: float) -> str:
    """A Unix time as UTC ISO 8601 to the second (how the sidecars keep times)."""
    return time.strftime(_ISO, time.gmtime(moment))


def moment(value: object) -> float | None:
    """The Unix time of an :func:`iso` string; None for anything else."""
    if not isinstance(value, str) or not value.endswith("Z"):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value[:-1] + "+00:00")
    except ValueError:
        return None
    return parsed.timestamp()


def dates_object(dates: EntryDates | None) -> dict[str, str | None]:
    """``{"created", "updated", "last_used"}`` as UTC ISO 8601 (all null: not dated)."""
    if dates is None:
        return {"created": None, "updated": None, "last_used": None}
    used = iso(dates.last_used) if dates.last_used is not None else None
    return {"created": iso(dates.created), "updated": iso(dates.updated), "last_used": used}


def dump_meta(meta: BlockMeta) -> dict[str, Any]:
    """The JSON object of the sidecar (times as UTC ISO 8601, to the second)."""
    entries = [{"sha256": key, **dates_object(d)} for key, d in meta.entries]
    written: dict[str, Any] | None = None
    if meta.written:
        written = {"sha256": meta.written[0], "chars": meta.written[1]}
        if meta.previous:
            written["previous"] = meta.previous
    return {"v": META_VERSION, "entries": entries, "written": written}


def load_meta(raw: object) -> BlockMeta:
    """The sidecar's object as metadata. Whatever cannot be read (edited by hand, another
    version) is left out rather than refused: dates are a help, never a reason to refuse a
    write; entries without a record count as new."""
    if not isinstance(raw, Mapping) or raw.get("v") != META_VERSION:
        return BlockMeta()
    entries: list[tuple[str, EntryDates]] = []
    seen: set[str] = set()
    records = raw.get("entries")
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, Mapping):
            continue
        key, created = record.get("sha256"), moment(record.get("created"))
        updated = moment(record.get("updated"))
        if not isinstance(key, str) or key in seen or created is None or updated is None:
            continue
        seen.add(key)
        used = moment(record.get("last_used"))
        entries.append((key, EntryDates(created, max(created, updated), used)))
    mark = raw.get("written")
    written, previous = None, None
    if isinstance(mark, Mapping):
        digest, chars, before = mark.get("sha256"), mark.get("chars"), mark.get("previous")
        if isinstance(digest, str) and isinstance(chars, int) and chars > 0:
            written = (digest, chars)
            previous = before if isinstance(before, str) else None
    return BlockMeta(tuple(entries), written, previous)


def load_written(raw: object) -> BlockMeta:
    """Only the mark of the text the store wrote (no entry dates): all that reading a block
    needs, and cheaper than :func:`load_meta` for a long block."""
    if not isinstance(raw, Mapping) or raw.get("v") != META_VERSION:
        return BlockMeta()
    return load_meta({"v": META_VERSION, "written": raw.get("written")})


def mark_written(meta: BlockMeta, text: str, before: str | None) -> BlockMeta:
    """``meta`` remembering that the store has just replaced ``before`` with ``text``."""
    written = (entry_key(text), len(text)) if text else None
    return replace(meta, written=written, previous=entry_key(before) if before else None)


def split_appended(text: str | None, meta: BlockMeta) -> Split:
    """Find text appended after what the store last wrote: text that starts a new line after
    it (text on the same line extends the last entry: a hand edit of that entry). Two ways to
    know: the text begins with exactly what the store wrote and goes on; or, after a hand edit
    elsewhere, the last entry is one the store never wrote whose leading lines are exactly an
    entry it did write and that is nowhere else in the text (and the text is otherwise in the
    store's format: drift inside is left for the drift rules, which rewrite nothing). The
    rest is parsed on its own and kept as separate entries; only when that differs from how
    the whole text parses (the rest was glued onto the last entry) is it drift to report.
    An appended entry already present is dropped, as a duplicate always is."""
    if text is None or (meta.written is None and not meta.entries):
        return Split(text)
    if meta.previous is not None and entry_key(text) == meta.previous:
        return Split(text)  # the text before the store's last write (a crash in between)
    if meta.written is not None:
        digest, chars = meta.written
        if len(text) > chars and entry_key(text[:chars]) == digest:
            if text[chars - 1] != "\n" and text[chars] not in "\r\n":
                return Split(text)  # the same line goes on: a hand edit of the last entry
            start = chars - 1 if text[chars - 1] == "\n" else chars
            return _split_at(text, parse_entries(text[:chars]), text[start:], parse_entries(text))
    whole = parse_entries(text)
    if not round_trips(text):
        return Split(text)  # edited inside too: drift, which no write rewrites
    glued = _glued_prefix(whole, meta)
    if glued is None:
        return Split(text)
    prefix, rest = glued
    return _split_at(text, [*whole[:-1], prefix], rest, whole)


def _glued_prefix(whole: Sequence[str], meta: BlockMeta) -> tuple[str, str] | None:
    """(the known entry, the rest) when the last entry is a known entry and lines glued
    onto it: the longest leading lines that are an entry the store wrote, not found elsewhere
    in the text; None otherwise."""
    if not whole or not meta.entries:
        return None
    known = meta.lookup()
    last = whole[-1]
    if entry_key(last) in known:
        return None
    others = set(whole[:-1])
    at = last.rfind("\n")
    while at > 0:
        head = last[:at].strip()
        if head and head not in others and entry_key(head) in known:
            return head, last[at:]
        at = last.rfind("\n", 0, at)
    return None


def _split_at(text: str, ours: Sequence[str], rest: str, whole: Sequence[str]) -> Split:
    """The entries ``ours`` and those of ``rest`` as the text (``text`` unchanged when that
    is how the whole text parses anyway: an entry added with its own separator)."""
    extra = [e for e in parse_entries(rest) if e not in ours]
    if [*ours, *extra] == list(whole):
        return Split(text)
    return Split(render_entries(list(dict.fromkeys([*ours, *extra]))), tuple(extra))


def reconcile(meta: BlockMeta, entries: Sequence[str], now: float) -> BlockMeta:
    """Records for exactly ``entries``: a dated entry keeps its dates; an undated one that
    stands where a dated entry no longer found in the text stood was edited by hand
    (updated now, created kept); any other undated entry is new (first seen now)."""
    known = meta.lookup()
    present = {entry_key(e) for e in entries}
    orphans = {i: key for i, (key, _) in enumerate(meta.entries) if key not in present}
    out: list[tuple[str, EntryDates]] = []
    for index, entry in enumerate(entries):
        key = entry_key(entry)
        if key in known:
            out.append((key, known[key]))
        elif index in orphans:
            old = known[orphans.pop(index)]
            out.append((key, EntryDates(old.created, max(now, old.created), old.last_used)))
        else:
            out.append((key, EntryDates(now, now)))
    return replace(meta, entries=tuple(out))


def apply_changes(
    meta: BlockMeta,
    after: Sequence[str],
    now: float,
    *,
    renamed: Iterable[tuple[str, str]] = (),
    used: Iterable[str] = (),
) -> BlockMeta:
    """The records after a write: ``meta`` (reconciled with the text the write was decided
    on) carried over to the entries ``after`` it. A replaced entry's successor keeps its
    ``created`` and is updated and used now (``renamed``: pairs of old and new entry); an
    entry a write named (``used``: a duplicate add) is used now; the rest are new."""
    known = meta.lookup()
    successor = {entry_key(new): entry_key(old) for old, new in renamed}
    named = {entry_key(e) for e in used}
    out: list[tuple[str, EntryDates]] = []
    for entry in after:
        key = entry_key(entry)
        if key in known:
            dates = known[key]
        elif (old := successor.get(key)) is not None and old in known:
            created = known[old].created
            dates = EntryDates(created, max(now, created), max(now, created))
        else:
            dates = EntryDates(now, now)
        if key in named:
            dates = replace(dates, last_used=max(now, dates.created))
        out.append((key, dates))
    return replace(meta, entries=tuple(out))


def dates_of(entries: Sequence[str], meta: BlockMeta) -> list[EntryDates | None]:
    """The dates of each entry (None: not dated yet, as an entry written by hand until the
    next write)."""
    known = meta.lookup()
    return [known.get(entry_key(e)) for e in entries]


def _ago(seconds: float) -> str:
    if seconds < 3600:
        return "just now" if seconds < 60 else f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    return f"{int(seconds // 86400)}d ago"


def short_dates(dates: EntryDates | None, now: float) -> str:
    """``added 2026-03-01, last used 12d ago`` (the day it changed too when it did):
    compact enough to show beside every entry when deciding what to drop."""
    if dates is None:
        return "not dated (edited by hand)"
    day = time.strftime("%Y-%m-%d", time.gmtime(dates.created))
    parts = [f"added {day}"]
    changed = time.strftime("%Y-%m-%d", time.gmtime(dates.updated))
    if changed != day:
        parts.append(f"updated {changed}")
    if dates.last_used is None or not math.isfinite(dates.last_used):
        parts.append("never used")
    else:
        parts.append(f"last used {_ago(max(0.0, now - dates.last_used))}")
    return ", ".join(parts)
