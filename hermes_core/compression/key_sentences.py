"""The sentences a compaction must not paraphrase away: the user's rules, the assistant's
decisions and measured figures.

Why: a summary that keeps what was done but drops "never edit the vendored files" or "we
went with SQLite" makes the next turn break a rule or reopen a settled question. Prose
summaries lose them first (the middle of a long session does not fit the prose budget), so
the anchor ledger carries them in the speaker's own words. Pure functions: text in,
sentences out, each bounded, found by marker words (a cheap search runs before any split).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["decision_sentences", "rule_sentences"]

#: a rule is stated with one of these (the user's side only)
_RULE: Final = re.compile(
    r"\b(?:always|never|don'?t|do not|must(?:n'?t| not)?|should(?:n'?t| not)|avoid|"
    r"make sure|be sure to|remember to|from now on|stick to|only (?:use|ever|touch|edit|run)|"
    r"prefer|no more than|not allowed|without asking|"
    r"keep it (?:to|under|below|short|small|minimal|simple)|"
    r"keep\b[^.!?\n]{0,60}\b(?:identical|unchanged|intact|as it is|stable|backwards?.compatible)|"
    r"stop (?:using|adding|running|editing))\b",
    re.IGNORECASE,
)
#: what was chosen or settled (the assistant's side)
_DECISION: Final = re.compile(
    r"\b(?:decided|decision|going with|go with|chose|chosen|opted|settled on|instead of|"
    r"we'?ll use|i'?ll use|will use|switch(?:ed|ing)? to|the fix is|root cause|"
    r"the plan is|agreed)\b",
    re.IGNORECASE,
)
#: a measured figure: a number with its unit
_FIGURE: Final = re.compile(
    r"\b\d[\d,.]*\s?(?:ms|s|sec|seconds?|minutes?|min|h|hours?|days?|[kKMG]i?B|bytes|%|"
    r"tokens?|tests?|lines?|files?|rows?|requests?|req/s|rps|x|MHz|GHz|ports?|workers?|"
    r"retries|threads?|users?)(?![\w])",
)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[\"'“(\[A-Z0-9`])|\n+")
_FENCE: Final = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_WS: Final = re.compile(r"\s+")
_MIN_CHARS, _MAX_CHARS = 12, 300
#: per message: a pasted document full of "must" is not a list of the user's rules
_PER_MESSAGE: Final = 4


def rule_sentences(text: str) -> list[str]:
    """The sentences of a user's message that state a rule ("Never edit vendor/.",
    "Always run the tests before a commit."), questions left out, at most four."""
    return _matching(text, _RULE, None)


def decision_sentences(text: str) -> list[str]:
    """The sentences of an assistant's message that say what was chosen or settled, or
    state a measured figure ("the step now takes 1,375 ms"), at most four."""
    return _matching(text, _DECISION, _FIGURE)


def _matching(text: str, marker: re.Pattern[str], other: re.Pattern[str] | None) -> list[str]:
    if not text or not (marker.search(text) or (other is not None and other.search(text))):
        return []
    prose = _FENCE.sub("\n", text) if "```" in text else text
    found: list[str] = []
    for raw in _SENTENCE_END.split(prose):
        sentence = _WS.sub(" ", raw).strip().lstrip("-*> ").strip()
        if not _MIN_CHARS <= len(sentence) <= _MAX_CHARS or sentence.endswith("?"):
            continue
        if marker.search(sentence) or (other is not None and other.search(sentence)):
            found.append(sentence)
            if len(found) == _PER_MESSAGE:
                break
    return found
