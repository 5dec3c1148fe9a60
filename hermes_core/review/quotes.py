"""Checking that a user-profile fact quotes the user's own words.

Why: reviews elsewhere saved the assistant's own suggestions, or text a tool returned, as "the
user prefers ..." and every later session then obeyed a preference nobody had stated. So a
review that writes to the user profile must quote the user, and the quote is checked against
what the user wrote in the reviewed conversation: whitespace, case, curly quotes and dashes
do not matter, but the words must be there, whole words, in a user message (recalled memory
and attached references removed: those are not the user's words either). The fact must share
a word with its quote, the least that "supported by it" can mean without a model. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core.memory.recall import MEMORY_CONTEXT_KEY
from hermes_core.threats.unicode import nfkc, strip_hidden
from hermes_core.transcript.messages import is_real_user_message, message_text

__all__ = [
    "MIN_QUOTE_CHARS",
    "MIN_QUOTE_UNITS",
    "QuoteBook",
    "normalise",
    "own_words",
]

#: A quote needs this many words (a CJK character counts as one) and characters.
MIN_QUOTE_UNITS: Final = 3
MIN_QUOTE_CHARS: Final = 6
#: Where @-references append their attachment to a user message (spec 40 §5).
ATTACHMENT_MARKER: Final = "--- Attached Context ---"

_QUOTES: Final = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u00b4": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2039": '"',
        "\u203a": '"',
        "\u300c": '"',
        "\u300d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)
_EDGES: Final = " \t\n'\".,;:!?\u2026()[]-"
_FENCE: Final = re.compile(r"<memory-context>.*?(?:</memory-context>|\Z)", re.DOTALL)
_CJK: Final = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_UNIT: Final = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_ONE_CJK: Final = re.compile(rf"[{_CJK}]")
#: Words that say nothing about what a fact is about.
_STOP_WORDS: Final = (
    "the and for are was were you your yours user user's users they them their this that "
    "these those with from into have has had not but all any can will would should could "
    "please just also very really always never like want wants need needs use uses using "
    "prefer prefers preferred preference about what when where which who how our ours"
)
_STOP: Final = frozenset(_STOP_WORDS.split())


def normalise(text: str) -> str:
    """``text`` for comparison: NFKC, hidden characters gone, one kind of quote and dash,
    case folded, whitespace runs as one space."""
    text = nfkc(strip_hidden(text)).translate(_QUOTES).casefold()
    return " ".join(text.split())


def own_words(message: Mapping[str, Any]) -> str:
    """What the user typed in ``message``: its text without recalled memory or attachments."""
    text = message_text(message)
    block = message.get(MEMORY_CONTEXT_KEY)
    if isinstance(block, str) and block:
        text = text.replace(block, "")
    text = _FENCE.sub("", text)
    cut = text.find(ATTACHMENT_MARKER)
    return text[:cut] if cut >= 0 else text


def _units(text: str) -> list[str]:
    return _UNIT.findall(text)


def _stem(word: str) -> str:
    word = word[:-1] if len(word) > 3 and word.endswith("s") else word
    return word[:5]


def _topics(text: str) -> set[str]:
    """The words of ``text`` that carry meaning (stems; every CJK character counts)."""
    topics: set[str] = set()
    for word in _units(normalise(text)):
        if len(word) < 3 and not _ONE_CJK.fullmatch(word):
            continue
        stem = _stem(word)
        if word not in _STOP and stem not in _STOP:
            topics.add(stem)
    return topics


def _whole(quote: str) -> re.Pattern[str]:
    """``quote`` as a pattern that matches only whole words (CJK has no word edges)."""
    head = "" if _ONE_CJK.match(quote[:1]) else r"(?<!\w)"
    tail = "" if _ONE_CJK.match(quote[-1:]) else r"(?!\w)"
    return re.compile(head + re.escape(quote) + tail)


class QuoteBook:
    """The user's words and everyone else's in one reviewed conversation, normalised once."""

    def __init__(self, snapshot: Sequence[Mapping[str, Any]]) -> None:
        messages = [m for m in snapshot if isinstance(m, Mapping)]
        self.user = [normalise(own_words(m)) for m in messages if is_real_user_message(m)]
        self.others = [
            normalise(message_text(m))
            for m in messages
            if not is_real_user_message(m) and m.get("role") != "system"
        ]

    def problem(self, quote: object, fact: object) -> str | None:
        """Why ``quote`` does not back ``fact`` as the user's own words, or None when it does."""
        if not isinstance(fact, str) or not fact.strip():
            return "the fact to save is empty; write it as content."
        if not isinstance(quote, str) or not quote.strip():
            return (
                "a user-profile fact needs 'quote': the user's own words, copied exactly from "
                "one of their messages, that state it. Without one it is not saved."
            )
        wanted = normalise(quote).strip(_EDGES)
        if len(_units(wanted)) < MIN_QUOTE_UNITS or len(wanted) < MIN_QUOTE_CHARS:
            return (
                f"the quote is too short to show what the user meant; quote at least "
                f"{MIN_QUOTE_UNITS} words of their message."
            )
        found = _whole(wanted)
        if not any(found.search(text) for text in self.user):
            if any(found.search(text) for text in self.others):
                return (
                    "the quote is not the user's words: it comes from the assistant's or a "
                    "tool's text. Only what the user said can become a user-profile fact."
                )
            return (
                "the quote is not in any of the user's messages; copy one passage of their "
                "words exactly (no paraphrase, no ellipsis)."
            )
        if not _topics(fact) & _topics(wanted):
            return "the fact shares no word with its quote; state only what the quoted words say."
        return None
