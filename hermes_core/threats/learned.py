"""A learned second opinion: a linear scorer over words and word pieces, shipped as data.

The patterns catch what they were written for; on material nobody tuned them on, the
misses are paraphrases, other languages and new framings. A logistic model over the
features of :mod:`hermes_core.threats.features`, trained offline on the project's labelled
corpora (``tools/train_threat_model.py``, deterministic), weighs all of the wording at
once and so carries over to sentences it has not seen. It runs only in the ``strict``
scope (text that becomes part of every future prompt) and only when no pattern fired.

The weights are a plain text file beside this module (``threat_model.tsv``: a few header
lines, then ``feature<TAB>weight``), read once on first use, so importing
:mod:`hermes_core` stays cheap. Scoring is a dictionary lookup per feature: linear in the
input, no I/O after the first call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Final

from hermes_core.threats import obfuscation, unicode
from hermes_core.threats.features import features

MODEL_FILE: Final = "threat_model.tsv"
#: Texts longer than this many characters are scored in windows of sentences as well as
#: whole, so a payload tucked into a long note is not diluted by the rest.
_WINDOW_CHARS: Final = 600
#: Features that mark a note about something (an article, a talk, a red-team report) or
#: a quotation; with one, the model may clear an overrulable pattern's finding.
DISCUSSION_MARKS: Final = frozenset({"C:about", "Q:quoted"})
#: Below this probability the model clears overrulable findings in such a note.
VETO_BELOW: Final = 0.5
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;。！？；])\s{1,200}|\n{1,200}")


#: Findings no score overrules: a stored secret, hidden or disguised characters, unread
#: excess. Memory must never hold these, however harmless the words around them.
ALWAYS_DECISIVE: Final = frozenset(
    {
        "hardcoded_key_shape",
        "hardcoded_secret_assignment",
        "invisible_unicode",
        "bidi_control",
        "unicode_tag",
        "homoglyph_confusable",
        "homoglyph_compat",
        "homoglyph_leetspeak",
        "homoglyph_mixed_script",
        "encoded_payload",
        "oversized_input",
    }
)


@dataclass(frozen=True)
class Model:
    """Weights, bias and the decision threshold (a probability) of the learned scorer.

    ``overrulable`` are the pattern ids that also fired on harmless training lines: when
    only these fired, the scorer has the last word (their hits are features, ``R:<id>``,
    beside the wording). Any other pattern is decisive on its own.
    """

    weights: dict[str, float]
    bias: float
    threshold: float
    trained_on: str
    overrulable: frozenset[str] = frozenset()

    def logit(self, lower: str, patterns: Iterable[str] = ()) -> float:
        """The raw score of one lower-cased, normalised text, given the patterns that fired.

        Wording features count ``1/sqrt(n)`` each (``n`` features in all), so a long
        harmless note is not condemned by its length; pattern hits count whole."""
        get = self.weights.get
        names = features(lower)
        wording = sum(get(name, 0.0) for name in names)
        hits = sum(get(name, 0.0) for name in pattern_features(names, patterns))
        return self.bias + feature_value(len(names)) * wording + hits

    def probability(self, lower: str, patterns: Iterable[str] = ()) -> float:
        """The probability, by the model, that ``lower`` is an injection."""
        return _sigmoid(self.logit(lower, patterns))


def pattern_features(names: set[str], patterns: Iterable[str]) -> list[str]:
    """One feature per pattern that fired (``R:<id>``), and the same again when the text
    reads as a note *about* something (``RA:``) or quotes a span (``RQ:``), so the model
    can learn which patterns a discussion or a quotation defuses."""
    marks = [prefix for prefix, name in (("RA:", "C:about"), ("RQ:", "Q:quoted")) if name in names]
    out = []
    for pattern in dict.fromkeys(patterns):
        out.append("R:" + pattern)
        out.extend(mark + pattern for mark in marks)
    return out


def feature_value(count: int) -> float:
    """The value of each wording feature in a text of ``count`` features."""
    return 1.0 / math.sqrt(count) if count else 1.0


def _sigmoid(value: float) -> float:
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


def parse_model(text: str) -> Model:
    """A :class:`Model` from the text of a model file; ``ValueError`` when malformed."""
    header: dict[str, str] = {}
    weights: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if line.startswith("# "):
            key, _, value = line[2:].partition(": ")
            header[key] = value
            continue
        name, tab, weight = line.partition("\t")
        if not tab:
            raise ValueError(f"line {number}: expected 'feature<TAB>weight'")
        weights[name] = float(weight)
    try:
        return Model(
            weights,
            float(header["bias"]),
            float(header["threshold"]),
            header["trained_on"],
            frozenset(header.get("overrulable", "").split()) - ALWAYS_DECISIVE,
        )
    except KeyError as missing:
        raise ValueError(f"model header lacks {missing}") from None


@lru_cache(maxsize=1)
def shipped_model() -> Model:
    """The model shipped with the package, read on first use."""
    source = resources.files("hermes_core.threats").joinpath(MODEL_FILE)
    return parse_model(source.read_text(encoding="utf-8"))


def views(content: str) -> list[str]:
    """The forms of ``content`` the scorer reads, as the patterns read them: hidden
    characters removed, whitespace collapsed, NFKC, look-alikes folded, lower-cased; and
    the digits-for-letters reading when the text has such tricks."""
    clean = obfuscation.collapse(unicode.strip_hidden(content))
    lower = unicode.fold(unicode.nfkc(clean)).lower()
    leet = obfuscation.unleet(lower)
    return [lower] if leet is None or leet == lower else [lower, leet]


def windows(lower: str) -> list[str]:
    """``lower`` whole and, when it is long, as runs of whole sentences of about
    :data:`_WINDOW_CHARS` characters (each sentence is in one or two runs: linear)."""
    if len(lower) <= _WINDOW_CHARS:
        return [lower]
    out = [lower]
    current: list[str] = []
    size = 0
    for sentence in _SENTENCE_END.split(lower):
        if size + len(sentence) > _WINDOW_CHARS and current:
            out.append(" ".join(current))
            current, size = current[-1:], len(current[-1])
        current.append(sentence[: _WINDOW_CHARS * 2])
        size += len(sentence)
    if len(current) > 1 or not out[1:]:
        out.append(" ".join(current))
    return out


@dataclass(frozen=True)
class Assessment:
    """The scorer's reading of one text: its highest probability, the window that got it,
    and whether the text reads as a note *about* something or quotes a span."""

    probability: float
    window: str
    discussed: bool


def assess(
    views: list[str], patterns: Iterable[str] = (), model: Model | None = None
) -> Assessment:
    """The highest probability over every window of every view, given the ``patterns``
    that fired."""
    model = model or shipped_model()
    patterns = tuple(patterns)
    best, best_window, discussed = 0.0, "", False
    for view in views:
        discussed = discussed or bool(DISCUSSION_MARKS & features(view[: _WINDOW_CHARS * 4]))
        for window in windows(view):
            probability = model.probability(window, patterns)
            if probability >= best:
                best, best_window = probability, window
    return Assessment(best, best_window, discussed)


def blocks(model: Model, patterns: Iterable[str], assessment: Assessment) -> bool:
    """The decision. A decisive pattern blocks. Overrulable patterns block unless the text
    discusses or quotes something and the model finds it harmless (below
    :data:`VETO_BELOW`): the quoted attack in a note about an article. With no pattern,
    the model blocks at its threshold."""
    fired = tuple(patterns)
    if any(pattern not in model.overrulable for pattern in fired):
        return True
    if fired:
        return not (assessment.discussed and assessment.probability < VETO_BELOW)
    return assessment.probability >= model.threshold
