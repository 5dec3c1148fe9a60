"""docs/memory.md "Provenance" says what the code does: the numbers it states are the code's,
and the claims the review found overstated are gone."""

from __future__ import annotations

from pathlib import Path

from hermes_core.provenance.marks import normalise
from hermes_core.provenance.taint import CHUNK, HISTORY_UNITS, K

DOC = Path(__file__).resolve().parents[2] / "docs" / "memory.md"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Provenance")
    return " ".join(text[start : text.index("\n## ", start + 1)].split())


def test_the_numbers_in_the_section_are_the_codes() -> None:
    text = section()
    assert f"the last {HISTORY_UNITS} words this session wrote" in text
    assert f"at most {HISTORY_UNITS} words land" in text
    assert f"with {K - 1} words of the file on either side" in text
    assert f"A write of {K} words or fewer is judged by its marks only" in text
    assert f"pieces of {CHUNK:,} characters" in text


def test_overstated_claims_are_gone() -> None:
    text = section()
    assert "shorter than 5 words is judged by its marks only" not in text
    assert "approving judges the write again" not in text
    assert "Every decision" not in text
    # "invisible characters removed" is said precisely, and is what normalise does
    assert "variation selectors" in text
    assert normalise("pa\ufe0fy\u034fme\u3164nt") == "payment"
