"""Which memory entries a recalled text holds: what counts as a use of an entry.

Why: an entry's ``last_used`` should follow what reaches the model again, not only writes
that name it. A recall (a provider's prefetch block, a ``session_search`` or
``session_recall`` answer) that holds an entry's words, in order, is a use of that entry.
Words are compared after normalisation (NFKC, case folded, punctuation and markup dropped),
so a recalled copy inside JSON, quotes or a list still counts; an entry of fewer than
:data:`MIN_WORDS` words never counts (short text would match by chance). Pure functions.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = ["MIN_WORDS", "recalled", "texts_of_answer", "words"]

#: the fewest words an entry must have to be recognised in a recalled text
MIN_WORDS: Final = 4
_WORD: Final = re.compile(r"\w+")
#: fields of a tool's answer the model sent or that are the tool's own words
_NOT_RECALLED: Final = frozenset({"query", "note", "error", "success"})


def words(text: str) -> str:
    """``text`` as its words, NFKC-normalised and case folded, joined by single spaces."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def recalled(entries: Iterable[str], texts: Sequence[str]) -> list[str]:
    """The entries (of at least :data:`MIN_WORDS` words) whose words appear, in order and
    whole, in one of ``texts``."""
    haystacks = [f" {words(t)} " for t in texts if t]
    found: list[str] = []
    for entry in entries:
        needle = words(entry)
        if needle.count(" ") + 1 < MIN_WORDS:
            continue
        if any(f" {needle} " in hay for hay in haystacks):
            found.append(entry)
    return found


def texts_of_answer(answer: str) -> list[str]:
    """The recalled strings of a tool's JSON answer (not the query the model sent, nor the
    tool's note or error); the answer itself when it is not JSON."""
    try:
        parsed = json.loads(answer)
    except ValueError:
        return [answer]
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in _NOT_RECALLED:
                    walk(item)

    walk(parsed)
    return out
