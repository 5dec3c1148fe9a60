"""The search query sanitiser and snippet marking, shared by every session-store backend.

Whatever a user or a model types (``pytest -k "foo"``, ``src/app.py:12``, ``NOT``, an
unbalanced quote, emoji, 10 KB of text) becomes a short tuple of plain *terms*; a backend
then quotes each term for its own engine (FTS5 phrases, ``tsquery`` lexemes, ``LIKE``
patterns), so no text can reach a query parser as syntax. Terms are matched with AND.

Pure functions only: no SQL, no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = [
    "CJK_RANGES",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "contains_any",
    "has_cjk",
    "like_pattern",
    "mark_matches",
    "parse_query",
]

#: longer queries are cut here before anything else happens
MAX_QUERY_CHARS = 2048
#: terms after the first ``MAX_TERMS`` are dropped (a pasted paragraph is not a query)
MAX_TERMS = 16
#: bare words that would be operators in FTS5 or tsquery; dropped when other terms remain
OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})

# split points outside quoted phrases: whitespace and brackets (never part of a word)
_SEPARATORS = re.compile(r"[\s()\[\]{}<>,;]+")
_PHRASE = re.compile(r'"([^"]*)"')
#: Han (with extensions and compatibility forms), kana, Hangul: scripts written without
#: spaces, which word tokenizers index as whole runs, so they are searched by substring.
CJK_RANGES = (
    "\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002ffff"
)
_CJK = re.compile(f"[{CJK_RANGES}]")


def parse_query(text: str) -> tuple[str, ...]:
    """The search terms in ``text``: never raises, may be empty (an empty query finds nothing).

    * Cut to :data:`MAX_QUERY_CHARS`; control, format and surrogate characters become spaces.
    * A balanced ``"quoted phrase"`` is one term (inner whitespace collapsed); an unbalanced
      quote is a space.
    * Elsewhere terms are split at whitespace, brackets, commas and semicolons, and lose the
      punctuation at either end (``-k`` -> ``k``, ``content:`` -> ``content``, ``foo*`` ->
      ``foo``); punctuation inside a term stays (``src/app.py:12``).
    * Terms without a letter or digit are dropped (``--``, ``...``, emoji); so are the bare
      operator words ``AND OR NOT NEAR`` unless nothing else is left; duplicates (ignoring
      case) are dropped; at most :data:`MAX_TERMS` remain.
    """
    if not isinstance(text, str):
        return ()
    clean = "".join(_visible(ch) for ch in text[:MAX_QUERY_CHARS])
    terms: list[tuple[str, bool]] = []  # (term, is a bare operator word)
    position = 0
    for found in _PHRASE.finditer(clean):
        terms += _words(clean[position : found.start()])
        phrase = " ".join(found.group(1).split())
        if any(ch.isalnum() for ch in phrase):
            terms.append((phrase, False))
        position = found.end()
    terms += _words(clean[position:])
    return _dedupe(terms)


def _visible(ch: str) -> str:
    if ch == '"':
        return ch
    category = unicodedata.category(ch)
    return " " if category in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch


def _words(text: str) -> list[tuple[str, bool]]:
    words = []
    for piece in _SEPARATORS.split(text.replace('"', " ")):
        word = _strip_punctuation(piece)
        if word:
            words.append((word, word in OPERATORS))
    return words


def _strip_punctuation(word: str) -> str:
    start, end = 0, len(word)
    while start < end and not word[start].isalnum():
        start += 1
    while end > start and not word[end - 1].isalnum():
        end -= 1
    return word[start:end]


def _dedupe(terms: list[tuple[str, bool]]) -> tuple[str, ...]:
    words = [term for term, operator in terms if not operator] or [term for term, _ in terms]
    seen: set[str] = set()
    kept: list[str] = []
    for term in words:
        key = term.casefold()
        if key not in seen:
            seen.add(key)
            kept.append(term)
    return tuple(kept[:MAX_TERMS])


def has_cjk(term: str) -> bool:
    """True when ``term`` holds Chinese, Japanese or Korean characters."""
    return _CJK.search(term) is not None


def like_pattern(term: str, escape: str = "\\") -> str:
    """A ``LIKE '%term%'`` pattern for ``term`` with ``%``, ``_`` and ``escape`` escaped."""
    escaped = term.replace(escape, escape * 2).replace("%", escape + "%").replace("_", escape + "_")
    return f"%{escaped}%"


def _matcher(terms: Sequence[str]) -> re.Pattern[str] | None:
    patterns = [r"\s+".join(re.escape(w) for w in t.split()) for t in terms if t.strip()]
    if not patterns:
        return None
    return re.compile("|".join(sorted(patterns, key=len, reverse=True)), re.IGNORECASE)


def contains_any(text: str, terms: Sequence[str]) -> bool:
    """True when any term occurs in ``text`` (as :func:`mark_matches` would mark it)."""
    matcher = _matcher(terms)
    return matcher is not None and matcher.search(text) is not None


def mark_matches(text: str, terms: Sequence[str], *, width: int = 160) -> str:
    """An excerpt of ``text`` around the first match of any term, each match ``>>marked<<``.

    Case-insensitive; a phrase term matches across any run of whitespace. The excerpt is
    about ``width`` characters, with ``…`` where it was cut; the start of the text when no
    term occurs.
    """
    flat = " ".join(text.split())
    matcher = _matcher(terms)
    first = matcher.search(flat) if matcher is not None else None
    if matcher is None or first is None:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, first.start() - width // 3)
    if start:  # begin at a word boundary when one is near
        space = flat.find(" ", start, first.start())
        start = space + 1 if space != -1 else start
    window = flat[start : start + width]
    marked = matcher.sub(lambda m: f">>{m.group(0)}<<", window)
    return ("…" if start else "") + marked + ("…" if start + width < len(flat) else "")
