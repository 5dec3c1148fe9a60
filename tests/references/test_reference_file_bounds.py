"""``@file:`` reads are bounded in bytes and time, whatever the shape of the file (issue 26
item 6: ``@file:x:1-1`` on a file that is one 300 MB line read all of it)."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest
from reference_support import tokens_by_length

from hermes_core.config.settings import ReferencesSettings
from hermes_core.references import expand_references, sources
from hermes_core.references.paths import Resolved, resolve_reference_path
from hermes_core.references.refusal import Refused

KEEP = 64 * 1024  # the attachment bound, made small so the test file can stay small
SCAN = 256 * 1024
HUGE = 8 * 1024 * 1024  # one line 128 times the bound


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", KEEP)
    monkeypatch.setattr(sources, "MAX_SCAN_BYTES", SCAN)


def _read_so_far(fd: int) -> int:
    return os.lseek(fd, 0, os.SEEK_CUR)


def _huge_line(workspace: Path, *, then: bytes = b"") -> Path:
    path = workspace / "one-line.txt"
    with path.open("wb") as handle:
        handle.write(b"x" * HUGE + then)
    return path


def _resolved(workspace: Path, name: str) -> Resolved:
    return resolve_reference_path(workspace, name, user_home=Path("/nonexistent-home"))


@pytest.mark.usefixtures("bounded")
def test_a_range_on_one_huge_line_reads_and_keeps_only_the_bound(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _huge_line(workspace)
    duplicates: list[int] = []
    real = sources.open_inside

    def spied(resolved: Resolved, **kwargs: bool) -> int:
        fd = real(resolved, **kwargs)
        duplicates.append(os.dup(fd))
        return fd

    monkeypatch.setattr(sources, "open_inside", spied)
    tracemalloc.start()
    try:
        read = sources.read_file_text(_resolved(workspace, "one-line.txt"), (1, 1))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (dup,) = duplicates
    consumed = _read_so_far(dup)
    os.close(dup)
    assert consumed <= KEEP + 64 * 1024  # the bound and one chunk, not 8 MiB
    assert peak < 1024 * 1024
    assert read.cut and read.text == "x" * KEEP


@pytest.mark.usefixtures("bounded")
def test_a_later_line_behind_a_huge_first_line_is_refused_after_the_scan_bound(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _huge_line(workspace, then=b"\nsecond line\n")
    tracemalloc.start()
    try:
        with pytest.raises(Refused, match="lies more than"):
            sources.read_file_text(_resolved(workspace, "one-line.txt"), (2, 2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024  # line 1 was passed over in chunks, never held


@pytest.mark.usefixtures("bounded")
def test_the_attachment_says_it_was_cut(workspace: Path) -> None:
    _huge_line(workspace)
    result = expand_references(
        "what is in @file:one-line.txt:1-1",
        workspace=workspace,
        context_length=10_000_000,
        count_tokens=tokens_by_length,
        settings=ReferencesSettings(),
        user_home=Path("/nonexistent-home"),
    )
    assert "x" * KEEP in result.attached and "x" * (KEEP + 1) not in result.attached
    (warning,) = result.warnings
    assert warning.startswith("@file:one-line.txt:1-1: only the first") and "cut" in warning


def test_ranges_still_count_lines_as_before(workspace: Path) -> None:
    (workspace / "a.txt").write_bytes(b"one\ntwo\nthree")
    (workspace / "b.txt").write_bytes(b"one\ntwo\n")
    (workspace / "empty.txt").write_bytes(b"")
    a = _resolved(workspace, "a.txt")
    assert sources.read_file_text(a, (2, 3)).text == "two\nthree"
    assert sources.read_file_text(a, (1, 1)) == sources.FileText("one\n", cut=False)
    with pytest.raises(Refused, match="has 3 lines"):
        sources.read_file_text(a, (4, 5))
    with pytest.raises(Refused, match="has 2 lines"):
        sources.read_file_text(_resolved(workspace, "b.txt"), (3, 3))
    with pytest.raises(Refused, match="has 0 lines"):
        sources.read_file_text(_resolved(workspace, "empty.txt"), (1, 1))
    assert sources.read_file_text(_resolved(workspace, "b.txt"), None).text == "one\ntwo\n"


def test_a_read_that_takes_too_long_is_stopped(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time is bounded too (a slow or hung file system); the clock is moved by hand."""
    (workspace / "slow.txt").write_bytes(b"line\n" * 100_000)  # several chunks
    ticks = iter(range(0, 10_000, 6))
    monkeypatch.setattr(sources, "_clock", lambda: float(next(ticks)))
    with pytest.raises(Refused, match="reading took more than"):
        sources.read_file_text(_resolved(workspace, "slow.txt"), (1, 100_000))
