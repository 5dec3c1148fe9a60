"""Checking that a user-profile fact quotes the user's own words.

Why: reviews elsewhere saved the assistant's own suggestions, or text a tool returned, as "the
user prefers ..." and every later session then obeyed a preference nobody had stated. So a
review that writes to the user profile must quote the user, and the quote is checked against
what the user wrote in the reviewed conversation: whitespace, case, curly quotes and dashes
do not matter, but the words must be there, whole words, in a user message. What the session
appends to a user message (the @-reference attachment, its warnings, recalled memory) is not
the user's words either: a warning can carry a web server's redirect target. And the quote must
carry the fact: most of the fact's meaningful words must be in it, so that "ok sounds good" to
the assistant's proposal cannot back the proposal as the user's preference. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_core.provenance.marks import marks_of
from hermes_core.review.polarity import turned
from hermes_core.threats.unicode import nfkc, strip_hidden
from hermes_core.transcript.appended import (
    APPENDED_HEADERS,
    ATTACHED_HEADER,
    MEMORY_FENCE,
    WARNINGS_HEADER,
    own_words,
    split_user,
)
from hermes_core.transcript.messages import message_text

__all__ = [
    "APPENDED_HEADERS",
    "ATTACHED_HEADER",
    "MEMORY_FENCE",
    "MIN_QUOTE_CHARS",
    "MIN_QUOTE_UNITS",
    "WARNINGS_HEADER",
    "QuoteBook",
    "fact_topics",
    "normalise",
    "own_words",
    "topic_stems",
]

#: A quote needs this many words (a CJK character counts as one) and characters.
MIN_QUOTE_UNITS: Final = 3
MIN_QUOTE_CHARS: Final = 6
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
_CJK: Final = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_UNIT: Final = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_ONE_CJK: Final = re.compile(rf"[{_CJK}]")
#: Words that say nothing about what a fact is about: grammar, words that describe the user
#: rather than the preference (user, says, wants, always, ...), and bare agreement (ok,
#: sounds good, ...), which backs nothing on its own.
_STOP_WORDS: Final = (
    "the and for are was were you your yours user user's users they them their this that "
    "these those with from into have has had not but all any can will would should could "
    "please just also very really always never like likes liked want wants wanted need needs "
    "use uses using prefer prefers preferred preference about what when where which who how "
    "our ours does did doing done say says said tell tells told asks asked think thinks "
    "thought feel feels felt okay yes yeah yep sure fine good great sound sounds agree agreed "
    "agrees perfect nice cool alright thanks thank exactly correct right"
)
#: The same for CJK facts, taken out as whole words: "user", "wants", "likes".
_CJK_STOP: Final = ("使用者", "用户", "用戶", "ユーザー", "사용자", "希望", "喜欢", "喜歡", "想要")
#: Endings taken off a word before it is compared (loosely: "uploading" is "upload").
_ENDINGS: Final = ("ing", "ed", "es", "s", "e")
#: Compared words keep this many characters, so "indent" and "indentation" agree.
_STEM_CHARS: Final = 5


def normalise(text: str) -> str:
    """``text`` for comparison: NFKC, hidden characters gone, one kind of quote and dash,
    case folded, whitespace runs as one space."""
    text = nfkc(strip_hidden(text)).translate(_QUOTES).casefold()
    return " ".join(text.split())


def _units(text: str) -> list[str]:
    return _UNIT.findall(text)


def _base(word: str) -> str:
    """``word`` without its endings, while three characters are left ("codes" is "cod")."""
    while True:
        ending = next((e for e in _ENDINGS if word.endswith(e) and len(word) - len(e) >= 3), "")
        if not ending:
            return word
        word = word[: -len(ending)]


_STOP: Final = frozenset(_STOP_WORDS.split())
_STOP_BASES: Final = frozenset(_base(word) for word in _STOP)


def _topics(text: str) -> dict[str, str]:
    """The words of ``text`` that carry meaning, by stem (every CJK character counts)."""
    topics: dict[str, str] = {}
    for word in _units(normalise(text)):
        if _ONE_CJK.fullmatch(word):
            topics.setdefault(word, word)
            continue
        base = _base(word)
        if len(word) >= 3 and word not in _STOP and base not in _STOP_BASES:
            topics.setdefault(base[:_STEM_CHARS], word)
    return topics


def _fact_topics(fact: str) -> dict[str, str]:
    text = normalise(fact)
    for word in _CJK_STOP:
        text = text.replace(word, " ")
    return _topics(text)


def fact_topics(fact: str) -> frozenset[str]:
    """The stems of the words that carry meaning in a saved fact (what consolidation compares:
    two entries about the same words say the same thing, or contradict each other)."""
    return frozenset(_fact_topics(fact))


def topic_stems(text: str) -> frozenset[str]:
    """The stems :func:`fact_topics` would give for plain (normalised) text."""
    return frozenset(_topics(text))


def _uncarried(fact: str, quote: str) -> str | None:
    """Why ``quote`` does not carry ``fact``, or None: at least half of the fact's meaningful
    words, and at least two of them when it has two, must be in the quote."""
    wanted = _fact_topics(fact)
    if not wanted:
        return (
            "the fact names nothing but the user (or a bare agreement); state the preference "
            "itself, in the words of the quote."
        )
    present = _topics(quote)
    carried = [stem for stem in wanted if stem in present]
    if not carried:
        return "the fact shares no word with its quote; state only what the quoted words say."
    needed = max(min(2, len(wanted)), (len(wanted) + 1) // 2)
    if len(carried) >= needed:
        return None
    return (
        f"the quote does not say the fact: only {len(carried)} of its {len(wanted)} key words "
        "are in the quote. A bare agreement ('ok', 'sounds good') backs nothing; quote the "
        "passage where the user states it, or save only what it says."
    )


def _turned(fact: str, said: str) -> str | None:
    """Why ``fact`` turns the negations of ``said`` (the user message its quote is from),
    or None (:func:`.polarity.turned`)."""
    text = normalise(fact)
    for word in _CJK_STOP:
        text = text.replace(word, " ")
    return turned(text, said, _topics)


def _whole(quote: str) -> re.Pattern[str]:
    """``quote`` as a pattern that matches only whole words (CJK has no word edges)."""
    head = "" if _ONE_CJK.match(quote[:1]) else r"(?<!\w)"
    tail = "" if _ONE_CJK.match(quote[-1:]) else r"(?!\w)"
    return re.compile(head + re.escape(quote) + tail)


class QuoteBook:
    """The user's words and everyone else's in one reviewed conversation, normalised once."""

    def __init__(self, snapshot: Sequence[Mapping[str, Any]]) -> None:
        #: where each of the user's messages is in the snapshot (the index a quote cites), and
        #: what the user typed there: split by structure (:func:`split_user`), so a summary
        #: the compressor merged before it and the blocks the session appended are not theirs
        self.user_at: list[int] = []
        self.user: list[str] = []
        self.summaries: list[str] = []
        self.appended: list[str] = []
        self.others: list[str] = []
        for at, message in enumerate(snapshot):
            if not isinstance(message, Mapping) or message.get("role") == "system":
                continue
            if message.get("role") != "user":
                self.others.append(normalise(message_text(message)))
                continue
            parts = split_user(message)
            self.user_at.append(at)
            self.user.append(normalise(parts.own))
            self.summaries.extend(normalise(p) for p in (parts.summary,) if p)
            self.appended.extend(normalise(p) for p in (parts.appended,) if p)
        everything = "\n".join(self.user)
        self._user_topics = _topics(everything)
        self._user_marks = marks_of(everything, expand=True)

    def problem(self, quote: object, fact: object) -> str | None:
        """Why ``quote`` does not back ``fact`` as the user's own words, or None when it does."""
        if not isinstance(fact, str) or not fact.strip():
            return "the fact to save is empty; write it as content."
        if not isinstance(quote, str) or not quote.strip():
            return (
                "a user-profile fact needs 'quote': the user's own words, copied exactly from "
                "one of their messages, that state it. Without one it only waits for a person."
            )
        wanted = normalise(quote).strip(_EDGES)
        if len(_units(wanted)) < MIN_QUOTE_UNITS or len(wanted) < MIN_QUOTE_CHARS:
            return (
                f"the quote is too short to show what the user meant; quote at least "
                f"{MIN_QUOTE_UNITS} words of their message."
            )
        found = _whole(wanted)
        if not any(found.search(text) for text in self.user):
            if any(found.search(text) for text in self.summaries):
                return (
                    "the quote is not the user's words: it comes from a summary of earlier "
                    "turns that the session put before their message. Only what the user "
                    "typed can back a fact."
                )
            if any(found.search(text) for text in self.appended):
                return (
                    "the quote is not the user's words: it comes from text the session added "
                    "to their message (an attached reference, its warnings or recalled "
                    "memory). Only what the user typed can back a fact."
                )
            if any(found.search(text) for text in self.others):
                return (
                    "the quote is not the user's words: it comes from the assistant's or a "
                    "tool's text. Only what the user said can back a fact."
                )
            return (
                "the quote is not in any of the user's messages; copy one passage of their "
                "words exactly (no paraphrase, no ellipsis)."
            )
        said = next(text for text in self.user if found.search(text))
        return _uncarried(fact, wanted) or _turned(fact, said) or self.unsaid(fact)

    def unsaid(self, fact: str) -> str | None:
        """Why ``fact`` says more than the user did, or None: every meaningful word (stop
        words aside, compared loosely) and every mark (number, IBAN, URL, e-mail, host,
        handle, path) of it must be in the user's own words somewhere in the snapshot. The
        reason gives counts only: a stored note must not carry the fact's words."""
        words = [stem for stem in _fact_topics(fact) if stem not in self._user_topics]
        marks = [mark for mark in marks_of(fact) if mark not in self._user_marks]
        if not words and not marks:
            return None
        return (
            f"the fact says more than the user did: {len(words)} of its key words and "
            f"{len(marks)} of its numbers, addresses or names are not in the user's own "
            "words. Save only what the user said, in their words."
        )

    def backing(self, quote: object, fact: object) -> tuple[int | None, str | None]:
        """The snapshot index of the user message ``quote`` comes from when it backs
        ``fact``, else None and why not (:meth:`problem`)."""
        problem = self.problem(quote, fact)
        if problem is not None:
            return None, problem
        found = _whole(normalise(str(quote)).strip(_EDGES))
        at = next(i for i, text in zip(self.user_at, self.user, strict=True) if found.search(text))
        return at, None
