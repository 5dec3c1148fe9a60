"""What a threat pattern is: an id, a category, the scopes it applies in, and a matcher.

Scopes say where text comes from and so how much suspicion it earns:

- ``strict`` (spec 20 §5: memory writes, memory load, skill writes, summaries): text that
  becomes part of every future prompt. Every pattern.
- ``context`` (recalled provider text, attached references; the compression engine also
  scans LLM summaries here): text shown to the model as reference. The patterns about
  instructions aimed at the model; left out are hard-coded secrets (reference text is
  redacted, not refused), merely reading or ``cat``-ing a credential file (a record says
  "Read .env to find TZ"; printing or sending one still counts), look-alike words and
  styled letters that trigger no other pattern, and the size-cap finding.
- ``all`` (the narrowest): any text at all, such as tool output or web pages. Only the
  near-certain patterns (override wording in any language, curl with a secret, tag and
  bidi characters), so ordinary text about security is never refused.

Patterns read the lower-cased text and are compiled without ``re.IGNORECASE``: with it,
every alternation is several times slower, and the scanner must stay fast on hostile
input. The few patterns that need case (a capitalised name) say ``cased=True``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from hermes_core.threats.vocab import IMP

STRICT, CONTEXT, ALL = "strict", "context", "all"
SCOPES: Final = (STRICT, CONTEXT, ALL)
EVERYWHERE: Final = frozenset(SCOPES)
NOT_ALL: Final = frozenset({STRICT, CONTEXT})
STRICT_ONLY: Final = frozenset({STRICT})

CATEGORIES: Final = (
    "override",
    "leak",
    "role",
    "deception",
    "exfil",
    "secret_read",
    "persistence",
    "c2",
    "hardcoded_secret",
    "invisible_unicode",
    "homoglyph",
    "hidden_markup",
    "learned",
)

Matcher = Callable[[str], "str | None"]
#: Groups of lower-case fragments (a match holds one fragment of every group), and the
#: pattern itself.
Variant = tuple[tuple[tuple[str, ...], ...], re.Pattern[str]]


class View:
    """One form of the scanned text, its lower-cased copy, and cached needle lookups.

    Needle lookups are substring tests; on text with non-ASCII letters Python's substring
    search is many times slower, so ASCII needles are looked up in an ASCII-only copy (a
    needle found in the text is found there too), and each needle is looked up once.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = text.lower()
        self._ascii = self.lower if self.lower.isascii() else self._ascii_only(self.lower)
        self._seen: dict[str, bool] = {}

    @staticmethod
    def _ascii_only(text: str) -> str:
        return text.encode("ascii", "ignore").decode("ascii")

    def has(self, needle: str) -> bool:
        """Whether the lower-cased text contains ``needle``."""
        found = self._seen.get(needle)
        if found is None:
            found = needle in (self._ascii if needle.isascii() else self.lower)
            self._seen[needle] = found
        return found


#: ``veto(text, start, end)``: whether the match at ``text[start:end]`` is not an
#: instruction after all (a quoted example in a note about an article, a rehearsal).
Veto = Callable[[str, int, int], bool]
#: At most this many matches of one variant are offered to its veto; past that the rule
#: reports the last one (fails closed), so the work stays bounded.
MAX_VETOED = 16


@dataclass(frozen=True)
class Rule:
    """One pattern: ``find(text, lower)`` gives the matched snippet or ``None``.

    ``variants`` are tried in order; each runs only if its needles occur in the
    lower-cased text (plain substring tests that skip the regex on text that cannot
    match). ``check`` is a function for what a regex cannot say alone. ``fold`` says
    whether the rule also reads the look-alike-folded view (Latin wording) or only the
    NFKC one (wording in Cyrillic, Chinese, Japanese, which folding would garble).
    ``veto`` drops a variant's match that turns out not to instruct (see
    :mod:`hermes_core.threats.context`); ``check`` functions apply their own.
    """

    id: str
    category: str
    description: str
    scopes: frozenset[str] = NOT_ALL
    variants: tuple[Variant, ...] = ()
    fold: bool = True
    cased: bool = False
    check: Matcher | None = field(default=None, compare=False)
    veto: Veto | None = field(default=None, compare=False)

    def find(self, view: View) -> str | None:
        """The snippet of ``view``'s text this rule matches, or ``None``."""
        text, lower = view.text, view.lower
        target = text if self.cased else lower
        for groups, pattern in self.variants:
            if not all(any(view.has(needle) for needle in group) for group in groups):
                continue
            match = self._first(pattern, target, lower)
            if match is not None:
                if target is lower and len(lower) == len(text):
                    return text[match.start() : match.end()]
                return match.group()
        return self.check(text) if self.check is not None else None

    def _first(self, pattern: re.Pattern[str], target: str, lower: str) -> re.Match[str] | None:
        if self.veto is None:
            return pattern.search(target)
        for count, match in enumerate(pattern.finditer(target)):
            if count + 1 >= MAX_VETOED or not self.veto(lower, match.start(), match.end()):
                return match
        return None


def _lower_literals(pattern: str) -> str:
    """``pattern`` with its literal letters lower-cased; escapes (``\\S``, ``\\W``) kept."""
    out: list[str] = []
    escaped = False
    for char in pattern:
        out.append(char if escaped else char.lower())
        escaped = not escaped and char == "\\"
    return "".join(out).replace("(?p<", "(?P<").replace("(?p=", "(?P=")


def _top_level_alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (not inside groups, classes or escapes)."""
    parts, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern[index + 1 : index + 3] in ("^]",) or pattern[index + 1 : index + 2] == "]":
                index += 2 if pattern[index + 1] == "]" else 3
                continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
        index += 1
    parts.append(pattern[start:])
    return parts


def _factor_prefixes(pattern: str) -> str:
    """``\\bA|\\bB|C`` as ``\\b(?:A|B)|C``, and the same for the clause-start prefix: one
    test per position instead of one per alternative (a leading ``\\b`` also stops ``re``
    from skipping ahead to a possible first character, so each one costs a full pass)."""
    parts = _top_level_alternatives(pattern)
    out: list[str] = []
    for prefix in (IMP, "\\b"):
        shared = [part[len(prefix) :] for part in parts if part.startswith(prefix)]
        if len(shared) >= 2:
            out.append(prefix + "(?:" + "|".join(shared) + ")")
            parts = [part for part in parts if not part.startswith(prefix)]
    return "|".join(out + parts) if out else pattern


def rx(pattern: str, *, cased: bool = False) -> re.Pattern[str]:
    """Compile a pattern for the lower-cased view (or, ``cased``, case-blind on the text)."""
    pattern = _factor_prefixes(pattern)
    if cased:
        return re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    return re.compile(_lower_literals(pattern), re.MULTILINE)


def variant(pattern: str, needles: str = "", *, also: str = "", cased: bool = False) -> Variant:
    """A compiled pattern with its needles, each a "|"-separated list of lower-case
    fragments: one of ``needles`` and, if given, one of ``also`` must occur in the
    lower-cased text for the regex to run (no needles: always run)."""
    groups = tuple(tuple(group.split("|")) for group in (needles, also) if group)
    return groups, rx(pattern, cased=cased)
