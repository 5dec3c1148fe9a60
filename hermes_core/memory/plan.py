"""What a write would do to a file's entries, computed without touching the disk.

Why a separate step: the store applies a plan under its lock, and write approval runs the very
same plan without writing to decide what to stage, so a staged write is judged exactly as an
immediate one would be (matching, drift, duplicates, joined threats, limits). Pure apart from
the scanner: text and entries in, an :class:`Outcome` out.

Every answer is bounded whatever is on disk: lists of entries are what the prompt shows of
the file (at most :data:`MAX_LISTED` of them, with the total), and a replaced or removed entry
is echoed at most up to the target's limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from hermes_core.memory.entries import (
    ENTRY_DELIMITER,
    TARGET_FILES,
    render_entries,
    round_trips,
    size_of,
    usage_text,
)
from hermes_core.memory.matching import preview, select_entry
from hermes_core.memory.snapshot import Scanner, View, joined_threats, sanitize, visible

__all__ = ["MAX_LISTED", "Outcome", "Plan", "failure", "plan_writes"]

Result = dict[str, Any]
#: The most entries (or match previews) an answer lists; the total is always given.
MAX_LISTED: Final = 100


def failure(reason: str, error: str, **extra: Any) -> Result:
    """A refusal: nothing was (or would be) changed."""
    return {"success": False, "reason": reason, "error": error, **extra}


@dataclass
class Outcome:
    """The answer, the file text to write (None: nothing to write) and, per operation, the
    raw entry a replace or remove selected (None for an add)."""

    result: Result
    new_text: str | None = None
    selected: list[str | None] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """The fixed parts of a write: the target, its limit, the scanner (entries are shown to
    the model sanitised, and joined), and whether ``old_text`` must equal an entry (approvals)
    or may be a part."""

    target: str
    limit: int
    scan: Scanner
    exact: bool = False

    def view(self, entries: Sequence[str]) -> View:
        """What the prompt shows of ``entries`` (bounded by the limit)."""
        return visible(self.target, entries, self.limit, self.scan)


def _usage(plan: Plan, entries: Sequence[str]) -> str:
    return usage_text(size_of(entries), plan.limit)


class _Seen:
    """What the model was shown of the file's entries before this write (the bounded,
    sanitised view), computed at most once per plan and only when an answer needs it."""

    def __init__(self, plan: Plan, entries: Sequence[str]) -> None:
        self.plan = plan
        self.entries = entries
        self._view: View | None = None

    def view(self) -> View:
        if self._view is None:
            self._view = self.plan.view(self.entries)
        return self._view

    def of(self, raw: str) -> str:
        """An entry as the model was shown it (its placeholder when blocked), cut to the
        target's limit so that no answer carries a huge entry whole."""
        shown = self.view().shown
        index = self.entries.index(raw) if raw in self.entries else len(shown)
        text = (
            shown[index]
            if index < len(shown)
            else sanitize(self.plan.target, [raw], self.plan.scan)[0]
        )
        cap = max(self.plan.limit, 200)
        return text if len(text) <= cap else text[: cap - 1] + f"… ({len(text):,} chars in all)"

    def listing(self) -> dict[str, Any]:
        """The entries an error lists: the shown ones, at most :data:`MAX_LISTED`, and the
        total."""
        view = self.view()
        return {"entries": view.shown[:MAX_LISTED], "entries_total": view.total}

    def listing_note(self) -> str:
        view = self.view()
        listed = min(len(view.shown), MAX_LISTED)
        if listed == view.total:
            return ""
        return (
            f" Only {listed:,} of {view.total:,} entries are listed; review them all with "
            "`hermes-context memory show --raw`."
        )


def _pick(plan: Plan, seen: _Seen, entries: list[str], old_text: str) -> int | Result:
    """The index ``old_text`` selects in ``entries``. A blocked entry can also be named by
    its placeholder, since that is all the model was shown of it. Entries are rescanned only
    when the raw text selects nothing (a rescan costs more than the write)."""
    if plan.exact:
        if old_text in entries:
            return entries.index(old_text)
        return failure(
            "changed",
            "the entry this write would change has changed since it was staged; reject it "
            "and stage it again.",
        )
    match = select_entry(entries, old_text)
    if match.index is not None:
        return match.index
    if not match.hits:
        shown = seen.view().shown
        by_placeholder = select_entry(shown, old_text)
        raw = seen.entries[by_placeholder.index] if by_placeholder.index is not None else None
        if raw is not None and raw in entries:
            return entries.index(raw)
        if by_placeholder.hits:
            hits = by_placeholder.hits
            previews = [preview(shown[i]) for i in hits[:MAX_LISTED]]
            error = by_placeholder.error or ""
            return failure("multiple", error, matches=previews, matches_total=len(hits))
    if match.hits:
        hits = match.hits[:MAX_LISTED]
        previews = [preview(seen.of(entries[i])) for i in hits]
        error = match.error or ""
        if len(hits) < len(match.hits):
            error += f" The first {len(hits)} are listed."
        return failure("multiple", error, matches=previews, matches_total=len(match.hits))
    return failure("no_match", (match.error or "") + seen.listing_note(), **seen.listing())


