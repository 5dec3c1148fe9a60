"""A learned second opinion: a linear scorer over words and word pieces, shipped as data.

The patterns catch what they were written for; on material nobody tuned them on, the
misses are paraphrases, other languages and new framings. A logistic model over the
features of :mod:`hermes_core.threats.features`, trained offline on the project's labelled
corpora (``tools/train_threat_model.py``, deterministic), weighs all of the wording at
once and so carries over to sentences it has not seen. It runs only in the ``strict``
scope (text that becomes part of every future prompt); what it may decide is in
:mod:`hermes_core.threats.decision`.

The weights are a plain text file beside this module (``threat_model.tsv``: a few header
lines, then ``feature<TAB>weight``), read once on first use, so importing
:mod:`hermes_core` stays cheap. Scoring is a dictionary lookup per feature: linear in the
input, no I/O after the first call.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Final

from hermes_core.threats import decode, obfuscation, unicode
from hermes_core.threats.features import features

MODEL_FILE: Final = "threat_model.tsv"
#: The modules whose code shapes the features and the decision the threshold was chosen
#: for: the model records their digest, and a model
#: trained on other code is stale.
FEATURE_CODE: Final = ("features.py", "concepts.py", "learned.py", "decision.py")


@dataclass(frozen=True)
class Model:
    """Weights, bias and the decision threshold (a probability) of the learned scorer.

    ``overrulable`` are the pattern ids that also fired on harmless training lines and are
    not decisive by kind (see :mod:`hermes_core.threats.decision`). Pattern hits are
    features too (``R:<id>``), beside the wording.
    """

    weights: dict[str, float]
    bias: float
    threshold: float
    trained_on: str
    overrulable: frozenset[str] = frozenset()
    code: str = ""

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
        return sigmoid(self.logit(lower, patterns))


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


def sigmoid(value: float) -> float:
    """The logistic function, safe from overflow on either side."""
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: {text!r} is not a finite number")
    return value


def parse_model(text: str) -> Model:
    """A :class:`Model` from the text of a model file; ``ValueError`` when malformed (a
    missing header, a line that is not ``feature<TAB>weight``, a number that is not finite,
    a feature listed twice, a threshold outside (0, 1)). A broken file must fail loudly:
    a NaN would silently make every probability pass."""
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
        if not tab or not name:
            raise ValueError(f"line {number}: expected 'feature<TAB>weight'")
        if name in weights:
            raise ValueError(f"line {number}: feature {name!r} is listed twice")
        weights[name] = _number(weight, f"line {number}")
    try:
        bias, threshold = header["bias"], header["threshold"]
        trained_on = header["trained_on"]
    except KeyError as missing:
        raise ValueError(f"model header lacks {missing}") from None
    probability = _number(threshold, "threshold")
    if not 0.0 < probability < 1.0:
        raise ValueError(f"threshold: {probability} is not a probability strictly between 0 and 1")
    return Model(
        weights,
        _number(bias, "bias"),
        probability,
        trained_on,
        frozenset(header.get("overrulable", "").split()),
        header.get("code", ""),
    )


@lru_cache(maxsize=1)
def shipped_model() -> Model:
    """The model shipped with the package, read on first use."""
    source = resources.files("hermes_core.threats").joinpath(MODEL_FILE)
    return parse_model(source.read_text(encoding="utf-8"))


def code_digest() -> str:
    """The sha256 of the modules in :data:`FEATURE_CODE`, as the model header records it."""
    digest = hashlib.sha256()
    package = resources.files("hermes_core.threats")
    for name in FEATURE_CODE:
        digest.update(name.encode() + b"\0" + package.joinpath(name).read_bytes() + b"\0")
    return digest.hexdigest()


def views(content: str) -> list[str]:
    """The forms of ``content`` the scorer reads, as the patterns read them: hidden
    characters removed, whitespace collapsed, NFKC, look-alikes folded, lower-cased; the
    digits-for-letters reading when the text has such tricks; and the same for every
    base64 or rot13 payload the decoder finds."""
    forms = _forms(content)
    for payload in decode.base64_payloads(content):
        forms += _forms(payload)
    rot13 = decode.rot13_payload(content)
    if rot13 is not None:
        forms += _forms(rot13)
    return forms


def _forms(content: str) -> list[str]:
    clean = obfuscation.collapse(unicode.strip_hidden(content))
    lower = unicode.fold(unicode.nfkc(clean)).lower()
    leet = obfuscation.unleet(lower)
    return [lower] if leet is None or leet == lower else [lower, leet]
