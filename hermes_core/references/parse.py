"""Finding @-references in a user's message (spec 40 §5); pure, linear in the text's length.

The forms: ``@file:path`` (optionally ``:start-end`` or ``:line``), ``@folder:path``,
``@diff``, ``@staged``, ``@git:N`` and ``@url:https://...``. A path with spaces is quoted
(``@file:"my notes.md":3-9``; single quotes and backticks work too).

What is not a reference, on purpose: an ``@`` right after a letter, digit, ``.``, ``+``,
``-``, ``/``, ``\\`` or another ``@`` (so ``a@b.com`` and ``me@file:x`` stay e-mail-like
text); an ``@name`` that is not one of the six kinds (``@alice`` is a handle); and anything
inside Markdown code (a fenced block, or an inline span between backticks), so a user can
write about the syntax without triggering it. Trailing sentence punctuation and unbalanced
closing brackets are not part of a bare value (``(see @file:a.py).`` names ``a.py``).

Every repetition in the patterns is bounded, and code spans are found by pairing backtick
runs with a dictionary rather than by backtracking, so no message can make parsing slow.
"""

from __future__ import annotations

import bisect
import re
import sys
from dataclasses import dataclass
from typing import Final

__all__ = ["KINDS", "MAX_GIT_COMMITS", "MAX_REFERENCES", "Reference", "find_references"]

#: The reference kinds, in the order the documentation lists them.
KINDS: Final = ("file", "folder", "diff", "staged", "git", "url")
#: At most this many references of one message are expanded; the rest get a warning.
MAX_REFERENCES: Final = 16
#: ``@git:N`` shows at most this many commits.
MAX_GIT_COMMITS: Final = 50
_MAX_VALUE: Final = 4096

_QUOTED: Final = r'"[^"\n]{1,4096}"|\'[^\'\n]{1,4096}\'|`[^`\n]{1,4096}`'
_PATTERN: Final = re.compile(
    r"(?<![\w@/\\.+\-])@(?:"
    r"(?P<simple>diff|staged)(?![\w\-/:@]|\.\w)"
    r"|(?P<kind>file|folder|git|url):"
    rf"(?P<value>(?:{_QUOTED})(?::\d{{1,9}}(?:-\d{{1,9}})?)?|[^\s]{{1,{_MAX_VALUE}}})"
    r")"
)
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
_BACKTICKS: Final = re.compile(r"`+")
_BLANK_LINE: Final = re.compile(r"\n[ \t]*\n")
_RANGE: Final = re.compile(r"(\d{1,9})(?:-(\d{1,9}))?")
_TRAILING: Final = ",.;:!?'\""
_CLOSERS: Final = {")": "(", "]": "[", "}": "{", ">": "<"}


@dataclass(frozen=True)
class Reference:
    """One reference as written: ``raw`` is ``text[start:end]``.

    ``target`` is the path, the URL or the commit count (``""`` for ``@diff`` and
    ``@staged``); ``line_range`` is 1-based and inclusive; ``problem`` says why a malformed
    reference (``@git:abc``, ``@file:a.py:9-3``) cannot be expanded, and what to write.
    """

    kind: str
    target: str
    start: int
    end: int
    raw: str
    line_range: tuple[int, int] | None = None
    problem: str | None = None


def _fenced_regions(text: str) -> list[tuple[int, int]]:
    """Spans of fenced code blocks (an unclosed fence runs to the end)."""
    regions: list[tuple[int, int]] = []
    opened: tuple[str, int, int] | None = None  # fence character, length, start offset
    pos = 0
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line)
        if opened is None:
            if match:
                opened = (match.group(1)[0], len(match.group(1)), pos)
        elif (
            match
            and match.group(1)[0] == opened[0]
            and len(match.group(1)) >= opened[1]
            and not line[match.end() :].strip()
        ):
            regions.append((opened[2], pos + len(line)))
            opened = None
        pos += len(line)
    if opened is not None:
        regions.append((opened[2], len(text)))
    return regions


def _inside(regions: list[tuple[int, int]], index: int) -> bool:
    """Whether ``index`` lies in one of ``regions`` (sorted, not overlapping)."""
    at = bisect.bisect_right(regions, (index, sys.maxsize)) - 1
    return at >= 0 and regions[at][0] <= index < regions[at][1]


