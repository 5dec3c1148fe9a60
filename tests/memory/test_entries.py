"""The `§` format: parse, render, round trip, usage (pure functions)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hermes_core.memory.entries import (
    parse_entries,
    render_entries,
    round_trips,
    size_of,
    usage_text,
)


def test_parse_strips_drops_empties_and_duplicates() -> None:
    text = "  one \n§\n\n§\ntwo\nlines\n§\none\n§\n"
    assert parse_entries(text) == ["one", "two\nlines"]


def test_bare_section_sign_inside_an_entry_survives() -> None:
    entry = "costs § 12 apply\n  § indented is fine"
    assert parse_entries(render_entries(["a", entry])) == ["a", entry]


def test_bom_and_windows_line_ends_are_tolerated() -> None:
    assert parse_entries("\ufeffa\r\n§\r\nb") == ["a", "b"]
    assert round_trips("\ufeffa\n§\nb")
    assert not round_trips("a\r\n§\r\nb")  # parsed fine, but not what we would write


def test_round_trip_detects_hand_edits() -> None:
    assert round_trips("")
    assert round_trips("a\n§\nb")
    assert round_trips("a\n§\nb\n")  # one final newline from an editor is fine
    assert not round_trips("a\n§\nb\nappended by a shell\n\n")
    assert not round_trips("a\n§\na")  # a duplicate
    assert not round_trips(" a")


def test_size_counts_delimiters_and_usage_text() -> None:
    assert size_of(["ab", "cd"]) == 7
    assert usage_text(1386, 2200) == "63% — 1,386/2,200 chars"
    assert usage_text(0, 1375) == "0% — 0/1,375 chars"


_ENTRY = (
    st.text(min_size=1, max_size=40)
    .map(str.strip)
    .filter(
        lambda e: (
            bool(e) and "§" not in e.split("\n") and "\r" not in e and not e.startswith("\ufeff")
        )  # the store strips it: a file's first BOM is not text
    )
)


@given(st.lists(_ENTRY, max_size=12, unique=True))
def test_render_then_parse_is_the_identity(entries: list[str]) -> None:
    text = render_entries(entries)
    assert parse_entries(text) == entries
    assert round_trips(text)
