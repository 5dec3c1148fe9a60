"""The words a change adds to a file, each with the few words around it.

Why: a skill read back through ``skill_manage view`` is in the session as a tool result, so
judging an edit's whole new text would find the file's own words "copied from a tool"; and a
payload patched in five words at a time next to the previous five is only visible with its
neighbours. So a change is judged on what it adds, with K-1 words either side (every word run
judged then holds an added word, and runs that continue across the seam are seen).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from hermes_core.provenance.taint import K, units

__all__ = ["added_texts", "file_changes"]

_TOKEN: Final = re.compile(r"\S+")
#: the longest middle (in tokens) compared word by word; a longer one is judged whole
MAX_DIFF: Final = 5_000


def added_texts(old: str, new: str) -> list[tuple[str, str]]:
    """The pieces of ``new`` that ``old`` does not have: each as (the added words, the same
    framed by K-1 words of ``new`` on either side)."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if not middle_b:
        return []
    if len(middle_a) + len(middle_b) > MAX_DIFF or not middle_a:
        spans = [(head, len(b) - tail)]
    else:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        spans = [
            (head + j1, head + j2)
            for op, _i1, _i2, j1, j2 in matcher.get_opcodes()
            if op in ("insert", "replace")
        ]
    pieces = []
    for start, end in spans:
        left = units(" ".join(b[max(start - K, 0) : start]))[-(K - 1) :] if start else []
        right = units(" ".join(b[end : end + K]))[: K - 1]
        added = " ".join(b[start:end])
        pieces.append((added, " ".join([*left, added, *right])))
    return pieces


def file_changes(writes: Iterable[tuple[Path, str]]) -> list[tuple[str, str]]:
    """:func:`added_texts` of each (file, new text): a file that cannot be read counts as
    empty, so all of its new text is judged."""
    pieces: list[tuple[str, str]] = []
    for path, new in writes:
        try:
            old = path.read_text(encoding="utf-8") if path.is_file() else ""
        except (OSError, UnicodeError):
            old = ""
        pieces.extend(added_texts(old, new))
    return pieces
