"""Train the learned threat scorer from the labelled corpora; write ``threat_model.tsv``.

Run from the repository root: ``python tools/train_threat_model.py [--check]``.

Deterministic: the same corpora give the same file, byte for byte (a seeded order, no
clocks), and the header records the sha256 of the corpora it was trained on, so a test
can tell a stale model from a current one. The sealed corpora (``sealed_*.jsonl``) are
never read here: they measure the model, they do not shape it.

Method: logistic regression over the features of :mod:`hermes_core.threats.features`
plus one feature per pattern that fired (``R:<id>``), AdaGrad with L2, benign lines
weighted up (a refused harmless note costs more than a missed paraphrase). Patterns that
fired on any benign training line are *overrulable*: when only they fire, the model
may clear them in a note that discusses or quotes something (see
:func:`hermes_core.threats.decision.blocks`). Five-fold cross-validation picks the
threshold for text no pattern flags: the lowest probability at which patterns and model
together still pass :data:`PASS_TARGET` of held-out benign lines. ``--check`` exits 1
when the shipped file differs from what training writes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hermes_core.threats import scan
from hermes_core.threats.decision import (
    _pieces,
    assess,
    blocks,
    decisive_by_kind,
    without_own_notices,
)
from hermes_core.threats.features import blank_quoted, features
from hermes_core.threats.learned import (
    MODEL_FILE,
    Model,
    code_digest,
    feature_value,
    pattern_features,
    sigmoid,
    views,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "threats"
OUTPUT = ROOT / "hermes_core" / "threats" / MODEL_FILE
#: Every labelled corpus but the sealed ones, in a fixed order.
TRAINING = (
    "injection.jsonl",
    "benign.jsonl",
    "own_examples.jsonl",
    "tuning.jsonl",
    "heldout.jsonl",
    "heldout_fresh.jsonl",
    "train_a.jsonl",
    "train_b.jsonl",
    "train_c.jsonl",
    "train_d.jsonl",
    "train_e.jsonl",
    "train_f.jsonl",
    "train_g.jsonl",
    "train_h.jsonl",
    "train_i.jsonl",
)
EPOCHS = 10
RATE = 0.5
L2 = 1e-5
BENIGN_WEIGHT = 2.0
MIN_DOCS = 2
AUGMENT = False
#: Held-out benign lines the decisive patterns and the model together must pass.
PASS_TARGET = 0.98
FOLDS = 5
SEED = 11


@dataclass(frozen=True)
class Line:
    """One corpus line as the trainer sees it."""

    text: str
    injection: bool
    views: tuple[str, ...]
    patterns: tuple[str, ...]
    unquoted: tuple[str, ...]


def corpus_lines(names: Sequence[str]) -> list[Line]:
    """Every distinct text of ``names`` (the first label wins), with its views and the
    patterns that fire on it."""
    seen: dict[str, bool] = {}
    for name in names:
        with open(DATA / name, encoding="utf-8") as fh:
            for raw in fh:
                if raw.strip():
                    row = json.loads(raw)
                    benign = row.get("label", row.get("category")) == "benign"
                    seen.setdefault(row["text"], not benign)
    return [
        Line(
            text,
            injection,
            tuple(views(without_own_notices(text))),
            _fired(text),
            _fired(blank_quoted(text)),
        )
        for text, injection in seen.items()
    ]


def _fired(text: str) -> tuple[str, ...]:
    return tuple(finding.pattern_id for finding in scan(text, "strict", learned=False))


def corpora_digest(names: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(name.encode() + b"\0" + (DATA / name).read_bytes() + b"\0")
    return digest.hexdigest()


def overrulable(lines: Sequence[Line]) -> frozenset[str]:
    """The pattern ids that fired on at least one benign line (never the ones that are
    decisive by definition)."""
    fired = {pattern for line in lines if not line.injection for pattern in line.patterns}
    return frozenset(pattern for pattern in fired if not decisive_by_kind(pattern))


def _examples(lines: Sequence[Line]) -> list[tuple[str, tuple[str, ...], bool]]:
    """(text, patterns, is_injection) to fit: every line, and, since the scanner reads each
    sentence alone too, every sentence of a harmless line as harmless, and every injection
    once more behind a harmless sentence (a payload tucked after an ordinary fact)."""
    examples = [(line.views[0], line.patterns, line.injection) for line in lines]
    if not AUGMENT:
        return examples
    sentences = [
        piece
        for line in lines
        if not line.injection
        for piece in _pieces(line.views[0])
        if len(_pieces(line.views[0])) > 1
    ]
    examples += [(piece, (), False) for piece in sentences]
    pick = random.Random(SEED)
    if sentences:
        examples += [
            (f"{pick.choice(sentences)} {line.views[0]}", line.patterns, True)
            for line in lines
            if line.injection
        ]
    return examples


def train(lines: Sequence[Line], *, epochs: int = EPOCHS) -> tuple[dict[str, float], float]:
    """Weights and bias of a logistic model fitted to ``lines`` (see :func:`_examples`)."""
    examples = _examples(lines)
    wording = [features(text) for text, _, _ in examples]
    counts = Counter(name for names in wording for name in names)
    docs = [
        (
            [name for name in names if counts[name] >= MIN_DOCS],
            pattern_features(names, patterns),
            feature_value(len(names)),
            1.0 if injection else 0.0,
        )
        for names, (_, patterns, injection) in zip(wording, examples, strict=True)
    ]
    weights: dict[str, float] = {}
    squares: dict[str, float] = {}
    bias, bias_square = 0.0, 1e-8
    order = list(range(len(docs)))
    shuffle = random.Random(SEED)
    for _ in range(epochs):
        shuffle.shuffle(order)
        for index in order:
            names, hits, value, target = docs[index]
            logit = bias + value * sum(weights.get(name, 0.0) for name in names)
            logit += sum(weights.get(name, 0.0) for name in hits)
            error = (sigmoid(logit) - target) * (1.0 if target else BENIGN_WEIGHT)
            for name, scale in [(name, value) for name in names] + [(name, 1.0) for name in hits]:
                old = weights.get(name, 0.0)
                grad = error * scale + L2 * old
                squares[name] = squares.get(name, 1e-8) + grad * grad
                weights[name] = old - RATE * grad / math.sqrt(squares[name])
            bias_square += error * error
            bias -= RATE * error / math.sqrt(bias_square)
    return weights, bias


def score(model: Model, line: Line) -> float:
    """2.0 when the line is blocked whatever the threshold, -1.0 when it passes whatever
    the threshold, else the model's probability (blocked at or above the threshold): the
    decision of :func:`hermes_core.threats.decision.blocks`, as ``scan()`` takes it."""
    assessment = assess(list(line.views), line.patterns, model)
    if line.patterns:
        return 2.0 if blocks(model, line.patterns, assessment, line.unquoted) else -1.0
    return assessment.probability


def choose_threshold(scores: Sequence[float], lines: Sequence[Line]) -> float:
    """The lowest threshold at which held-out benign lines pass at :data:`PASS_TARGET`."""
    benign = sorted(
        (value for value, line in zip(scores, lines, strict=True) if not line.injection),
        reverse=True,
    )
    allowed = math.floor(len(benign) * (1 - PASS_TARGET))
    candidates = [value for value in benign[allowed:] if value <= 1.0]
    threshold = candidates[0] + 1e-6 if candidates else 0.5
    return min(max(threshold, 0.5), 0.99)


def _figures(scores: Sequence[float], lines: Sequence[Line], threshold: float) -> str:
    injections = [score for score, line in zip(scores, lines, strict=True) if line.injection]
    benign = [score for score, line in zip(scores, lines, strict=True) if not line.injection]
    blocked = sum(score >= threshold for score in injections)
    passed = sum(score < threshold for score in benign)
    return (
        f"block {blocked}/{len(injections)} ({blocked / len(injections):.1%}), "
        f"pass {passed}/{len(benign)} ({passed / len(benign):.1%})"
    )


def build() -> tuple[str, str]:
    """The model file's text, and a report of the cross-validated figures."""
    lines = corpus_lines(TRAINING)
    folds = [index % FOLDS for index in range(len(lines))]
    random.Random(SEED).shuffle(folds)
    scores = [0.0] * len(lines)
    for fold in range(FOLDS):
        rest = [line for line, other in zip(lines, folds, strict=True) if other != fold]
        weights, bias = train(rest)
        model = Model(weights, bias, 0.5, "", overrulable(rest))
        for index, line in enumerate(lines):
            if folds[index] == fold:
                scores[index] = score(model, line)
    threshold = choose_threshold(scores, lines)
    weights, bias = train(lines)
    patterns_alone = [2.0 if line.patterns else 0.0 for line in lines]
    report = (
        f"{len(lines)} lines; patterns alone: {_figures(patterns_alone, lines, 0.5)}; "
        f"{FOLDS}-fold held out, patterns + model at {threshold:.4f}: "
        f"{_figures(scores, lines, threshold)}"
    )
    header = [
        "# learned threat scorer (tools/train_threat_model.py); do not edit by hand",
        f"# trained_on: {corpora_digest(TRAINING)}",
        f"# code: {code_digest()}",
        f"# bias: {bias:.6f}",
        f"# threshold: {threshold:.6f}",
        f"# overrulable: {' '.join(sorted(overrulable(lines)))}",
        f"# cross_validated: {report}",
    ]
    body = [
        f"{name}\t{weight:.4f}" for name, weight in sorted(weights.items()) if abs(weight) >= 0.005
    ]
    return "\n".join(header + body) + "\n", report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when the shipped model is stale")
    args = parser.parse_args(argv)
    text, report = build()
    print(report)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(
                f"{OUTPUT.relative_to(ROOT)} is stale: run tools/train_threat_model.py",
                file=sys.stderr,
            )
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    weights = len(text.splitlines()) - len(header_lines(text))
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({weights} weights)")
    return 0


def header_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("# ")]


if __name__ == "__main__":
    sys.exit(main())