def _code_regions(text: str) -> list[tuple[int, int]]:
    """Fenced blocks plus inline code spans: a run of n backticks up to the next run of
    exactly n backticks in the same paragraph (CommonMark's rule, without backtracking)."""
    fenced = _fenced_regions(text)
    runs = [m for m in _BACKTICKS.finditer(text) if not _inside(fenced, m.start())]
    by_length: dict[int, list[int]] = {}
    for number, run in enumerate(runs):
        by_length.setdefault(len(run.group()), []).append(number)
    breaks = [m.start() for m in _BLANK_LINE.finditer(text)]
    spans: list[tuple[int, int]] = []
    number = 0
    while number < len(runs):
        run = runs[number]
        same = by_length[len(run.group())]
        later = bisect.bisect_right(same, number)
        next_break = bisect.bisect_left(breaks, run.end())
        paragraph_end = breaks[next_break] if next_break < len(breaks) else len(text)
        if later < len(same) and runs[same[later]].start() < paragraph_end:
            closer = runs[same[later]]
            spans.append((run.start(), closer.end()))
            number = same[later] + 1
        else:
            number += 1
    return sorted(fenced + spans)


def _strip_trailing(value: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from a bare value's end."""
    while value:
        last = value[-1]
        if last in _TRAILING or (
            last in _CLOSERS and value.count(last) > value.count(_CLOSERS[last])
        ):
            value = value[:-1]
        else:
            break
    return value


def _unquote(value: str) -> tuple[str, str]:
    """``(inside the quotes, what follows them)`` for a quoted value, else ``(value, "")``."""
    if value and value[0] in "\"'`":
        close = value.find(value[0], 1)
        if close > 0:
            return value[1:close], value[close + 1 :]
    return value, ""


def _line_range(text: str) -> tuple[tuple[int, int] | None, str | None]:
    match = _RANGE.fullmatch(text)
    if match is None:
        return None, None
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first < 1 or last < first:
        return (first, last), (
            f"the line range {text} is empty or starts before line 1: write "
            "`:start-end` with 1 <= start <= end (or `:N` for one line)"
        )
    return (first, last), None


def _file_value(value: str) -> tuple[str, tuple[int, int] | None, str | None]:
    """Path, line range and problem of an ``@file:`` value."""
    path, rest = _unquote(value)
    if rest:
        return path, *_line_range(rest[1:])
    if value[0] not in "\"'`":
        head, colon, tail = path.rpartition(":")
        if colon and head:
            found, problem = _line_range(tail)
            if found is not None:
                return head, found, problem
    return path, None, None


def _reference(text: str, match: re.Match[str]) -> Reference:
    simple = match.group("simple")
    if simple:
        return Reference(simple, "", match.start(), match.end(), match.group())
    kind = match.group("kind")
    value = match.group("value")
    quoted = value[0] in "\"'`"
    if not quoted:
        value = _strip_trailing(value) or value  # "@folder:." keeps its dot
    end = match.start("value") + len(value)
    raw = text[match.start() : end]
    line_range: tuple[int, int] | None = None
    problem: str | None = None
    if kind == "file":
        target, line_range, problem = _file_value(value)
    else:
        target = _unquote(value)[0]
    number = target.isascii() and target.isdigit() and len(target) <= 3
    if kind == "git" and not (number and 1 <= int(target) <= MAX_GIT_COMMITS):
        problem = f"@git: takes a number of commits from 1 to {MAX_GIT_COMMITS}, as in @git:3"
    if not target and kind != "git":
        problem = f"@{kind}: needs a {'URL' if kind == 'url' else 'path'} after the colon"
    return Reference(kind, target, match.start(), end, raw, line_range, problem)


def find_references(text: str) -> list[Reference]:
    """Every reference in ``text`` outside Markdown code, in order of appearance."""
    if "@" not in text:
        return []
    code = _code_regions(text) if "`" in text or "~~~" in text else []
    found = []
    for match in _PATTERN.finditer(text):
        if code and _inside(code, match.start()):
            continue
        found.append(_reference(text, match))
    return found
