"""Text in and out of Honcho: trivial-prompt detection, chunking, excerpts, recall layout.

Kept free of the SDK so the rules are easy to test and the same on every path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"\w{3,}", re.UNICODE)
_TRIVIAL = frozenset(
    {
        "ok", "okay", "k", "kk", "thanks", "thank you", "thx", "ty", "continue", "go on",
        "go ahead", "yes", "no", "yep", "nope", "sure", "cool", "great", "nice", "got it",
        "done", "next", "proceed", "lgtm", "ok thanks", "thanks a lot", "sounds good", "y", "n",
    }
)  # fmt: skip
#: characters per token when turning ``context_tokens`` into a character budget
CHARS_PER_TOKEN = 4
EXCERPT_CHARS = 600


def is_trivial(query: str) -> bool:
    """A prompt that carries nothing to recall against ("ok", "thanks!", "continue")."""
    text = re.sub(r"[^\w\s]", " ", query.lower(), flags=re.UNICODE)
    text = " ".join(text.split())
    return not text or text in _TRIVIAL or len(text) < 3


def query_terms(query: str) -> list[str]:
    """Distinct words of three or more letters, longest first (rare tokens tend to be long)."""
    seen = dict.fromkeys(word.lower() for word in _WORD.findall(query))
    return sorted(seen, key=len, reverse=True)


def chunk(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, preferring line breaks."""
    if len(text) <= size:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = text.rfind("\n", start + size // 2, end)
            end = cut + 1 if cut > start else end
        pieces.append(text[start:end])
        start = end
    return [piece for piece in pieces if piece.strip()] or [text[:size]]


def excerpt(text: str, terms: Sequence[str], limit: int = EXCERPT_CHARS) -> str:
    """The part of ``text`` around the query's most telling word, at most ``limit`` chars.

    A 25,000-character message is useless in a recall block; the window is centred on the
    longest query word found, so a unique token deep in a long message still shows.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    lower = flat.lower()
    for term in terms:
        at = lower.find(term)
        if at >= 0:
            start = max(0, min(at - limit // 2, len(flat) - limit))
            window = flat[start : start + limit]
            return ("…" if start else "") + window + ("…" if start + limit < len(flat) else "")
    return flat[:limit] + "…"


def matches(text: str, terms: Iterable[str]) -> bool:
    lower = text.lower()
    return any(term in lower for term in terms)


@dataclass(frozen=True)
class Recalled:
    """What one recall produced, before layout."""

    card: tuple[str, ...] = ()
    representation: str = ""
    messages: tuple[tuple[str, str], ...] = ()  # (speaker, excerpt)


def render(recalled: Recalled, budget_chars: int) -> str | None:
    """Plain lines for the core to wrap: the user card, what Honcho concluded, past lines.

    Cut to ``budget_chars`` at a line boundary; ``None`` when there is nothing to say.
    """
    lines: list[str] = []
    if recalled.card:
        lines.append("User profile:")
        lines.extend(f"- {item}" for item in recalled.card if item.strip())
    representation = recalled.representation.strip()
    if representation:
        lines.append("What Honcho knows about the user:")
        lines.extend(line for line in representation.splitlines() if line.strip())
    if recalled.messages:
        lines.append("Related earlier messages:")
        lines.extend(f"- [{speaker}] {text}" for speaker, text in recalled.messages)
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget_chars:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out) or None
