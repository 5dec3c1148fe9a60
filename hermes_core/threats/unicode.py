"""Unicode tricks: invisible, bidirectional and tag characters; compatibility forms; look-alikes.

The invisible characters are looked for in the raw text, before normalisation, because
NFKC would quietly drop or keep them and the evidence would be gone. Then the text is
turned into the views the patterns read:

- ``clean``: the invisible characters removed (``Ig<ZWSP>nore`` reads ``Ignore``);
- ``nfkc``: ``clean`` in NFKC (full-width ``Ｉｇｎｏｒｅ`` and bold 𝐈𝐠𝐧𝐨𝐫𝐞 read ``Ignore``);
- ``folded``: ``nfkc`` with Cyrillic and Greek look-alikes turned into the Latin letters they
  imitate and Latin diacritics dropped (``Ignоrе`` with Cyrillic ``о``/``е`` reads ``Ignore``).

Allowed on purpose: a zero-width joiner inside an emoji sequence (👩‍💻), a zero-width
(non-)joiner between letters of the scripts that need one in ordinary spelling (Arabic,
Persian, the Indic scripts), and the tag characters of a subdivision flag (🏴 England).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

#: Zero-width and otherwise invisible characters (reported as ``invisible_unicode``).
_INVISIBLE: Final = (
    "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"  # zero-width, joiners, operators, BOM
    "\u180e\u034f\u115f\u1160\u3164\uffa0"  # Mongolian separator, grapheme joiner, Hangul fillers
)
#: Bidirectional embeddings, overrides and isolates (reported as ``bidi_control``).
_BIDI: Final = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_TAG_FIRST, _TAG_LAST = 0xE0000, 0xE007F
#: Removed for matching but not reported: soft hyphen, LRM/RLM/ALM marks, variation selectors.
_SILENT: Final = "\u00ad\u200e\u200f\u061c" + "".join(chr(c) for c in range(0xFE00, 0xFE10))

_TAG_RUN: Final = re.compile("[\U000e0000-\U000e007f]{1,4000}")
#: A subdivision flag: black flag, 1-6 tag letters or digits, cancel tag (🏴 England).
_FLAG: Final = re.compile(
    "(?<=\U0001f3f4)[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,6}\U000e007f"
)
#: Tag characters to the ASCII they mirror (the cancel tag U+E007F to nothing).
_UNTAG: Final = {code: code - _TAG_FIRST for code in range(_TAG_FIRST, _TAG_LAST)} | {
    _TAG_LAST: None
}
#: At most this much hidden tag text is decoded and scanned (a payload needs far less).
_HIDDEN_TEXT_LIMIT = 16_384
_REMOVE: Final = re.compile(
    "[" + _INVISIBLE + _BIDI + _SILENT + "\U000e0000-\U000e007f\U000e0100-\U000e01ef]{1,1000}"
)


@dataclass(frozen=True)
class UnicodeHit:
    """One class of hidden character found: ``kind`` is a pattern id, ``offset`` the first."""

    kind: str
    offset: int
    char: str


_PICTOGRAPHIC = (
    "\U0001f000-\U0001faff\u2600-\u27bf\u2300-\u23ff\u2b00-\u2bff"
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u3030\u303d"
)
_JOINING_SCRIPTS = (
    "\u0600-\u08ff\u0900-\u0dff\u0f00-\u0fff\u1000-\u109f\u1780-\u18af\ufb50-\ufdff\ufe70-\ufefc"
)
#: Joiners doing their ordinary job: ZWJ between emoji (after any skin tone or variation
#: selector), ZWJ/ZWNJ between letters of a script whose spelling uses them.
_ALLOWED_JOINER: Final = re.compile(
    f"(?<=[{_PICTOGRAPHIC}])[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff]{{0,3}}\u200d"
    f"(?=[{_PICTOGRAPHIC}])"
    f"|(?<=[{_JOINING_SCRIPTS}])[\u200c\u200d](?=[{_JOINING_SCRIPTS}])"
)
_INVISIBLE_RE: Final = re.compile(f"[{_INVISIBLE}\U000e0100-\U000e01ef]")
_BIDI_RE: Final = re.compile(f"[{_BIDI}]")


def _mask_allowed(match: re.Match[str]) -> str:
    """The allowed joiner replaced by a space: same length, so offsets stay true."""
    return match.group()[:-1] + " "


def hidden_characters(text: str) -> tuple[list[UnicodeHit], str]:
    """The hidden-character classes in raw ``text``, and any text spelled in tag characters.

    Tag characters (U+E0020-U+E007E mirror ASCII) can carry a whole instruction that no
    screen shows; it is decoded so the patterns can read it too.
    """
    found: dict[str, UnicodeHit] = {}
    masked = text
    if "\u200d" in text or "\u200c" in text:
        masked = _ALLOWED_JOINER.sub(_mask_allowed, text)
    for kind, pattern in (("invisible_unicode", _INVISIBLE_RE), ("bidi_control", _BIDI_RE)):
        match = pattern.search(masked)
        if match is not None:
            found[kind] = UnicodeHit(kind, match.start(), match.group())
    hidden = ""
    if _TAG_RUN.search(text):
        masked = _FLAG.sub(lambda match: " " * len(match.group()), text)
        first = _TAG_RUN.search(masked)
        if first is not None:
            found["unicode_tag"] = UnicodeHit("unicode_tag", first.start(), first.group()[0])
            hidden = " ".join(_TAG_RUN.findall(masked))[:_HIDDEN_TEXT_LIMIT].translate(_UNTAG)
    hits = sorted(found.values(), key=lambda hit: hit.offset)
    return hits, hidden if hidden.strip() else ""


def strip_hidden(text: str) -> str:
    """``text`` without its hidden characters, so ``Ig<ZWSP>nore`` reads ``Ignore``."""
    return _REMOVE.sub("", text)


def nfkc(text: str) -> str:
    """NFKC: full-width, mathematical and other compatibility letters become plain ones."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


