"""Blocked and passed figures of the built-in scanner on every threat corpus, per category.

Run from the repository root:
``python tests/threats/corpus_figures.py [--misses] [--patterns] [NAME ...]`` (names as in
:data:`CORPORA`; default all). ``--misses`` lists the lines that were missed (a blocked
benign line shows the pattern ids); never use it on a sealed set, whose lines must not be
tuned on. ``--patterns`` scores the patterns alone, without the learned scorer. The corpus
tests import :func:`figures`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hermes_core.threats import scan

DATA = Path(__file__).resolve().parent.parent / "data" / "threats"
#: Corpus name -> file. Lines are malicious unless ``label`` is "benign" or, without a
#: label, ``category`` is "benign".
CORPORA = {
    "injection": "injection.jsonl",
    "benign": "benign.jsonl",
    "own_examples": "own_examples.jsonl",
    "tuning": "tuning.jsonl",
    "heldout": "heldout.jsonl",
    "heldout_fresh": "heldout_fresh.jsonl",
    "train_a": "train_a.jsonl",
    "train_b": "train_b.jsonl",
    "train_c": "train_c.jsonl",
    "train_d": "train_d.jsonl",
    "train_e": "train_e.jsonl",
    "train_f": "train_f.jsonl",
    "train_g": "train_g.jsonl",
    "train_h": "train_h.jsonl",
    "train_i": "train_i.jsonl",
    # two more writers (issue 26), not trained on yet: measured, a second view of how the
    # scanner does on a writer it never learned from (a tuning round read their misses, so
    # they are no sealed sets)
    "train_j": "train_j.jsonl",
    "train_k": "train_k.jsonl",
    "sealed_a": "sealed_a.jsonl",
    "sealed_b": "sealed_b.jsonl",
    "sealed_c": "sealed_c.jsonl",
}
#: Written for the learned scorer and never trained or tuned on: the honest measure.
SEALED = ("sealed_a", "sealed_b", "sealed_c")


def rows(name: str) -> list[dict[str, str]]:
    """The lines of a corpus file (a name from :data:`CORPORA` or a file name)."""
    with open(DATA / CORPORA.get(name, name), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def is_benign(row: dict[str, str]) -> bool:
    return row.get("label", row.get("category")) == "benign"


@dataclass
class Figures:
    """How many malicious lines were blocked and benign lines passed, per category."""

    blocked: Counter[str] = field(default_factory=Counter)
    malicious: Counter[str] = field(default_factory=Counter)
    passed: int = 0
    benign: int = 0
    misses: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def blocked_total(self) -> int:
        return sum(self.blocked.values())

    @property
    def malicious_total(self) -> int:
        return sum(self.malicious.values())

    def line(self, name: str) -> str:
        parts = [name]
        if self.malicious_total:
            rate = self.blocked_total / self.malicious_total
            parts.append(f"blocked {self.blocked_total}/{self.malicious_total} ({rate:.1%})")
        if self.benign:
            parts.append(f"passed {self.passed}/{self.benign} ({self.passed / self.benign:.1%})")
        return "  ".join(parts)


def figures(name: str, scope: str = "strict", *, learned: bool = True) -> Figures:
    """Scan every line of a corpus in ``scope`` and count (``learned=False``: patterns only)."""
    result = Figures()
    for row in rows(name):
        found = scan(row["text"], scope, learned=learned)
        if is_benign(row):
            result.benign += 1
            result.passed += not found
            if found:
                hit = ",".join(finding.pattern_id for finding in found)
                result.misses.append((row.get("category", "benign"), hit, row["text"]))
        else:
            category = row.get("category", "?")
            result.malicious[category] += 1
            result.blocked[category] += bool(found)
            if not found:
                result.misses.append((category, "missed", row["text"]))
    return result


def main(argv: list[str]) -> int:
    show = "--misses" in argv
    learned = "--patterns" not in argv
    names = [arg for arg in argv if not arg.startswith("--")] or list(CORPORA)
    if show and set(names) & set(SEALED):
        print("refusing --misses on a sealed set: its lines must not be seen", file=sys.stderr)
        return 2
    for name in names:
        result = figures(name, learned=learned)
        print(result.line(name))
        if len(result.malicious) > 1:
            for category in sorted(result.malicious):
                print(f"    {category:24} {result.blocked[category]}/{result.malicious[category]}")
        if show:
            for category, hit, text in result.misses:
                print(f"  - [{category}] {hit}: {text!r}"[:400])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
