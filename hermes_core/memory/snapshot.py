"""The memory blocks of the system prompt, with entries that fail a rescan blocked out.

Why: memory is injected into every future prompt, so an entry planted by hand (or written
before a pattern existed) is scanned again at load and replaced by a placeholder in the
prompt only; the file keeps the raw text so the user can see it and remove it. Error results
that list entries use the same sanitised view, so an error never re-injects a payload.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from hermes_core.memory.entries import ENTRY_DELIMITER, TARGET_FILES, size_of, usage_text
from hermes_core.types import Finding

__all__ = [
    "BLOCK_RULE",
    "BLOCK_TITLES",
    "Scanner",
    "blocked_placeholder",
    "render_block",
    "sanitize",
]

Scanner = Callable[[str], Sequence[Finding]]

BLOCK_RULE: Final = "═" * 46
BLOCK_TITLES: Final = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}


def blocked_placeholder(file_name: str, pattern_ids: Sequence[str]) -> str:
    """What the prompt shows instead of an entry that matched a threat pattern."""
    ids = ", ".join(dict.fromkeys(pattern_ids))
    return (
        f"[BLOCKED: {file_name} entry matched threat pattern(s): {ids}. Removed from the "
        "system prompt; use memory remove to delete the original.]"
    )


def sanitize(target: str, entries: Sequence[str], scan: Scanner) -> list[str]:
    """``entries`` with each one that a rescan flags replaced by its placeholder."""
    out = []
    for entry in entries:
        findings = scan(entry)
        if findings:
            out.append(blocked_placeholder(TARGET_FILES[target], [f.pattern_id for f in findings]))
        else:
            out.append(entry)
    return out


def render_block(target: str, entries: Sequence[str], limit: int, scan: Scanner) -> str:
    """One block (rule, title with usage, rule, entries); "" for an empty target. The usage
    counts the file as it is, so it matches what the store's limit sees."""
    if not entries:
        return ""
    header = f"{BLOCK_TITLES[target]} [{usage_text(size_of(entries), limit)}]"
    body = ENTRY_DELIMITER.join(sanitize(target, entries, scan))
    return "\n".join([BLOCK_RULE, header, BLOCK_RULE, body])