# Cyrillic, Greek and a few other letters that are drawn like Latin ones.
_LOOKALIKES: Final = {
    # Cyrillic lower and upper case
    "а": "a", "в": "b", "г": "r", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
    "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ь": "b", "ѕ": "s", "і": "i",
    "ї": "i", "ј": "j", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ү": "y", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "Ԛ": "Q", "Ԝ": "W", "Ү": "Y",
    "Һ": "H", "Ӏ": "I", "Ь": "b",
    # Greek lower and upper case
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ς": "s", "μ": "u",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin and Armenian oddities
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "ʏ": "y", "օ": "o", "ս": "u", "ո": "n", "հ": "h",
}  # fmt: skip
_FOLD_TABLE: Final = str.maketrans(_LOOKALIKES)
_DIACRITICS: Final = re.compile("[\u0300-\u036f]{1,20}")
#: Look-alikes that also stand alone in ordinary text (the micro sign in "5 μm").
_COMMON_ALONE: Final = frozenset("μ")
_MIXABLE: Final = "".join(sorted(set(_LOOKALIKES) - _COMMON_ALONE - set("ıȷɑɩʏɡ")))
_LATIN = "A-Za-z"
#: A word mixing Latin letters with Cyrillic/Greek look-alikes ("Ignоrе" with Cyrillic о, е).
_MIXED_WORD: Final = re.compile(
    rf"[{_LATIN}][^\W\d_]{{0,30}}?[{_MIXABLE}]|[{_MIXABLE}][^\W\d_]{{0,30}}?[{_LATIN}]"
)
_ANY_MIXABLE: Final = re.compile(f"[{_MIXABLE}]")
#: Runs of full-width, mathematical-styled or circled Latin letters: how trigger words are
#: dressed up to slip past plain matching.
_STYLED_RUN: Final = re.compile(
    "[\uff21-\uff3a\uff41-\uff5a]{4,100}|[\U0001d400-\U0001d6a3]{3,100}|[\u24b6-\u24e9]{3,100}"
)


def fold(text: str) -> str:
    """Look-alike letters to Latin and diacritics dropped; ASCII text comes back unchanged."""
    if text.isascii():
        return text
    text = text.translate(_FOLD_TABLE)
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", _DIACRITICS.sub("", decomposed))


def mixed_script_word(text: str) -> str | None:
    """The first word that mixes Latin letters with Cyrillic/Greek look-alikes, if any."""
    if text.isascii() or not _ANY_MIXABLE.search(text):
        return None
    match = _MIXED_WORD.search(text)
    if match is None:
        return None
    start, end = match.span()
    while start > 0 and match.start() - start < 30 and text[start - 1].isalpha():
        start -= 1
    while end < len(text) and end - match.end() < 30 and text[end].isalpha():
        end += 1
    return text[start:end]


def styled_run(text: str) -> str | None:
    """The first run of full-width or styled Latin letters (before NFKC), if any."""
    if text.isascii():
        return None
    match = _STYLED_RUN.search(text)
    return match.group() if match else None
