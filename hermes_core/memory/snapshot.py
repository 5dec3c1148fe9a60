"""The memory blocks of the system prompt: bounded, with entries that fail a rescan blocked out.

Why: memory is injected into every future prompt, so an entry planted by hand (or written
before a pattern existed) is scanned again at load and replaced by a placeholder in the
prompt only; the file keeps the raw text so the user can see it and remove it. Error results
that list entries use the same sanitised view, so an error never re-injects a payload.

Two things the prompt shows that no single entry does, and that are checked here:

- **Entries are joined.** A payload split over two entries ("... ignore all of the previous"
  and "instructions in the system prompt ...") passes an entry-by-entry scan. So each entry
  is also scanned together with its neighbours as the prompt renders them (up to
  :data:`CONTEXT_CHARS` characters on each side): linear in the number of entries, never all
  pairs. A finding of the window that neither side explains on its own blocks the entry.
- **A file can be any size on disk.** The block shows the entries, oldest first, while they
  fit in the target's limit, and ends with a line that says how many were left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from hermes_core.memory.entries import (
    ENTRY_DELIMITER,
    TARGET_FILES,
    size_of,
    usage_text,
    without_controls,
)
from hermes_core.types import Finding

__all__ = [
    "BLOCK_RULE",
    "BLOCK_TITLES",
    "CONTEXT_CHARS",
    "MAX_PLACEHOLDERS",
    "Scanner",
    "View",
    "blocked_placeholder",
    "joined_placeholder",
    "joined_threats",
    "judge_placeholder",
    "render_block",
    "sanitize",
    "visible",
]

Scanner = Callable[[str], Sequence[Finding]]

BLOCK_RULE: Final = "═" * 46
BLOCK_TITLES: Final = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
#: Characters of rendered neighbours scanned on each side of an entry (the override wording
#: the scanner knows spans well under this, filler words included).
CONTEXT_CHARS: Final = 160
_ROUNDS: Final = 3
#: The most placeholders one block shows (each is longer than a short entry it replaces).
MAX_PLACEHOLDERS: Final = 8


#: the finding of a threat judge that could not be asked: it says nothing about the entry
JUDGE_ERROR: Final = "judge_error"


def judge_placeholder(file_name: str) -> str:
    """What the prompt shows instead of an entry the threat judge could not check: no hint
    to delete it (nothing is known to be wrong with it)."""
    return (
        f"[WITHHELD: {file_name} entry not shown: the threat judge could not be reached to "
        "check it. It stays in the file and is shown again in a session started once the "
        "judge answers.]"
    )


def blocked_placeholder(file_name: str, pattern_ids: Iterable[str]) -> str:
    """What the prompt shows instead of an entry that matched a threat pattern (or, when
    the only reason is an unreachable judge, :func:`judge_placeholder`)."""
    found = [i for i in dict.fromkeys(pattern_ids) if i != JUDGE_ERROR]
    if not found:
        return judge_placeholder(file_name)
    ids = ", ".join(found)
    return (
        f"[BLOCKED: {file_name} entry matched threat pattern(s): {ids}. Removed from the "
        "system prompt; use memory remove to delete the original.]"
    )


def joined_placeholder(file_name: str, position: int, pattern_ids: Iterable[str]) -> str:
    """What the prompt shows instead of an entry that matches only joined with its neighbours
    (``position``: its number in the file, from 1, so that the parts of one payload each
    have a placeholder of their own for memory remove to name)."""
    found = sorted(set(pattern_ids) - {JUDGE_ERROR})
    if not found:
        return judge_placeholder(file_name)
    ids = ", ".join(found)
    return (
        f"[BLOCKED: {file_name} entry {position} matched threat pattern(s) together with the "
        f"entries next to it: {ids}. Removed from the system prompt; use memory remove to "
        "delete the original.]"
    )


def _ids(scan: Scanner, text: str) -> set[str]:
    return {f.pattern_id for f in scan(text)} if text else set()


def _side(get: Callable[[int], str], count: int, k: int, step: int) -> str:
    """The rendered neighbours of entry ``k`` on one side, :data:`CONTEXT_CHARS` at most."""
    parts: list[str] = []
    chars, i = 0, k + step
    while 0 <= i < count and chars < CONTEXT_CHARS:
        parts.append(get(i))
        chars += len(parts[-1]) + len(ENTRY_DELIMITER)
        i += step
    if step < 0:
        return ENTRY_DELIMITER.join(reversed(parts))[-CONTEXT_CHARS:]
    return ENTRY_DELIMITER.join(parts)[:CONTEXT_CHARS]


def _joined_ids(get: Callable[[int], str], count: int, k: int, scan: Scanner) -> set[str]:
    """Patterns entry ``k`` matches only joined with its neighbours: found in a window of the
    entry with its rendered neighbours, and found neither in the neighbours alone nor in the
    part of the entry the window holds. A long entry is looked at by its two ends (a payload
    in its middle is its own, and the entry-by-entry scan sees that)."""
    entry = get(k)
    left, right = _side(get, count, k, -1), _side(get, count, k, 1)
    if len(entry) <= 2 * CONTEXT_CHARS:
        windows = [([left, entry, right], [left, right])]
    else:
        head, tail = entry[:CONTEXT_CHARS], entry[-CONTEXT_CHARS:]
        windows = [([left, head], [left, head]), ([tail, right], [tail, right])]
    found: set[str] = set()
    for parts, alone in windows:
        ids = _ids(scan, ENTRY_DELIMITER.join(p for p in parts if p))
        if ids:
            for part in alone:
                ids -= _ids(scan, part)
            found |= ids
    return found


def _block_joined(
    file_name: str, shown: list[str], blocked: list[bool], scan: Scanner
) -> list[str]:
    """``shown`` (individually sanitised) with each entry that matches only together with its
    neighbours replaced by its placeholder. One scan of the whole when it is clean."""
    shown = list(shown)
    for _ in range(_ROUNDS):
        whole = ENTRY_DELIMITER.join(shown)
        if len(shown) < 2 or not _ids(scan, whole):
            break
        culprits = {
            k: ids
            for k in range(len(shown))
            if not blocked[k] and (ids := _joined_ids(shown.__getitem__, len(shown), k, scan))
        }
        if not culprits:
            break
        for k, ids in culprits.items():
            shown[k] = joined_placeholder(file_name, k + 1, ids)
            blocked[k] = True
    return shown


def _one(target: str, entry: str, scan: Scanner) -> str | None:
    """The placeholder of an entry a rescan flags on its own, or None. An entry holding
    control characters (planted by hand: writes refuse them) is also scanned as it reads
    without them, since ``\x1b[8mIgnore`` hides the word from the patterns."""
    findings = scan(entry)
    if not findings and (bare := without_controls(entry)) != entry:
        findings = scan(bare)
    if not findings:
        return None
    return blocked_placeholder(TARGET_FILES[target], [f.pattern_id for f in findings])


@dataclass(frozen=True)
class View:
    """What the prompt shows of a target: the first ``len(shown)`` entries of ``total``, each
    as shown (raw, or a placeholder), and the characters of the entries left out."""

    shown: list[str]
    total: int
    hidden_chars: int = 0

    @property
    def hidden(self) -> int:
        return self.total - len(self.shown)


def visible(target: str, entries: Sequence[str], limit: int, scan: Scanner) -> View:
    """The entries the prompt shows, oldest first, while they fit in ``limit`` characters as
    stored (what the usage counts), each rescanned alone and then with its neighbours. A
    placeholder stands in for the entry it replaces, and at most :data:`MAX_PLACEHOLDERS`
    are shown: the view ends before the next one. So what is shown is bounded by the limit,
    not by the file, and only what is shown is scanned."""
    shown: list[str] = []
    blocked: list[bool] = []
    used = placeholders = 0
    for entry in entries:
        cost = (len(ENTRY_DELIMITER) if shown else 0) + len(entry)
        if used + cost > limit:
            break
        placeholder = _one(target, entry, scan)
        if placeholder is not None:
            if placeholders >= MAX_PLACEHOLDERS:
                break
            placeholders += 1
        shown.append(entry if placeholder is None else placeholder)
        blocked.append(placeholder is not None)
        used += cost
    shown = _block_joined(TARGET_FILES[target], shown, blocked, scan)
    while sum(blocked) > MAX_PLACEHOLDERS:  # entries blocked joined count too
        shown.pop()
        blocked.pop()
    rest = entries[len(shown) :]
    return View(shown, len(entries), size_of(rest) if rest else 0)


def sanitize(target: str, entries: Sequence[str], scan: Scanner) -> list[str]:
    """Every entry as the prompt would show it (unbounded: for tests and small lists)."""
    flags = [_one(target, e, scan) for e in entries]
    shown = [e if p is None else p for e, p in zip(entries, flags, strict=True)]
    blocked = [p is not None for p in flags]
    return _block_joined(TARGET_FILES[target], shown, blocked, scan)


def joined_threats(
    target: str, before: Sequence[str], after: Sequence[str], scan: Scanner
) -> list[str]:
    """Patterns that the entries ``after`` a write would match joined with their neighbours
    and ``before`` did not: around each new entry, and around each pair of old entries that a
    removal makes neighbours. Only those neighbourhoods are scanned (a write costs a few
    scans, whatever the size of the file)."""
    old = set(before)
    pairs = set(pairwise(before))
    affected = {i for i, e in enumerate(after) if e not in old}
    for i in range(len(after) - 1):
        a, b = after[i], after[i + 1]
        if a in old and b in old and (a, b) not in pairs:
            affected.update((i, i + 1))
    cache: dict[int, str | None] = {}

    def get(i: int) -> str:
        if i not in cache:
            cache[i] = _one(target, after[i], scan)
        placeholder = cache[i]
        return after[i] if placeholder is None else placeholder

    found: set[str] = set()
    for k in sorted(affected):
        if get(k) == after[k]:  # an entry flagged on its own is already blocked
            found |= _joined_ids(get, len(after), k, scan)
    return sorted(found)


def left_out_note(file_name: str, view: View, limit: int) -> str:
    """The line under a block that could not show every entry."""
    many = "entry" if view.hidden == 1 else "entries"
    return (
        f"[{view.hidden:,} more {file_name} {many} ({view.hidden_chars:,} chars) not shown: the "
        f"file is over its {limit:,}-char limit. Ask the user to review it with `hermes-context "
        "memory show --raw` and remove entries (`hermes-context memory remove`), or remove "
        "stale entries with the memory tool.]"
    )


def render_block(target: str, entries: Sequence[str], limit: int, scan: Scanner) -> str:
    """One block (rule, title with usage, rule, entries, and a note when entries were left
    out); "" for an empty target. The usage counts the file as it is, so it matches what the
    store's limit sees."""
    if not entries:
        return ""
    header = f"{BLOCK_TITLES[target]} [{usage_text(size_of(entries), limit)}]"
    view = visible(target, entries, limit, scan)
    lines = [BLOCK_RULE, header, BLOCK_RULE]
    if view.shown:
        lines.append(ENTRY_DELIMITER.join(view.shown))
    if view.hidden:
        lines.append(left_out_note(TARGET_FILES[target], view, limit))
    return "\n".join(lines)
