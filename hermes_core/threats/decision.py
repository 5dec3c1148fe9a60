"""What the learned scorer may decide, and on which pieces of the text.

Three cases, in ``strict`` scope (:func:`blocks`):

- A **decisive** pattern fired: blocked, whatever the scorer says. Decisive are the
  patterns that never fired on a harmless training line, and always, by kind, those that
  act rather than talk (exfiltration, command and control, persistence, reading secrets,
  stored secrets, hidden markup, hidden or disguised characters, chat-template tokens):
  no framing makes such an entry safe to keep in every prompt.
- Only **overrulable** patterns fired (wording that also fired on harmless notes):
  blocked, unless the model finds the whole harmless (below :data:`VETO_BELOW`) *and*
  either every pattern is soft (:data:`SOFT_IDS`: a role-play the user asked for, a
  trivial change not reported, out-of-date instructions) or the note discusses something
  (an article, a talk, a red-team report) and every match lies inside a quotation: the
  quoted attack in a note about an article. A bare order inside a discussion, or an order
  next to a quotation, stays blocked.
- **Nothing** fired: blocked as ``learned_injection`` when the model's probability, over
  the text whole, each sentence alone and runs of sentences, reaches its threshold. So a
  payload after a harmless sentence, or deep in a long note, is read on its own.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Final

from hermes_core.threats.catalog import ALL_RULES
from hermes_core.threats.features import features
from hermes_core.threats.learned import Model, shipped_model

#: Pattern ids decisive by kind, whatever the training data says.
DECISIVE_IDS: Final = frozenset(
    {"override_system_prompt", "override_translate_execute", "encoded_payload", "oversized_input"}
)
#: Categories whose patterns are decisive by kind.
DECISIVE_CATEGORIES: Final = frozenset({"hardcoded_secret", "invisible_unicode", "homoglyph"})
#: Wording that is harmless as often as not in a memory note (a role-play the user asked
#: for, a trivial change not reported, out-of-date instructions): the model may clear
#: these without a quotation or a discussion around them.
SOFT_IDS: Final = frozenset(
    {"role_pretend", "role_act_as", "deception_hide_from_user", "override_revoked"}
)
#: Below this probability the model clears overrulable findings in a note about an attack.
VETO_BELOW: Final = 0.3
#: The fewest words in a window the scorer reads: one word ("all", "yes") orders nothing,
#: whatever its weight.
MIN_WORDS: Final = 2
#: Our own words in a memory snapshot (spec 20 §5: the placeholder of a blocked entry). The
#: sentence addresses the agent, so the model would flag it; it is removed, verbatim and
#: nothing else, before the model reads a text.
OWN_NOTICES: Final = ("Removed from the system prompt; use memory remove to delete the original.",)
#: Runs of sentences are about this long; a longer sentence is cut at spaces.
WINDOW_CHARS: Final = 600
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;。！？；])\s{1,200}|\n{1,200}")


def without_own_notices(text: str) -> str:
    """``text`` without the fixed sentences of :data:`OWN_NOTICES`."""
    for notice in OWN_NOTICES:
        if notice in text:
            text = text.replace(notice, "")
    return text


def decisive_by_kind(pattern_id: str) -> bool:
    """Whether a finding of ``pattern_id`` always blocks (see the module docstring)."""
    rule = ALL_RULES.get(pattern_id)
    return pattern_id in DECISIVE_IDS or rule is None or rule.category in DECISIVE_CATEGORIES


def overrulable(model: Model, pattern_id: str) -> bool:
    """Whether the scorer may have a say on a finding of ``pattern_id``."""
    return pattern_id in model.overrulable and not decisive_by_kind(pattern_id)


def _pieces(lower: str) -> list[str]:
    """The sentences of ``lower``, a sentence longer than :data:`WINDOW_CHARS` cut at spaces."""
    pieces: list[str] = []
    for sentence in _SENTENCE_END.split(lower):
        rest = sentence
        while len(rest) > WINDOW_CHARS:
            cut = rest.rfind(" ", WINDOW_CHARS // 2, WINDOW_CHARS)
            cut = cut if cut > 0 else WINDOW_CHARS
            pieces.append(rest[:cut])
            rest = rest[cut:]
        if rest.strip():
            pieces.append(rest)
    return pieces


def windows(lower: str) -> list[str]:
    """``lower`` whole, each sentence alone (when there are several), and, when it is
    long, runs of whole sentences of about :data:`WINDOW_CHARS` characters overlapping by
    one sentence. Each sentence is read at most four times: linear."""
    out = [lower]
    pieces = _pieces(lower)
    if len(pieces) < 2:
        return out
    out += pieces
    if len(lower) <= WINDOW_CHARS:
        return out
    current: list[str] = []
    size = 0
    for piece in pieces:
        if size + len(piece) > WINDOW_CHARS and len(current) > 1:
            out.append(" ".join(current))
            current, size = current[-1:], len(current[-1])
        current.append(piece)
        size += len(piece)
    if len(current) > 1:
        out.append(" ".join(current))
    return out


@dataclass(frozen=True)
class Assessment:
    """The scorer's reading of one text: its highest probability, the window that got it,
    and whether the text reads as a note *about* something."""

    probability: float
    window: str
    discussed: bool


def assess(
    views: list[str], patterns: Iterable[str] = (), model: Model | None = None
) -> Assessment:
    """The highest probability over every window of every view, given the ``patterns``
    that fired."""
    model = model or shipped_model()
    fired = tuple(patterns)
    best, best_window, discussed = 0.0, "", False
    for view in views:
        discussed = discussed or "C:about" in features(view)
        for window in windows(view):
            if len(window.split()) < MIN_WORDS:
                continue
            probability = model.probability(window, fired)
            if probability >= best:
                best, best_window = probability, window
    return Assessment(best, best_window, discussed)


def blocks(
    model: Model,
    patterns: Iterable[str],
    assessment: Assessment,
    unquoted: Collection[str] = (),
) -> bool:
    """The decision (see the module docstring). ``unquoted`` are the patterns that still
    fire once every quoted span is blanked out."""
    fired = tuple(patterns)
    if any(not overrulable(model, pattern) for pattern in fired):
        return True
    if fired:
        if assessment.probability >= VETO_BELOW:
            return True
        if all(pattern in SOFT_IDS for pattern in fired):
            return False
        return not (assessment.discussed and not set(fired) & set(unquoted))
    return assessment.probability >= model.threshold
