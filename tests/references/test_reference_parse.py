"""Finding @-references: the six kinds, their values, and what is deliberately not one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core.references import find_references
from hermes_core.references.parse import MAX_GIT_COMMITS


def kinds_and_targets(text: str) -> list[tuple[str, str]]:
    return [(r.kind, r.target) for r in find_references(text)]


def test_each_kind_is_found_with_its_position() -> None:
    text = "Fix @file:src/app.py, see @folder:docs and @diff @staged @git:3 @url:https://x.org/a"
    found = find_references(text)
    assert [(r.kind, r.target) for r in found] == [
        ("file", "src/app.py"),
        ("folder", "docs"),
        ("diff", ""),
        ("staged", ""),
        ("git", "3"),
        ("url", "https://x.org/a"),
    ]
    for reference in found:
        assert text[reference.start : reference.end] == reference.raw
        assert reference.problem is None


def test_line_ranges() -> None:
    one, span, quoted = find_references('@file:a.py:7 @file:b.py:3-9 @file:"my notes.md":2-4')
    assert (one.target, one.line_range) == ("a.py", (7, 7))
    assert (span.target, span.line_range) == ("b.py", (3, 9))
    assert (quoted.target, quoted.line_range) == ("my notes.md", (2, 4))
    assert quoted.raw == '@file:"my notes.md":2-4'


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("(see @file:a.py).", "a.py"),
        ("@file:a.py, then", "a.py"),
        ("is it @file:a.py?", "a.py"),
        ('"@file:a.py"', "a.py"),
        ("@file:'with space.txt'", "with space.txt"),
        ("@file:`with space.txt`", "with space.txt"),
        ("@folder:src/", "src/"),
        ("@folder:.", "."),
        ("@url:https://x.org/a_(b)", "https://x.org/a_(b)"),
        ("[@url:https://x.org/a]", "https://x.org/a"),
    ],
)
def test_punctuation_and_quotes_around_values(text: str, target: str) -> None:
    (reference,) = find_references(text)
    assert reference.target == target


@pytest.mark.parametrize(
    "text",
    [
        "mail a@b.com or bob@file.org",
        "thanks @alice and @bob",
        "me@file:notes.txt",
        "@@diff",
        "@diffs and @stagedfiles",
        "@diff.py is a module",
        "@git without a count",
        "@file with no colon",
        "@file:",
        "path/@diff",
    ],
)
def test_emails_handles_and_lookalikes_are_not_references(text: str) -> None:
    assert find_references(text) == []


def test_sentence_end_after_a_simple_reference() -> None:
    assert kinds_and_targets("Please review @diff.") == [("diff", "")]


def test_references_inside_markdown_code_are_left_alone() -> None:
    text = (
        "Write `@file:x.py` to attach a file.\n"
        "```\n@diff\n@file:inside.py\n```\n"
        "~~~~\n@staged\n~~~~\n"
        "``double `@diff` ticks`` but @file:real.py counts"
    )
    assert kinds_and_targets(text) == [("file", "real.py")]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    assert find_references("@diff\n```\n@staged") == [find_references("@diff")[0]]


def test_an_unmatched_backtick_does_not_hide_later_references() -> None:
    assert kinds_and_targets("a stray ` then @diff") == [("diff", "")]
    assert kinds_and_targets("`open\n\n@diff `") == [("diff", "")]  # no span across paragraphs


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("@git:abc", "number of commits"),
        ("@git:0", "from 1 to"),
        (f"@git:{MAX_GIT_COMMITS + 1}", "from 1 to"),
        ("@git:²", "number of commits"),
        ("@file:a.py:9-3", "line range"),
        ("@file:a.py:0", "line range"),
    ],
)
def test_malformed_references_carry_a_problem(text: str, words: str) -> None:
    (reference,) = find_references(text)
    assert reference.problem is not None and words in reference.problem


def test_a_file_named_with_a_colon_but_no_range() -> None:
    (reference,) = find_references("@file:notes:draft.txt")
    assert (reference.target, reference.line_range) == ("notes:draft.txt", None)


def test_pathological_input_is_parsed() -> None:
    """Backtick runs and long values are handled without backtracking (this would take
    minutes with a naive pattern)."""
    text = "x " + "`" * 20_000 + " @diff " + "``a" * 20_001 + " @file:" + "a" * 100_000
    found = find_references(text)
    assert [r.kind for r in found][-1] == "file"
    assert len(found[-1].target) <= 4096


@given(st.text(alphabet="@:`.fileodrgtu \n-123\"'", max_size=200))
def test_every_reference_is_a_slice_of_the_text(text: str) -> None:
    for reference in find_references(text):
        assert text[reference.start : reference.end] == reference.raw
        assert reference.raw.startswith("@")