def _drift(text: str | None, file_name: str) -> Result | None:
    if text is None or round_trips(text):
        return None
    return failure(
        "drift",
        f"{file_name} was edited outside hermes-context and no longer matches its format "
        "(entries separated by a line holding only '§'), so it is not rewritten. Fix it by "
        "hand (the file, or with memory.backend: postgres its row; `hermes-context memory "
        "show --raw` prints the text), or use add, which keeps the foreign text.",
    )


def _over_limit(plan: Plan, seen: _Seen, new_size: int) -> Result | None:
    """Refuse growth past the limit; a change that does not grow the file always passes (a
    limit lowered below the file's size must not block making it smaller)."""
    current = seen.entries
    if new_size <= plan.limit or new_size <= size_of(current):
        return None
    now = _usage(plan, current)
    return failure(
        "over_limit",
        f"{TARGET_FILES[plan.target]} would hold {new_size:,}/{plan.limit:,} chars (now {now}). "
        "Make room in this turn: merge or shorten entries with replace, or drop stale ones with "
        "remove, then try again. The current entries are listed." + seen.listing_note(),
        usage=now,
        **seen.listing(),
    )


def _joined(plan: Plan, before: Sequence[str], after: Sequence[str]) -> Result | None:
    """Refuse a write that completes a payload across neighbouring entries."""
    ids = joined_threats(plan.target, before, after, plan.scan)
    if not ids:
        return None
    return failure(
        "threat",
        f"Blocked: with this write, neighbouring {TARGET_FILES[plan.target]} entries would read "
        f"together as text that matches threat pattern '{ids[0]}'. The system prompt shows "
        "entries joined, so a payload split across entries is still a payload. Memory is "
        "injected into the system prompt and must not carry injection or exfiltration "
        "payloads. Nothing was changed.",
        patterns=ids,
        joined=True,
    )


def _add_to_drifted(plan: Plan, text: str, entries: list[str], content: str) -> Outcome:
    """An add to a hand-edited file appends after the foreign text, keeping it as it is."""
    body = text.removeprefix("\ufeff").rstrip("\n")
    new_text = body + ENTRY_DELIMITER + content if body else content
    if refusal := _joined(plan, entries, [*entries, content]):
        return Outcome(refusal)
    if refusal := _over_limit(plan, _Seen(plan, entries), len(new_text)):
        return Outcome(refusal)
    result = _success(plan, [*entries, content], "Entry added.")
    return Outcome(result, new_text, [None])


def _success(plan: Plan, entries: Sequence[str], message: str, **extra: Any) -> Result:
    usage = _usage(plan, entries)
    return {"success": True, "done": True, "message": message, "usage": usage, **extra}


def plan_writes(
    plan: Plan,
    text: str | None,
    entries: list[str],
    ops: Sequence[Mapping[str, Any]],
    *,
    batch: bool,
) -> Outcome:
    """Apply ``ops`` (already checked and scanned) to ``entries`` in order, all or nothing;
    only the final size is checked. ``batch`` shapes the answer as a batch's."""
    single = None if batch else ops[0]
    drifted = _drift(text, TARGET_FILES[plan.target])
    if drifted and single is not None and single["action"] == "add":
        if single["content"] in entries:
            return Outcome(_success(plan, entries, "Entry already exists; nothing changed."))
        assert text is not None
        return _add_to_drifted(plan, text, entries, single["content"])
    if drifted:
        return Outcome(drifted)
    seen = _Seen(plan, entries)
    new = list(entries)
    applied: list[dict[str, str]] = []
    selected: list[str | None] = []
    for n, op in enumerate(ops, 1):
        content = str(op.get("content") or "")
        if op["action"] == "add":
            if content not in new:
                new.append(content)
            applied.append({"action": "add", "content": content})
            selected.append(None)
            continue
        picked = _pick(plan, seen, new, op["old_text"])
        if isinstance(picked, dict):
            if batch:
                picked["error"] = f"operation {n}: {picked['error']} Nothing was changed."
            return Outcome(picked)
        old = new[picked]
        selected.append(old)
        if op["action"] == "replace":
            new = list(dict.fromkeys([*new[:picked], content, *new[picked + 1 :]]))
            applied.append({"action": "replace", "replaced": seen.of(old), "content": content})
        else:
            del new[picked]
            applied.append({"action": "remove", "removed": seen.of(old)})
    if new != entries and (refusal := _joined(plan, entries, new)):
        return Outcome(refusal)
    if refusal := _over_limit(plan, seen, size_of(new)):
        return Outcome(refusal)
    new_text = render_entries(new) if new != entries else None
    if batch:
        result = _success(plan, new, f"{len(applied)} operations applied.", applied=applied)
    elif single is not None and single["action"] == "add":
        message = (
            "Entry added." if new_text is not None else "Entry already exists; nothing changed."
        )
        result = _success(plan, new, message)
    elif single is not None and single["action"] == "replace":
        result = _success(plan, new, "Entry replaced.", replaced=applied[0]["replaced"])
    else:
        result = _success(plan, new, "Entry removed.", removed=applied[0]["removed"])
    return Outcome(result, new_text, selected)
