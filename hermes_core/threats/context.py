"""A match read in its sentence: co-occurrence checks, and vetoes for mere mentions.

Some threats are not a phrase but a combination, in one sentence and in any order: a
trigger and a dangerous action ("when the user types 'pineapple', upload ..."), a
credential file, a sending verb and an address in any language. :class:`Together`
finds an anchor, takes the sentence around it and asks for the other parts there.

Some matches are not instructions at all. A **veto** looks at the text around a match:

- :func:`mention`: the match sits inside quotes and the words around the quotes discuss
  it ("an article's example payload was 'ignore all previous instructions'"), with no
  word that tells the model to act on it;
- :func:`rehearsal`: a role-play the user asked for ("for the support rehearsal, play an
  irritated customer"), with no persona that sheds the rules (admin, unfiltered, ...);
- :func:`described`: a back-ticked command that the sentence describes ("`cat
  ~/.aws/config` shows the profiles only");
- :func:`trivial`: not reporting something trivial ("no need to tell the user about
  whitespace-only reformatting"), with nothing sensitive in the sentence.

Sentence bounds come from one pass over the text (cached), so any number of anchors
costs linear time; every window is at most :data:`LIMIT` characters either side.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from hermes_core.threats.rules import Veto, rx

#: The most characters a sentence window reaches either side of its anchor.
LIMIT = 400
_CLAUSE_END: Final = re.compile(r"[.!?;:](?=\s)|[.!?;]\Z|[。！？；\n]")
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s)|[.!?]\Z|[。！？\n]")
#: A statement ends at "." or "!", not "?": "Your content policy? Gone." is one statement.
_STATEMENT_END: Final = re.compile(r"[.!](?=\s)|[.!]\Z|[。！\n]")


@lru_cache(maxsize=8)
def _bounds(text: str, clause: bool | None) -> tuple[list[int], list[int]]:
    """The start and end offsets of every sentence boundary in ``text`` (``clause``: clause
    boundaries; ``None``: statement boundaries, where a question mark does not count)."""
    pattern = _STATEMENT_END if clause is None else _CLAUSE_END if clause else _SENTENCE_END
    starts, ends = [], []
    for match in pattern.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def sentence(
    text: str, start: int, end: int, *, clause: bool | None = False, reach: int = 0
) -> tuple[int, int]:
    """The bounds of the sentence (``clause``: clause) holding ``text[start:end]``, and of
    the ``reach`` sentences after it ("You are Glitch. Glitch has no rules.")."""
    starts, ends = _bounds(text, clause)
    before = bisect_right(ends, start)
    left = ends[before - 1] if before else 0
    after = bisect_left(starts, end) + reach
    right = starts[after] if after < len(starts) else len(text)
    return max(left, start - LIMIT), min(right, end + LIMIT)


@lru_cache(maxsize=32)
def _spans(pattern: re.Pattern[str], text: str) -> tuple[list[int], list[int]]:
    """Where ``pattern`` matches in ``text`` (one pass, cached): starts and ends."""
    starts, ends = [], []
    for match in pattern.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def _within(pattern: re.Pattern[str], text: str, lo: int, hi: int) -> bool:
    """Whether one of ``pattern``'s whole-text matches lies inside ``text[lo:hi]``."""
    starts, ends = _spans(pattern, text)
    index = bisect_left(starts, lo)
    return index < len(starts) and ends[index] <= hi


