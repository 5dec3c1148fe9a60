"""Long text is counted in pieces: tiktoken's pre-tokenizer panics (a stack overflow, not an
error) on a run of about a million spaces, and the pieces are cut where the whole text's
tokens are cut too, so the count stays what one call would give."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_core.tokens import get_counter
from hermes_core.tokens.counters import text_pieces

SAMPLE = Path(__file__).parents[1] / "data" / "transcripts" / "coding-200turns.json"


def test_a_million_spaces_is_counted_not_a_panic() -> None:
    counter = get_counter(None, "tiktoken")
    assert counter.count_text(" " * 1_000_000) > 0
    assert counter.count_text("\n" * 1_000_000) > 0


def test_pieces_cut_before_a_space_between_words() -> None:
    text = json.dumps(json.loads(SAMPLE.read_text())) * 2
    pieces = text_pieces(text, 10_000)
    assert "".join(pieces) == text and all(len(p) <= 10_000 for p in pieces)
    assert all(p.startswith(" ") and not p[1].isspace() for p in pieces[1:] if p[0] == " ")
    counter = get_counter(None, "tiktoken")
    whole = len(counter._encoding.encode_ordinary(text))  # type: ignore[attr-defined]
    assert abs(counter.count_text(text) - whole) <= len(text) // 100_000 + 1
    assert text_pieces(" " * 25, 10) == [" " * 10, " " * 10, " " * 5]
