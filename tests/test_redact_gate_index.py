"""The gate index opens exactly the rules that testing each gate in turn opens.

Issue 27 item 12: :func:`hermes_core.redact._open_rules` finds the open rules with one test per
distinct literal and gate pattern instead of one :meth:`_Gate.opens` call per rule (redaction
was a fifth of a cold compress). Which rules open decides what is redacted, so the index must
agree with the per-rule definition on every text: real transcript text, every gate literal
alone and inside text, upper-cased, full-width and non-ASCII variants.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core import redact as redaction
from hermes_core.redact import _ascii_folded, _open_rules

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "tests" / "data" / "transcripts"


def _per_rule(text: str) -> list[str]:
    folded = _ascii_folded(text)
    lowered = folded.lower()
    return [rule[0] for rule in redaction._RULES if rule[3].opens(lowered, folded)]


def _indexed(text: str) -> list[str]:
    return [rule[0] for rule in _open_rules(_ascii_folded(text))]


def _transcript_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(TRANSCRIPTS.glob("*.json")):
        for message in json.loads(path.read_text(encoding="utf-8")):
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            for call in message.get("tool_calls") or ():
                texts.append(str(call.get("function", {}).get("arguments", "")))
    return texts


def _gate_texts() -> list[str]:
    texts: list[str] = []
    for rule in redaction._RULES:
        gate = rule[3]
        for literal in gate.literals:
            full_width = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in literal)
            texts += [literal, f"see {literal.upper()}x here", f"a {full_width} b"]
    texts += [
        "password: hunter2",
        "Passwort: geheim",
        "密码：secret123",
        "net   use \\\\host /user:x pass",
        "--api-token abc",
        "user:$apr1$abc",
        "host:5432:db:user:pw:",
        "x" * 500 + " token=abcdef",
        "ＡＫＩＡ" + "A" * 16,
        "aws " + "A1b2/" * 8,
    ]
    return texts


@pytest.mark.parametrize("source", ["transcripts", "gates"])
def test_index_opens_the_rules_each_gate_opens(source: str) -> None:
    texts = _transcript_texts() if source == "transcripts" else _gate_texts()
    assert texts
    opened = 0
    for text in texts:
        expected = _per_rule(text)
        assert _indexed(text) == expected, text[:200]
        opened += bool(expected)
    assert opened  # the corpus does open gates, so the comparison means something


def test_only_texts_without_a_secret_are_remembered() -> None:
    """Short texts that held no secret are remembered (repeats skip the gates); a text that
    held one never is, so no secret outlives its call in the module."""
    secret = "export OPENAI_API_KEY=sk-proj-" + "a1B2c3D4" * 6
    clean = "ran the tests: 12 passed in 0.41s"
    for _ in range(2):
        assert redaction.redact(clean) == clean
        assert "[REDACTED:" in redaction.redact(secret)
    assert clean in redaction._CLEAN
    assert secret not in redaction._CLEAN
    assert not any("sk-proj-" in text for text in redaction._CLEAN)
