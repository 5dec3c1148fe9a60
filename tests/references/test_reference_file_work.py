"""``@file:`` line ranges cost a count per chunk, share one deadline per message, and say
truly why they were cut (the review of issue 26 item 6: a range past the end of a 60 MiB
file of empty lines took seconds per reference, 16 references a message)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from reference_support import tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references, sources
from hermes_core.references.paths import Resolved, resolve_reference_path
from hermes_core.references.refusal import Refused

EMPTY_LINES = 60 * 1024 * 1024


def _resolved(workspace: Path, name: str) -> Resolved:
    return resolve_reference_path(workspace, name, user_home=Path("/nonexistent-home"))


def _expand(text: str, workspace: Path) -> Any:
    return expand_references(
        text,
        workspace=workspace,
        context_length=10_000_000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
        user_home=Path("/nonexistent-home"),
    )


def _bytes_searches(call: Any) -> int:
    """How many times ``call()`` asks a bytes object to find, index or count something."""
    seen = 0

    def profile(_frame: FrameType, event: str, arg: Any) -> None:
        nonlocal seen
        if event == "c_call" and getattr(arg, "__self__", None).__class__ is bytes:
            seen += arg.__name__ in ("find", "index", "count")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def test_a_range_past_the_end_costs_a_count_per_chunk_not_a_step_per_line(
    workspace: Path,
) -> None:
    size = 1024 * 1024  # a million empty lines, 16 chunks
    (workspace / "empty.txt").write_bytes(b"\n" * size)
    resolved = _resolved(workspace, "empty.txt")

    def read() -> None:
        with pytest.raises(Refused, match=f"has {size} lines"):
            sources.read_file_text(resolved, (size + 1, size + 5))

    chunks = size // (1 << 16)
    assert _bytes_searches(read) <= 2 * chunks


def test_a_range_in_the_middle_steps_only_to_its_ends(workspace: Path) -> None:
    size = 1024 * 1024
    (workspace / "empty.txt").write_bytes(b"\n" * (size // 2) + b"here\nthere\n" + b"\n" * size)
    resolved = _resolved(workspace, "empty.txt")
    found: list[str] = []

    def read() -> None:
        found.append(sources.read_file_text(resolved, (size // 2 + 1, size // 2 + 2)).text)

    # a count per chunk up to the range, then a step per newline up to it inside its chunk
    assert _bytes_searches(read) <= 2 * (size // 2) // (1 << 16) + (1 << 16) + 8
    assert found == ["here\nthere\n"]


def test_a_60_mib_file_of_empty_lines_counts_every_line(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "_clock", lambda: 0.0)  # time is another test's business
    with (workspace / "empty.txt").open("wb") as handle:
        for _ in range(EMPTY_LINES // (1 << 20)):
            handle.write(b"\n" * (1 << 20))
    result = _expand("@file:empty.txt:62914561-62914562", workspace)
    (warning,) = result.warnings
    assert f"has {EMPTY_LINES} lines" in warning and "past its end" in warning
    ok = sources.read_file_text(_resolved(workspace, "empty.txt"), (EMPTY_LINES, EMPTY_LINES))
    assert ok == sources.FileText("\n")


def test_one_deadline_covers_every_file_of_a_message(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk read moves the clock one second: the first file (8 chunks) fits in the 10
    s, the second would have its own 10 s if each file had its own deadline."""
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_bytes(b"\n" * (8 << 16))
    ticks = itertools.count()
    monkeypatch.setattr(sources, "_clock", lambda: float(next(ticks)))
    last = 8 << 16
    result = _expand(f"@file:a.txt:{last}-{last} and @file:b.txt:{last}-{last}", workspace)
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(f"@file:b.txt:{last}-{last} was not attached")
    assert "reading took more than 10 s" in result.warnings[0]
    assert f"@file:a.txt (lines {last}-{last})" in result.attached


def test_the_cut_warning_says_why(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", 1 << 16)
    from hermes_core.references import expand as expand_module

    monkeypatch.setattr(expand_module, "MAX_FILE_BYTES", 1 << 16)
    (workspace / "short.txt").write_bytes(b"a short line\n" * 20_000)
    (workspace / "long.txt").write_bytes(b"x" * (1 << 17) + b"\n")
    (short,) = _expand("@file:short.txt:1-20000", workspace).warnings
    assert "the range holds more" in short and "line that long" not in short
    assert "longer than" not in short
    (long,) = _expand("@file:long.txt:1-1", workspace).warnings
    assert "its first line is longer than that" in long
