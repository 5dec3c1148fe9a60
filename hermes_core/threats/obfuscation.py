"""Spelling tricks: extra whitespace, spaced-out letters, digits for letters, texting.

- :func:`collapse` (every scan): runs of spaces, tabs and no-break spaces become one
  space and blank lines disappear, so "Ignore          all    previous" and
  "Ignore\\n\\n\\nall\\n\\n\\nprior" meet the usual patterns; a word spelled out letter by
  letter ("i g n o r e   a l l") is rejoined first.
- :func:`unleet` (a further view, only for text that has the tricks): digits and
  symbols inside words read as the letters they stand for ("1gn0r3" reads "ignore", "a11"
  reads "all",
  "c4t ~/.n3trc" reads "cat ~/.netrc"), and texting spellings as words ("u r" reads
  "you are", "2 u" reads "to you"). A match found only there is also reported as
  ``homoglyph_leetspeak``. Ordinary text with a digit in a name ("s3", "k8s", "ec2") has
  too few such words to get the view at all, and the view of a long text holds only
  the lines with the tricks (at most :data:`MAX_VIEW` characters).
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Final

_SPACED: Final = re.compile(
    r"(?<![^\W\d_])(?:[^\W\d_]{2,3} (?=(?:[^\W\d_] ){3}))?(?:[^\W\d_] ){2,200}[^\W\d_](?![^\W\d_])"
)
_HSPACE: Final = re.compile("[ \t\u00a0\u2000-\u200a\u202f\u205f\u3000]{2,1000}")
_BLANK_LINES: Final = re.compile(r"\n[ \t]{0,100}(?:\n[ \t]{0,100}){1,1000}")


def collapse(text: str) -> str:
    """``text`` with spaced-out words rejoined and whitespace runs made single."""
    if "  " in text or "\t" in text or "\u00a0" in text or "\n\n" in text:
        text = _BLANK_LINES.sub("\n", text)
        text = _SPACED.sub(lambda match: match.group().replace(" ", ""), text)
        return _HSPACE.sub(" ", text)
    return text


#: Digits and symbols standing for letters, inside a word.
_LEET: Final = str.maketrans({"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a"})
#: "1" is "l" when doubled or between vowels ("a11", "ru13s"), else "i" ("1gn0r3", "f1lt3r").
_ONE_AS_L: Final = re.compile(r"11|(?<=[aeiouy])1(?=[aeiouy])")
#: A word mixing letters with leet digits, at most 30 characters.
_LEET_WORD: Final = re.compile(
    r"(?<![\w@$])(?=[a-z0-9@]{0,29}[a-z])(?=[a-z@]{0,29}[013457@])[a-z0-9@]{2,30}(?![\w@])"
)
#: What makes a word leet rather than a name with a digit: a leet digit between letters
#: ("y0u", "l33t", "1gn0r3") or two groups of leet digits ("4r3"), never "v1", "s3", "k8s",
#: "2fa", "sha1", "i18n".
_LEETISH: Final = re.compile(r"[a-z@][013457]{1,2}[a-z@]|[013457][a-z]{1,10}[013457]")
_SLANG: Final = {
    "u": "you", "ur": "your", "r": "are", "2": "to", "4": "for", "n": "and", "ya": "you",
    "yr": "your", "youre": "you're", "pls": "please", "plz": "please", "b4": "before",
    "cuz": "because", "bc": "because", "thru": "through", "w/o": "without", "dont": "don't",
}  # fmt: skip
_SLANG_WORD: Final = re.compile(
    r"(?<![\w'’/.-])(?:u|ur|r|2|4|n|ya|yr|youre|pls|plz|b4|cuz|bc|thru|dont)(?![\w'’/-])"
)
#: Texting words that count towards giving a text the view (numbers and "n" do not: "2
#: workers", "4 spaces" are ordinary).
_TELLING: Final = frozenset(
    {"u", "ur", "r", "ya", "yr", "youre", "pls", "plz", "b4", "cuz", "thru"}
)
_MAX_WORDS = 8_000
#: The leet view holds at most this many characters: the lines that have the tricks.
MAX_VIEW = 16_384


def _leet_word(match: re.Match[str]) -> str:
    word = match.group()
    if word in _SLANG:
        return _SLANG[word]
    if word.isdigit() or sum(char.isalpha() for char in word) < 1:
        return word
    word = _ONE_AS_L.sub(lambda match: "l" * len(match.group()), word.translate(_LEET))
    return word.replace("1", "i")


def unleet(lower: str) -> str | None:
    """The lower-cased ``lower`` with leet and texting spellings read as words, or ``None``
    when it has fewer than two such words (nothing to read differently)."""
    leet = sum(
        _LEETISH.search(match.group()) is not None
        for match in islice(_LEET_WORD.finditer(lower), _MAX_WORDS)
    )
    slang = sum(
        match.group() in _TELLING for match in islice(_SLANG_WORD.finditer(lower), _MAX_WORDS)
    )
    if leet + slang < 2 or (leet == 0 and slang < 2):
        return None
    text = tricked_lines(lower, (_LEET_WORD, _SLANG_WORD), MAX_VIEW)
    text = _LEET_WORD.sub(_leet_word, text) if leet else text
    return _SLANG_WORD.sub(lambda match: _SLANG[match.group()], text)


def tricked_lines(text: str, patterns: tuple[re.Pattern[str], ...], most: int) -> str:
    """``text`` if short; else its lines where one of ``patterns`` matches, up to ``most``
    characters: a further view of the text costs at most that much, however long it is."""
    if len(text) <= most:
        return text
    kept: list[str] = []
    size = 0
    for line in text.split("\n"):
        if any(pattern.search(line) for pattern in patterns):
            kept.append(line[: most - size])
            size += len(kept[-1]) + 1
            if size >= most:
                break
    return "\n".join(kept)
