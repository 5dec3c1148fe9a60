"""The sentences a compaction must not paraphrase away: the user's rules, the assistant's
decisions and measured figures.

Why: a summary that keeps what was done but drops "never edit the vendored files" or "we
went with SQLite" makes the next turn break a rule or reopen a settled question. Prose
summaries lose them first (the middle of a long session does not fit the prose budget), so
the anchor ledger carries them in the speaker's own words. Pure functions: text in,
sentences out, each bounded, found by marker words (a cheap search runs before any split).

A rule is a directive, not any sentence with a negation: "Never edit vendor/." and "You
must not push to main." are rules, "Sorry, I don't have the log." and "It should not fail
like that." are not. So a marker counts at the start of a sentence (after a word such as
"please", "also", "and"), after "you"/"we" with a modal, or bound to an action verb
("don't push", "never commit"). Every pattern has bounded repetition and no nested
quantifier, so each search is linear in the text (hostile input included).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["decision_sentences", "rule_sentences"]

#: what may come before an imperative at the start of a sentence
_LEAD: Final = (
    r"(?:(?:please|pls|also|and|but|so|ok|okay|oh|remember|important|note|just|again|"
    r"one more thing|btw|and also|from now on)[,:!]?\s{1,3}){0,3}"
)
_IMPERATIVE: Final = (
    r"(?:always|never|don'?t(?!\s{1,3}(?:worry|mind|bother)\b)|do not|dont|avoid|make sure|"
    r"be sure to|remember to|stick to|only (?:use|ever|touch|edit|run|change)|"
    r"stop (?:using|adding|running|editing|calling)|no more than|prefer|"
    r"no (?:new|more|other|extra)\s{1,3}[a-z]{1,40}|under no circumstances|"
    r"please (?:use|run|keep|add|write|follow|put|call|name|format|prefer)\b|"
    r"use\b[^.!?\n]{1,60},?\s{1,3}(?:not|instead of|rather than)\b|"
    r"keep it (?:to|under|below|short|small|minimal|simple))\b"
)
_VERBS: Final = (
    r"(?:use|run|edit|touch|change|modify|commit|push|merge|delete|remove|add|call|install|"
    r"upgrade|downgrade|rename|refactor|format|deploy|release|write|create|print|log|send|"
    r"expose|hardcode|mock|skip|disable|enable|reformat|rewrite|break|bump|drop|force)\b"
)
_RULE: Final = re.compile(
    rf"^{_LEAD}{_IMPERATIVE}"  # an imperative sentence: "Never ...", "Please don't ..."
    r"|\b(?:you|we)\s{1,3}(?:should|shall|need to|have to|are to)(?:n'?t|\s{1,3}not)?"
    r"\s{1,3}(?!(?:be|been|have|had)\b)(?:always\s{1,3}|never\s{1,3})?[a-z]"  # not "must be"
    r"|\bmust(?:n'?t|\s{1,3}not)?\s{1,3}(?!(?:be|been|have|had)\b)(?:always\s{1,3}|"
    r"never\s{1,3})?[a-z]"  # "the tests must pass", "commits must follow ..."
    rf"|\b(?:always|never|don'?t|do not)\s{{1,3}}(?:ever\s{{1,3}})?{_VERBS}"  # bound to an action
    r"|\b(?:from now on|at all times|without asking|under no circumstances|is not allowed|"
    r"are not allowed|is forbidden|are forbidden)\b"
    r"|\bkeep\b[^.!?\n]{0,60}\b(?:identical|unchanged|intact|as it is|stable|"
    r"backwards?.compatible)\b",
    re.IGNORECASE,
)
#: a cheap first search: a text with none of these words holds no rule (a prefix each, so
#: "shouldn't" and "mustn't" pass)
_RULE_WORDS: Final = re.compile(
    r"\b(?:always|never|don|do not|avoid|make sure|be sure|remember|stick|only|stop|no |"
    r"prefer|keep|must|should|shall|need to|have to|are to|from now on|at all times|"
    r"without asking|allowed|forbidden|please|use|under no)",
    re.IGNORECASE,
)
#: typographic apostrophes and quotes, read as the plain ones ("Don’t" is "Don't")
_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})
#: what was chosen or settled (the assistant's side)
_DECISION: Final = re.compile(
    r"\b(?:decided|decision|going with|go with|chose|chosen|opted|settled on|instead of|"
    r"we'?ll use|i'?ll use|will use|switch(?:ed|ing)? to|the fix is|root cause|"
    r"the plan is|agreed)\b",
    re.IGNORECASE,
)
#: a measured figure: a number with its unit; it starts where no digit, comma or dot is
#: before it, and its digits are bounded, so a run such as "1,1,1,..." is read once
_FIGURE: Final = re.compile(
    r"(?<![\d,.])\d[\d,.]{0,15}\s?(?:ms|s|sec|seconds?|minutes?|min|h|hours?|days?|[kKMG]i?B|"
    r"bytes|%|tokens?|tests?|lines?|files?|rows?|requests?|req/s|rps|x|MHz|GHz|ports?|"
    r"workers?|retries|threads?|users?)(?![\w])",
)
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+|\n+")
_FENCE: Final = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_WS: Final = re.compile(r"\s+")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_MIN_CHARS, _MAX_CHARS = 12, 300
#: per message: a pasted document full of "must" is not a list of the user's rules
_PER_MESSAGE: Final = 4


def rule_sentences(text: str) -> list[str]:
    """The sentences of a user's message that state a rule ("Never edit vendor/.",
    "Always run the tests before a commit."), questions left out, at most four."""
    return _matching(text, _RULE_WORDS, _RULE, None)


def decision_sentences(text: str) -> list[str]:
    """The sentences of an assistant's message that say what was chosen or settled, or
    state a measured figure ("the step now takes 1,375 ms"), at most four."""
    return _matching(text, None, _DECISION, _FIGURE)


def _matching(
    text: str,
    prefilter: re.Pattern[str] | None,
    marker: re.Pattern[str],
    other: re.Pattern[str] | None,
) -> list[str]:
    if not text:
        return []
    text = text.translate(_APOSTROPHES)
    if prefilter is not None and not prefilter.search(text):
        return []
    if prefilter is None and not (marker.search(text) or (other and other.search(text))):
        return []
    prose = _FENCE.sub("\n", text) if "```" in text else text
    found: list[str] = []
    for raw in _SENTENCE_END.split(prose):
        sentence = _WS.sub(" ", _CONTROL.sub("", raw)).strip().lstrip("-*> ").strip()
        if not _MIN_CHARS <= len(sentence) <= _MAX_CHARS or sentence.endswith("?"):
            continue
        if marker.search(sentence) or (other is not None and other.search(sentence)):
            found.append(sentence)
            if len(found) == _PER_MESSAGE:
                break
    return found