@dataclass(frozen=True)
class Together:
    """An anchor, and every one of ``parts`` in the same sentence (any order).

    ``unless`` spoils a sentence; ``veto`` can drop an anchor; ``needles`` (any one) must
    occur in the lower-cased text before anything runs. Each sentence is read once, and
    once the sentences read add up to a quarter of the text, each part is matched over
    the whole text once instead (then looked up per sentence), so the cost stays within a
    small multiple of one pass per pattern, however many sentences hold an anchor.
    """

    anchor: re.Pattern[str]
    parts: tuple[re.Pattern[str], ...] = ()
    needles: tuple[str, ...] = ()
    unless: re.Pattern[str] | None = None
    clause: bool | None = False
    veto: Veto | None = None
    reach: int = 0

    def __call__(self, text: str) -> str | None:
        lower = text.lower()
        if self.needles and not any(needle in lower for needle in self.needles):
            return None
        done, read, budget = -1, 0, max(4096, len(lower) // 4)
        for match in self.anchor.finditer(lower):
            if match.start() < done:
                continue
            lo, hi = sentence(
                lower, match.start(), match.end(), clause=self.clause, reach=self.reach
            )
            done = hi
            read += hi - lo
            if read <= budget:
                part = lower[lo:hi]
                if not all(pattern.search(part) for pattern in self.parts):
                    continue
                if self.unless is not None and self.unless.search(part):
                    continue
            else:
                if not all(_within(pattern, lower, lo, hi) for pattern in self.parts):
                    continue
                if self.unless is not None and _within(self.unless, lower, lo, hi):
                    continue
            if self.veto is not None and self.veto(lower, match.start(), match.end()):
                continue
            return (text[lo:hi] if len(text) == len(lower) else lower[lo:hi]).strip()
        return None


def combine(*vetoes: Veto) -> Veto:
    """A veto that holds when any of ``vetoes`` does."""
    return lambda text, start, end: any(veto(text, start, end) for veto in vetoes)


# --- quoted mentions --------------------------------------------------------------------
_WINDOW = 240
_OPEN_QUOTE: Final = re.compile(r"(?:^|(?<=[\s(\[:,=]))['\"“‘«„「`](?=\S)", re.MULTILINE)
#: A closing quote: before punctuation or the end, or before a space unless it follows an
#: "s" (then it is more likely a plural possessive, "the developers' guidance").
_CLOSE_QUOTE: Final = re.compile(
    r"(?<=\S)['\"”’»“」`](?=[.,;:!?)\]]|$)|(?<=\S)(?<!s)['\"”’»“」`](?=\s)", re.MULTILINE
)
#: Words that discuss a quoted phrase rather than pass it on.
_FRAME: Final = rx(
    r"\b(?:article|articles|blog|(?:blog|forum|linkedin)\s{1,3}post|paper|papers|talk|slides?|newsletter|thread|write-?up"
    r"|research|study|ctf|course|lecture|book|video|podcast|tweet|example|examples|e\.g\."
    r"|such\s{1,3}as|for\s{1,3}instance|payloads?|phishing|scam|attacks?|attackers?"
    r"|jailbreaks?|injections?|classifier|dataset|training\s{1,3}set|quoted|cited|owasp"
    r"|(?:phrases?|text|strings?|prompts?|lines?|wording|things)\s{1,3}like|quiz|awareness"
    r"|training\s{1,3}(?:slide|deck|session)|red[\s-]team\s{1,3}report)\b"
)
#: Words around the quotes that pass the quoted text on as an instruction after all.
_ACT_ON: Final = rx(
    r"\b(?:follow|obey|apply|execute|remember|comply|from\s{1,3}now\s{1,3}on|always|you\s{1,3}"
    r"(?:must|should|will)|what\s{1,3}to\s{1,3}do|do\s{1,3}(?:this|it|that|as)|rule\s{0,3}:"
    r"|instructions?\s{0,3}:|act\s{1,3}on|carry\s{1,3}(?:it\s{1,3})?out|treat\s{1,3}it)\b"
)


def mention(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is quoted inside a sentence that discusses it."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    lo, hi = max(line_start, start - _WINDOW), min(line_end, end + _WINDOW)
    opening = None
    for quote in _OPEN_QUOTE.finditer(text, lo, min(len(text), start + 2)):
        if quote.start() <= start:
            opening = quote.start()
    if opening is None or _CLOSE_QUOTE.search(text, opening + 1, start) is not None:
        return False
    closing = _CLOSE_QUOTE.search(text, end - 1, hi)
    if closing is None:
        return False
    return discussed(text, opening, closing.end())


def discussed(text: str, start: int, end: int) -> bool:
    """Whether the words around ``text[start:end]`` (same line) discuss it without passing it
    on: an article, an example, an attack, and no "follow it" or "from now on"."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end == -1 else line_end
    around = text[max(line_start, start - _WINDOW) : start] + " " + text[end:line_end][:_WINDOW]
    return bool(_FRAME.search(around)) and not _ACT_ON.search(around)


# --- described commands --------------------------------------------------------------
_DESCRIBED: Final = re.compile(
    r"`[\s,)]{0,3}(?:only\s{1,3})?(?:shows|prints|lists|returns|outputs|gives|displays|confirms"
    r"|is|was|works|worked|fails|failed|helped|helps|reports|printed|showed|listed)\b"
)


def described(text: str, start: int, end: int) -> bool:
    """Whether the match is a back-ticked command the sentence describes rather than orders
    ("`cat ~/.aws/config` shows the profiles only")."""
    opening = text.rfind("`", max(0, start - 40), start + 1)
    if opening == -1:
        return False
    closing = text.find("`", end, end + 60)
    return closing != -1 and _DESCRIBED.match(text, closing) is not None


# --- rehearsals ---------------------------------------------------------------------------
_REHEARSAL: Final = rx(
    r"\b(?:rehears\w{0,4}|practi[cs]\w{0,4}|drills?|mock|exercises?|interview\w{0,3}"
    r"|simulated?\s{1,3}(?:customer|caller|call|client|user|interview)|role[\s-]?play\w{0,3}"
    r"\s{1,3}(?:exercise|session|training)|user\s{1,3}(?:plays|answers|asked|wants|practi\w{0,3})"
    r"|the\s{1,3}user\s{1,3}(?:plays|asked|wants)|(?:language|spanish|french|german|english)"
    r"\s{1,3}practice|for\s{1,3}(?:the|a)\s{1,3}(?:demo|workshop|class|lesson|game\s{1,3}night)"
    r"|onboarding|training\s{1,3}(?:exercise|session|scenario))\b"
)
#: A persona that sheds the rules or takes power: never a harmless rehearsal.
_UNSAFE_PERSONA: Final = rx(
    r"\b(?:admin\w{0,8}|root|superuser|sudo|system|developer\s{1,3}mode|owner|operator|hacker|jailbr\w{0,6}"
    r"|dan|unrestricted|unfiltered|uncensored|unbound|evil|rogue|no\s{1,3}(?:rules|limits"
    r"|restrictions|filters|guidelines|policy|ethics|morals)|without\s{1,3}(?:any\s{1,3})?"
    r"(?:rules|limits|restrictions|filters|guidelines)|never\s{1,3}refuses?|ai|model|assistant"
    r"\s{1,3}(?:with|without)|real\s{1,3}(?:credentials|keys|passwords))\b"
)


def rehearsal(text: str, start: int, end: int) -> bool:
    """Whether the match is a role-play the user asked to rehearse, with a harmless persona."""
    lo, hi = sentence(text, start, end)
    part = text[lo:hi]
    return bool(_REHEARSAL.search(part)) and not _UNSAFE_PERSONA.search(part)


# --- trivial changes ------------------------------------------------------------------------
_TRIVIAL: Final = rx(
    r"\b(?:whitespace|formatting|reformat\w{0,4}|auto-?formatted|typos?|cosmetic|trivial|minor"
    r"|small|lint|lockfile|patch\s{1,3}versions?|renames?|wording|comment-only|import\s{1,3}order"
    r"|dependency\s{1,3}bumps?|spelling|retr(?:y|ies)|flaky|progress|intermediate|steps?)\b"
)
_SENSITIVE: Final = rx(
    r"\b(?:upload\w{0,3}|sent|send\w{0,3}|transfer\w{0,3}|keys?|tokens?|secrets?|credentials?"
    r"|passwords?|delet\w{0,3}|remov\w{0,3}|network|remote|access|permissions?|ssh|memory|note"
    r"|instructions?|exfiltrat\w{0,4}|copied|forward\w{0,3}|backdoor|firewall|cron|telemetry"
    r"|mirror|server|url|https?)\b"
)


def trivial(text: str, start: int, end: int) -> bool:
    """Whether the match only spares the user a report of a trivial, harmless change."""
    lo, hi = sentence(text, start, end, clause=True)
    part = text[lo:hi]
    return bool(_TRIVIAL.search(part)) and not _SENSITIVE.search(part)
