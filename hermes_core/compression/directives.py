"""Directives a summary must not carry.

A summary replaces real turns; if it says "ignore previous instructions" or "do not use
tools", the next model call obeys text that no user wrote. The engine rejects such a summary
(it counts as a summary failure) whether or not a threat-scanner plugin is installed; the
``scan_threat`` hook adds whatever the installed scanners know on top.
"""

from __future__ import annotations

import re
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


def find_directives(text: str, *, limit: int = 200_000) -> list[Finding]:
    """Findings for instruction-like sentences in a summary (bounded input, bounded regexes)."""
    sample = text[:limit]
    findings = []
    for pattern_id, pattern in _PATTERNS:
        match = pattern.search(sample)
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
