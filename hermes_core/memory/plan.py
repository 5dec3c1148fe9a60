"""What a write would do to a file's entries, computed without touching the disk.

Why a separate step: the store applies a plan under its lock, and write approval runs the very
same plan without writing to decide what to stage, so a staged write is judged exactly as an
immediate one would be (matching, drift, duplicates, limits). Pure: text and entries in, an
:class:`Outcome` out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_core.memory.entries import (
    ENTRY_DELIMITER,
    TARGET_FILES,
    render_entries,
    round_trips,
    size_of,
    usage_text,
)
from hermes_core.memory.matching import preview, select_entry

__all__ = ["Outcome", "Plan", "failure", "plan_writes"]

Result = dict[str, Any]


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
    """The fixed parts of a write: the target, its limit, how entries are shown to the model
    (sanitised), and whether ``old_text`` must equal an entry (approvals) or may be a part."""

    target: str
    limit: int
    shown: Callable[[Sequence[str]], list[str]]
    exact: bool = False


def _usage(plan: Plan, entries: Sequence[str]) -> str:
    return usage_text(size_of(entries), plan.limit)


def _pick(plan: Plan, entries: list[str], old_text: str) -> int | Result:
    """The index ``old_text`` selects. A blocked entry can also be named by its placeholder,
    since that is all the model was shown of it. Entries are rescanned only when the raw
    text selects nothing (a rescan of every entry costs more than the write)."""
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
    shown = plan.shown(entries)
    if not match.hits and shown != entries:
        match = select_entry(shown, old_text)
        if match.index is not None:
            return match.index
    if match.hits:
        previews = [preview(shown[i]) for i in match.hits]
        return failure("multiple", match.error or "", matches=previews)
    return failure("no_match", match.error or "", entries=shown)


def _drift(text: str | None, file_name: str) -> Result | None:
    if text is None or round_trips(text):
        return None
    return failure(
        "drift",
        f"{file_name} was edited outside hermes-context and no longer matches its format "
        "(entries separated by a line holding only '§'), so it is not rewritten. Fix the file "
        "by hand (see `hermes-context memory show --raw`), or use add, which keeps the foreign "
        "text.",
    )


def _over_limit(plan: Plan, current: Sequence[str], new_size: int) -> Result | None:
    """Refuse growth past the limit; a change that does not grow the file always passes (a
    limit lowered below the file's size must not block making it smaller)."""
    if new_size <= plan.limit or new_size <= size_of(current):
        return None
    now = _usage(plan, current)
    return failure(
        "over_limit",
        f"{TARGET_FILES[plan.target]} would hold {new_size:,}/{plan.limit:,} chars (now {now}). "
        "Make room in this turn: merge or shorten entries with replace, or drop stale ones with "
        "remove, then try again. The current entries are listed.",
        usage=now,
        entries=plan.shown(current),
    )


def _add_to_drifted(plan: Plan, text: str, entries: list[str], content: str) -> Outcome:
    """An add to a hand-edited file appends after the foreign text, keeping it as it is."""
    body = text.removeprefix("\ufeff").rstrip("\n")
    new_text = body + ENTRY_DELIMITER + content if body else content
    if refusal := _over_limit(plan, entries, len(new_text)):
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
        picked = _pick(plan, new, op["old_text"])
        if isinstance(picked, dict):
            if batch:
                picked["error"] = f"operation {n}: {picked['error']} Nothing was changed."
            return Outcome(picked)
        old = new[picked]
        selected.append(old)
        if op["action"] == "replace":
            new = list(dict.fromkeys([*new[:picked], content, *new[picked + 1 :]]))
            applied.append(
                {"action": "replace", "replaced": plan.shown([old])[0], "content": content}
            )
        else:
            del new[picked]
            applied.append({"action": "remove", "removed": plan.shown([old])[0]})
    if refusal := _over_limit(plan, entries, size_of(new)):
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
