"""The calibrated token estimate: fast, no data files, within a few percent of o200k.

Used when tiktoken's BPE data is absent, or when a host picks speed (``model.tokenizer:
estimate``). It counts characters by class through one ``bytes.translate`` pass, with no
per-character Python loop.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["estimate_tokens"]

# Weights measured against tiktoken o200k_base (see bench/token_accuracy.py). The ASCII weights
# were fitted (least squares, then a minimax grid search over the per-category relative error)
# on the sample transcripts in tests/data/transcripts/ (prose: user/assistant text; code:
# read_file results; tool JSON: call arguments and other tool results), cross-checked on stdlib
# sources, package READMEs, JSON files and /usr/share/doc: every category lands within about 7%.
# Prose works out at about 4.4 characters a token, code and JSON about 3.5.
_LETTER_W: Final = 0.20  # a-z A-Z: words of ~5 letters are ~1 token
_DIGIT_W: Final = 0.90  # digits split into groups of at most 3, and line numbers stand alone
_PUNCT_W: Final = 0.55  # punctuation and other ASCII symbols rarely merge with letters
_SPACE_W: Final = 0.19  # a space mostly joins the next word; indentation runs cost a little
# Non-ASCII weights per character, measured on paragraphs written for the purpose (the CJK ones
# are embedded in tests/test_tokens.py; bench/token_accuracy.py checks other ones out of sample):
# Chinese 0.73, Japanese 0.76, Korean 0.65 (beyond its spaces), Russian 0.24, Greek 0.34,
# Arabic 0.27, Hindi 0.34, emoji 1.45.
_WIDE_W: Final = 0.75  # U+3000-U+9FFF: CJK punctuation, kana, Han
_HANGUL_W: Final = 0.65  # U+A000-U+DFFF: mostly Hangul syllables
_OTHER_W: Final = 0.30  # other BMP scripts (Cyrillic, Greek, Arabic, Indic, accents, dashes)
_ASTRAL_W: Final = 1.5  # emoji and other characters outside the BMP

# Runs the per-class weights get wrong, re-costed (measured on o200k): base64 and other
# mixed-case random text costs ~0.69 tokens a character, not the ~0.3 its letters and digits
# suggest (undercounting is the dangerous direction for a trigger); long digit runs split into
# groups of three; long runs of spaces merge into a few tokens. Candidates are found with
# ``bytes.find`` on a class-mapped copy, so text without such runs pays two translates.
_RANDOM_MIN, _DIGIT_MIN, _SPACE_MIN = 40, 7, 48
_RANDOM_W: Final = 0.69
_DIGIT_RUN_W: Final = 1 / 3
_SPACE_RUN_W: Final = 1 / 64
_B64_RUN: Final = re.compile(rb"[A-Za-z0-9+/]+")
_DIGIT_RUN: Final = re.compile(rb"[0-9]+")
_SPACE_RUN: Final = re.compile(rb" +")

_LETTERS: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_DIGITS: Final = b"0123456789"


def _class_table() -> bytes:
    """Maps each UTF-8 byte to a class letter; a character's class is that of its lead byte,
    so counting class letters counts characters by script without a per-character loop."""
    table = bytearray(b"P" * 128 + b"c" * 64 + b"2" * 32 + b"3" * 16 + b"4" * 16)
    for byte in _LETTERS:
        table[byte] = ord("L")
    for byte in _DIGITS:
        table[byte] = ord("D")
    table[ord(" ")], table[ord("\n")] = ord("S"), ord("N")
    table[0xE3:0xEA] = b"W" * 7  # lead bytes of U+3000..U+9FFF
    table[0xEA:0xEE] = b"H" * 4  # lead bytes of U+A000..U+DFFF
    return bytes(table)


_CLASSES: Final = _class_table()


def _marker_table(members: bytes) -> bytes:
    table = bytearray(b"." * 256)
    for byte in members:
        table[byte] = ord("x")
    return bytes(table)


_B64_MARKS: Final = _marker_table(_LETTERS + _DIGITS + b"+/")


def _ascii_weighted(count: Callable[[bytes], int], size: int) -> float:
    """The estimate of ASCII text from ``count`` of its class-mapped bytes (one translate)."""
    letters, digits = count(b"L"), count(b"D")
    spaces = count(b"S")
    newlines = count(b"N")  # a newline joins its neighbours' tokens: weight 0
    return (
        _LETTER_W * letters
        + _DIGIT_W * digits
        + _PUNCT_W * (size - letters - digits - spaces - newlines)
        + _SPACE_W * spaces
    )


def _mixed_weighted(count: Callable[[bytes], int]) -> float:
    return (
        _LETTER_W * count(b"L")
        + _DIGIT_W * count(b"D")
        + _PUNCT_W * count(b"P")
        + _SPACE_W * count(b"S")
        + _OTHER_W * (count(b"2") + count(b"3"))
        + _WIDE_W * count(b"W")
        + _HANGUL_W * count(b"H")
        + _ASTRAL_W * count(b"4")
    )


def _ascii_estimate(text: str) -> float:
    data = text.encode("ascii")  # a memcpy for ASCII text
    return _ascii_weighted(data.translate(_CLASSES).count, len(data))


def _mixed_estimate(text: str) -> float:
    return _mixed_weighted(text.encode("utf-8", "surrogatepass").translate(_CLASSES).count)


def _spans(
    data: bytes, haystack: bytes, needle: bytes, run: re.Pattern[bytes]
) -> list[tuple[int, bytes]]:
    """``(start, run)`` for runs of ``data`` where ``haystack`` (``data`` mapped byte for byte
    to classes) holds ``needle`` (a minimal run of one class), found with ``find``."""
    found: list[tuple[int, bytes]] = []
    pos = haystack.find(needle)
    while pos != -1:
        match = run.match(data, pos)
        if match is None:  # pragma: no cover - the marks and the pattern agree
            break
        found.append((pos, match.group()))
        pos = haystack.find(needle, match.end())
    return found


def _run_corrections(data: bytes, classes: bytes) -> float:
    """How far the class weights are off on the special runs of ``data`` (``classes``: its
    bytes mapped through ``_CLASSES``, where digits are ``D``)."""
    delta = 0.0
    random_spans: list[tuple[int, int]] = []
    b64 = data.translate(_B64_MARKS)
    for start, run in _spans(data, b64, b"x" * _RANDOM_MIN, _B64_RUN):
        if run == run.lower() or run == run.upper() or run.translate(None, _DIGITS) == run:
            continue  # one case only, or no digits: paths, hex, words, not random text
        n = len(run)
        letters = n - len(run.translate(None, _LETTERS))
        digits = n - len(run.translate(None, _DIGITS))
        base = _LETTER_W * letters + _DIGIT_W * digits + _PUNCT_W * (n - letters - digits)
        delta += _RANDOM_W * n - base
        random_spans.append((start, start + n))
    starts = [span[0] for span in random_spans]
    for start, run in _spans(data, classes, b"D" * _DIGIT_MIN, _DIGIT_RUN):
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and start < random_spans[i][1]:
            continue  # already re-costed as part of random text
        delta += len(run) * (_DIGIT_RUN_W - _DIGIT_W)
    for _start, run in _spans(data, data, b" " * _SPACE_MIN, _SPACE_RUN):
        delta += len(run) * (_SPACE_RUN_W - _SPACE_W)
    return delta


#: Runs of two or more newlines: o200k spends a token per ten or so of them and the run
#: stops the text around it from merging (a lone word between runs is a token of its own),
#: where the class weights (a newline joins its neighbours) say nothing. Each run costs
#: ceil(length / 10) plus the merge it breaks; a long run alone is overestimated (the safe
#: direction for a trigger).
_NEWLINE_RUN: Final = re.compile(rb"\n{2,100000}")
_NEWLINES_PER_TOKEN: Final = 10
_BROKEN_MERGE: Final = 0.4
#: An escaped newline or tab in JSON (``\\n``) is a token of its own, not a symbol and a
#: letter that merge (0.55 + 0.20 by class): 0.30 more each.
_ESCAPE: Final = re.compile(rb"\\[ntr]")
_ESCAPE_W: Final = 0.30
#: Characters the per-class weight (0.30 for "other" scripts) undercounts, with the weight
#: o200k gives them (measured: combining marks 1.0-1.3 tokens each, Ethiopic 1.6-2.2, Thai 0.47,
#: the southern Indic scripts 0.38). Undercounting is the dangerous direction for a trigger.
_UNDERCOUNTED: Final = (
    (re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]"), 1.3),
    (re.compile("[\u1200-\u139f\u2d80-\u2ddf\uab00-\uab2f]"), 2.2),
    (re.compile("[\u0e00-\u0eff\u1780-\u17ff\u1000-\u109f]"), 0.5),
    (re.compile("[\u0b80-\u0d7f\u0d80-\u0dff]"), 0.4),
)


def _underestimated(data: bytes, text: str) -> float:
    """Tokens the class weights miss: newline runs, and scripts they undercount."""
    extra = 0.0
    if b"\n\n" in data:
        runs = _NEWLINE_RUN.findall(data)
        extra += sum(-(-len(run) // _NEWLINES_PER_TOKEN) for run in runs)
        extra += _BROKEN_MERGE * len(runs)
    if b"\\" in data:
        extra += _ESCAPE_W * len(_ESCAPE.findall(data))
    if not text.isascii():
        for pattern, weight in _UNDERCOUNTED:
            found = len(pattern.findall(text))
            if found:
                extra += found * (weight - _OTHER_W)
    return extra


def estimate_tokens(text: str) -> int:
    """Approximate o200k token count in O(len(text)), using only C-speed bytes operations
    (about 3 ms/MB for ASCII, 6 ms/MB otherwise)."""
    if not text:
        return 0
    data = text.encode("utf-8", "surrogatepass")
    classes = data.translate(_CLASSES)  # one pass; every count below reads this copy
    if text.isascii():
        total = _ascii_weighted(classes.count, len(data))
    else:
        total = _mixed_weighted(classes.count)
    total += _run_corrections(data, classes) + _underestimated(data, text)
    return max(1, int(total + 0.5))
