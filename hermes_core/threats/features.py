"""The words and word pieces the learned scorer reads: a pure function of normalised text.

Patterns know the sentences they were written for; a paraphrase with other words walks
past them. The scorer (:mod:`hermes_core.threats.learned`) instead weighs every piece of
the text, so features are chosen to carry meaning across wording, spelling and language:

- ``w:`` words and ``b:`` pairs of neighbouring words ("no longer", "longer apply");
- ``g:`` pairs one word apart ("guidelines ... apply"), for filler-word paraphrases;
- ``c:`` four-letter pieces of each word with its edges marked (``^ign``, ``gnor``),
  which survive inflection ("ignorieren", "ignorez"), compounds and typos;
- for scripts written without spaces (Chinese, Japanese, Thai), ``h:`` single
  characters and ``k:`` pairs, since there are no words to split on;
- ``C:`` the word classes of :mod:`hermes_core.threats.concepts` ("your", "rules",
  "lapse", "secret", "send", ...) and ``P:`` pairs of classes at most
  :data:`CLASS_WINDOW` words apart, which carry a paraphrase or a translation to the
  weights its wording never earned;
- ``Q:quoted`` when a span of several words stands in quotes.

The input is read once, left to right, and each feature is kept once: linear in the text.
"""

from __future__ import annotations

import re
from typing import Final

from hermes_core.threats.concepts import run_classes, word_class

#: Words: letters and digits, plus the joiners that belong inside paths and names
#: (``.env``, ``authorized_keys``, ``~/.ssh``).
_WORD: Final = re.compile(r"[^\W_]{1,64}(?:[._'’-][^\W_]{1,64}){0,6}|[$~/.]{1,3}[^\W_]{1,64}")
#: Runs in scripts without spaces between words.
_UNSPACED: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]{1,4096}"
)
#: Longest word kept whole (longer ones are usually keys or hashes: their pieces suffice).
_MAX_WORD: Final = 24
#: Opening quote -> the closing quotes that may end it.
_QUOTES: Final = {
    "'": "'’",
    '"': '"”',
    "“": '”"',
    "‘": "’'",
    "«": "»",
    "„": "“”",
    "「": "」",
    "『": "』",
}
#: How far a quotation may run, and how many opening quotes are tried.
_QUOTE_SPAN, _MOST_QUOTES = 240, 64


def _quoted(window: str, closers: str) -> str | None:
    """The text up to the first closing quote that ends a word, if any."""
    for offset, char in enumerate(window):
        if char in closers:
            after = window[offset + 1 : offset + 2]
            if not (char in "'’" and after.isalnum()):
                return window[:offset]
    return None


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """The quoted spans of ``text`` that hold three or more words (or six or more
    characters of a script without spaces), as (start, end) of the text inside the quotes:
    what a note *about* an attack quotes. At most :data:`_MOST_QUOTES` openings are tried,
    each read at most :data:`_QUOTE_SPAN` ahead: linear."""
    spans: list[tuple[int, int]] = []
    tried, index = 0, 0
    while index < len(text) and tried < _MOST_QUOTES:
        char = text[index]
        closers = _QUOTES.get(char)
        if closers is None or (char in "'’" and index and text[index - 1].isalnum()):
            index += 1  # an apostrophe inside a word ("it's") opens nothing
            continue
        tried += 1
        inside = _quoted(text[index + 1 : index + 1 + _QUOTE_SPAN], closers)
        if inside is None or "\n" in inside:
            index += 1
            continue
        if inside.count(" ") >= 2 or (_UNSPACED.search(inside) and len(inside) >= 6):
            spans.append((index + 1, index + 1 + len(inside)))
        index += len(inside) + 2
    return spans


def quotes_a_span(text: str) -> bool:
    """Whether ``text`` quotes a span of several words (see :func:`quoted_spans`)."""
    return bool(quoted_spans(text))


def blank_quoted(text: str) -> str:
    """``text`` with the inside of every quoted span replaced by spaces (same length)."""
    spans = quoted_spans(text)
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        parts += [text[last:start], " " * (end - start)]
        last = end
    return "".join(parts) + text[last:]


#: The most words read from one text: a memory entry is far shorter, and the scorer
#: reads long text in windows (see :mod:`hermes_core.threats.learned`).
MAX_WORDS: Final = 4_000
#: How many words apart two classes may be and still form a ``P:`` pair.
CLASS_WINDOW: Final = 8


def _pieces(word: str, out: set[str]) -> None:
    marked = f"^{word}$"
    for start in range(len(marked) - 3):
        out.add("c:" + marked[start : start + 4])


def features(lower: str) -> set[str]:
    """The feature names of already lower-cased, normalised ``lower``."""
    out: set[str] = set()
    words: list[str] = []
    classes: list[tuple[int, str]] = []
    for match in _WORD.finditer(lower):
        word = match.group()
        if len(words) >= MAX_WORDS:
            break
        if _UNSPACED.search(word):
            for run in _UNSPACED.findall(word):
                for index, char in enumerate(run):
                    out.add("h:" + char)
                    if index + 1 < len(run):
                        out.add("k:" + run[index : index + 2])
                classes.extend((len(words), name) for name in run_classes(run))
            for part in _UNSPACED.sub(" ", word).split():
                _word(part, words, classes, out)
            continue
        _word(word.replace("’", "'")[:_MAX_WORD], words, classes, out)
    for index in range(len(words) - 1):
        out.add(f"b:{words[index]} {words[index + 1]}")
        if index + 2 < len(words):
            out.add(f"g:{words[index]} {words[index + 2]}")
    _class_pairs(classes, out)
    if quotes_a_span(lower):
        out.add("Q:quoted")
    return out


def _word(word: str, words: list[str], classes: list[tuple[int, str]], out: set[str]) -> None:
    words.append(word)
    out.add("w:" + word)
    if len(word) >= 3:
        _pieces(word, out)
    name = word_class(word)
    if name is not None:
        classes.append((len(words) - 1, name))


def _class_pairs(classes: list[tuple[int, str]], out: set[str]) -> None:
    """``C:`` for each class, ``P:`` for each pair within :data:`CLASS_WINDOW` words.
    Each class occurrence pairs with at most the next 8 occurrences: linear."""
    for index, (position, name) in enumerate(classes):
        out.add("C:" + name)
        for later_position, later in classes[index + 1 : index + 9]:
            if later_position - position > CLASS_WINDOW:
                break
            if later != name:
                first, second = sorted((name, later))
                out.add(f"P:{first}+{second}")
