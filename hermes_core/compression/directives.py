"""Directives a summary must not carry.

A summary replaces real turns; if it says "ignore previous instructions" or "do not use
tools", the next model call obeys text that no user wrote. The engine rejects such a summary
(it counts as a summary failure) whether or not a threat-scanner plugin is installed; the
``scan_threat`` hook adds whatever the installed scanners know on top.

A rule the *user* stated is another matter: "do not use tools against the production
database" belongs in the summary, in the user's words. So a match is not a directive when
its wording is in what the user wrote (``stated``: the user messages being summarised,
compared with case and whitespace folded); only what the summariser or a tool result
invented is rejected or removed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from hermes_core.types import Finding

_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "summary_override",
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\s{1,5}(?:all\s{1,5}|any\s{1,5})?"
            r"(?:the\s{1,5})?(?:previous|prior|above|earlier|system|your)\s{1,5}"
            r"(?:instructions|messages|rules|prompt|guidelines)",
            re.IGNORECASE,
        ),
    ),
    (
        "summary_no_tools",
        re.compile(
            r"\b(?:do\s{1,5}not|don't|never|stop)\s{1,5}(?:use|call|run|invoke)\s{1,5}"
            r"(?:any\s{1,5})?(?:tools|tool\s{1,5}calls|functions)",
            re.IGNORECASE,
        ),
    ),
    (
        "summary_role_change",
        re.compile(
            r"\byou\s{1,5}(?:are\s{1,5}now|must\s{1,5}now\s{1,5}act\s{1,5}as)\b", re.IGNORECASE
        ),
    ),
    (
        "summary_new_instructions",
        re.compile(
            r"(?:^|\n)\s{0,5}(?:new\s{1,5})?(?:system\s{1,5})?instructions?\s{0,3}:\s{0,3}\S",
            re.IGNORECASE,
        ),
    ),
)


_MARKERS: Final = (
    "--- END OF CONTEXT SUMMARY",
    "[CONTEXT SUMMARY — reference material",
)


_SPACE: Final = re.compile(r"\s{1,1000}")


def _folded(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


_SENTENCE: Final = re.compile(r"[^.!?:;\n]{0,400}(?:[.!?:;]|\n|$)")
_EDGES: Final = " \t-*•>\"'“”‘’`:;,.!?"


class Stated:
    """What the user wrote, folded once, to tell the user's own rules from invented ones.

    A directive counts as the user's only when a whole sentence of the user's that holds it
    stands in the summary line too: "Do not use tools." is not the user's rule when the user
    wrote "Do not use tools against the production database." (a fragment would widen it),
    and quoting a phrase to ask what it means states no rule."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._sentences = [
            sentence
            for text in texts
            if text
            for sentence in (_folded(s).strip(_EDGES) for s in _SENTENCE.findall(text))
            if sentence
        ]

    def said(self, phrase: str, line: str | None = None) -> bool:
        """Whether a sentence of the user's holding ``phrase`` stands whole in ``line``
        (``phrase`` itself when no line is given)."""
        folded = _folded(phrase).strip(_EDGES)
        where = _folded(line if line is not None else phrase)
        return bool(folded) and any(
            folded in sentence and sentence in where for sentence in self._sentences
        )


def _invented(line: str, stated: Stated) -> bool:
    """Whether ``line`` carries a directive the user did not write."""
    for _id, pattern in _PATTERNS:
        for match in pattern.finditer(line):
            if not stated.said(match.group(0), line):
                return True
    return False


def strip_directive_lines(text: str, stated: Stated | None = None) -> tuple[str, int]:
    """``text`` without the lines that read like instructions, and how many were removed.

    The anchor ledger and the fallback summary quote tool output and user text verbatim; a
    tool result saying "ignore all previous instructions" must not come back as context. A
    rule in the user's own words (``stated``) stays."""
    stated = stated or Stated()
    kept: list[str] = []
    removed = 0
    for line in text.split("\n"):
        if _invented(line, stated) or any(marker in line for marker in _MARKERS):
            removed += 1
            kept.append("[line removed: it read like an instruction, not a record]")
        else:
            kept.append(line)
    return "\n".join(kept), removed


def _line_of(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    return text[start : end if end >= 0 else len(text)]


def find_directives(
    text: str, *, limit: int = 200_000, stated: Stated | None = None
) -> list[Finding]:
    """Findings for instruction-like sentences in a summary (bounded input, bounded regexes)
    that the user did not write (``stated``)."""
    stated = stated or Stated()
    sample = text[:limit]
    findings = [
        Finding(
            "summary_marker",
            "directive",
            "the summary imitates the summary markers, which could end it early",
            plugin="compressor",
            excerpt=marker,
        )
        for marker in _MARKERS
        if marker in sample
    ]
    for pattern_id, pattern in _PATTERNS:
        match = next(
            (
                found
                for found in pattern.finditer(sample)
                if not stated.said(found.group(0), _line_of(sample, found))
            ),
            None,
        )
        if match:
            findings.append(
                Finding(
                    pattern_id,
                    "directive",
                    "the summary carries an instruction instead of a record of the turns",
                    plugin="compressor",
                    excerpt=match.group(0)[:80],
                )
            )
    return findings
