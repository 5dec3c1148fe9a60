"""What ``@file:`` and ``@folder:`` attach: a file's text (or some of its lines) and a
bounded listing of a folder (names and sizes, never contents).

Both read only through :func:`~hermes_core.references.paths.open_inside`, after the guard.
Every read goes in 64 KiB chunks, never a whole line at once (a file that is one 300 MB
line must not cost 300 MB): a whole file is read up to :data:`MAX_FILE_BYTES`; a line range
may reach further into a larger file, scanning at most :data:`MAX_SCAN_BYTES` and keeping at
most :data:`MAX_FILE_BYTES` (longer, it is cut, and said so); any read stops after
:data:`MAX_READ_SECONDS` (one deadline for all the files of a message). A NUL byte in the
first 8 KiB marks a file binary and refuses it.
A listing never follows a link, never descends into a sensitive folder or a tool cache
(``.git``, ``node_modules``, ...), and leaves sensitive names out altogether.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hermes_core.references.paths import Resolved, open_inside
from hermes_core.references.refusal import Refused
from hermes_core.references.sensitive import sensitive_reason

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LISTING",
    "MAX_READ_SECONDS",
    "FileText",
    "deadline",
    "folder_listing",
    "read_file_text",
]

#: A whole file larger than this is refused (name a line range instead).
MAX_FILE_BYTES: Final = 4 * 1024 * 1024
#: A line range reads at most this far into a file (and keeps at most MAX_FILE_BYTES of it).
MAX_SCAN_BYTES: Final = 64 * 1024 * 1024
#: Reading the files of one message stops after this long (a slow or hung file system).
MAX_READ_SECONDS: Final = 10.0
#: A folder listing names at most this many entries, at most this deep.
MAX_LISTING: Final = 200
MAX_DEPTH: Final = 4
_SNIFF: Final = 8192
_CHUNK: Final = 1 << 16
_clock = time.monotonic  # replaced by tests
_SKIPPED: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".cache",
        "dist",
        "build",
        ".idea",
        ".vscode",
    }
)


def _binary(head: bytes, shown: str) -> None:
    if b"\x00" in head[:_SNIFF]:
        raise Refused(
            f"{shown} is a binary file and is not attached as text; name a text file, or "
            "describe what you need from it"
        )


def deadline() -> float:
    """When reading must stop: one deadline for all the files a message names."""
    return _clock() + MAX_READ_SECONDS


def _chunks(fd: int, shown: str, until: float) -> Iterator[bytes]:
    """The file from its start in chunks of at most :data:`_CHUNK` bytes, checked for a NUL
    byte in the first :data:`_SNIFF`; stops early (with :class:`Refused`) once the clock
    passes ``until`` (a slow or hung file system, or too many large files in one message).
    Never holds a whole line."""
    head = b""
    with os.fdopen(os.dup(fd), "rb", buffering=0) as handle:
        while chunk := handle.read(_CHUNK):
            if len(head) < _SNIFF:
                head += chunk[: _SNIFF - len(head)]
                _binary(head, shown)
            yield chunk
            if _clock() > until:
                raise Refused(
                    f"{shown}: reading took more than {MAX_READ_SECONDS:g} s (for all the "
                    "files of this message) and was stopped; name a smaller file or range"
                )


def _whole(fd: int, shown: str, until: float) -> bytes:
    size = os.fstat(fd).st_size
    if size > MAX_FILE_BYTES:
        raise Refused(
            f"{shown} is {size:,} bytes, over the {MAX_FILE_BYTES // (1024 * 1024)} MiB a "
            f"whole file may have; name the lines you need, as in @file:{shown}:1-200"
        )
    data = bytearray()
    for chunk in _chunks(fd, shown, until):
        data += chunk
        if len(data) > MAX_FILE_BYTES:  # it grew while being read
            raise Refused(f"{shown} grew over {MAX_FILE_BYTES:,} bytes while it was read")
    return bytes(data)


def _after_newlines(chunk: bytes, count: int, total: int) -> int:
    """The offset just past the ``count``-th newline of ``chunk``, which has ``total``."""
    if count == total:  # the last one: no need to step over the others
        return chunk.rindex(b"\n") + 1
    at = 0
    for _ in range(count):
        at = chunk.index(b"\n", at) + 1
    return at


def _lines(fd: int, first: int, last: int, shown: str, until: float) -> tuple[bytes, int, str]:
    """Lines ``first``..``last`` (1-based), the number of lines seen, and why the text was
    cut ("" if it was not, "long" for a line longer than the bound, "range" for a range that
    holds more than the bound, "scan" for a range that reaches past :data:`MAX_SCAN_BYTES`).

    Reads in chunks, never a whole line at once, keeping at most :data:`MAX_FILE_BYTES`.
    Lines are counted per chunk (``bytes.count``), not one by one: a range past the end of a
    file of millions of empty lines costs a count per chunk, not a loop per line."""
    kept = bytearray()
    number = 1  # the line the next byte belongs to
    scanned = 0
    ends_line = True  # the last byte read ended a line (or nothing was read)
    for chunk in _chunks(fd, shown, until):
        if scanned >= MAX_SCAN_BYTES:  # and the file goes on
            if number < first:
                raise Refused(
                    f"{shown}: line {first} lies more than {MAX_SCAN_BYTES // (1024 * 1024)} "
                    "MiB into the file; name an earlier range"
                )
            return bytes(kept), number, "scan"
        scanned += len(chunk)
        ends_line = chunk.endswith(b"\n")
        newlines = chunk.count(b"\n")
        start = 0
        if number < first:
            if number + newlines < first:  # the range starts in a later chunk
                number += newlines
                continue
            start = _after_newlines(chunk, first - number, newlines)
            number, newlines = first, newlines - (first - number)
        end = len(chunk)
        ends_here = number + newlines > last
        if ends_here:
            end = _after_newlines(chunk[start:], last - number + 1, newlines) + start
        piece = chunk[start:end]
        room = MAX_FILE_BYTES - len(kept)
        if len(piece) > room:
            kept += piece[:room]
            whole_line = b"\n" not in kept
            return bytes(kept), number, "long" if whole_line else "range"
        kept += piece
        if ends_here:
            return bytes(kept), last, ""
        number += newlines
    return bytes(kept), number - 1 if ends_line else number, ""


@dataclass(frozen=True)
class FileText:
    """What an ``@file:`` read attached: the text, whether it was cut at the size bound and
    why (``why``: see :func:`_lines`), so the caller can say so."""

    text: str
    cut: bool = False
    why: str = ""


def read_file_text(
    resolved: Resolved, line_range: tuple[int, int] | None, until: float | None = None
) -> FileText:
    """The text of a checked file (or of its lines ``line_range``), decoded as UTF-8 (an
    invalid byte becomes U+FFFD); raises :class:`Refused` for a binary or oversized file,
    a range past the end, or a read still going at ``until`` (default: :func:`deadline`).
    A range is cut at :data:`MAX_FILE_BYTES` (``cut`` says why)."""
    until = deadline() if until is None else until
    fd = open_inside(resolved)
    cut = ""
    try:
        if line_range is None:
            data = _whole(fd, resolved.shown, until)
        else:
            data, seen, cut = _lines(fd, *line_range, resolved.shown, until)
            if seen < line_range[0]:
                raise Refused(
                    f"{resolved.shown} has {seen} lines, so lines {line_range[0]}-"
                    f"{line_range[1]} are past its end: name a range within 1-{seen}"
                )
    finally:
        os.close(fd)
    return FileText(data.decode("utf-8", "replace"), bool(cut), cut)


def _entry_line(entry: os.DirEntry[str], depth: int) -> tuple[str, bool]:
    """The listing line of one entry, and whether to descend into it."""
    indent = "  " * depth
    info = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(info.st_mode):
        return f"{indent}{entry.name} (symbolic link, not followed)", False
    if stat.S_ISDIR(info.st_mode):
        return f"{indent}{entry.name}/", entry.name not in _SKIPPED
    return f"{indent}{entry.name} ({info.st_size:,} bytes)", False


def _walk(folder: Path, depth: int, lines: list[str], homes: tuple[Path, Path, Path | None]) -> int:
    """Append the entries of ``folder`` (depth-first, folders first); returns how many were
    left out because the listing was full."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: (not e.is_dir(follow_symlinks=False), e.name))
    except OSError as exc:
        lines.append(f"{'  ' * depth}(could not list: {exc.strerror or exc})")
        return 0
    left_out = 0
    for entry in entries:
        path = Path(entry.path)
        if sensitive_reason(path, workspace=homes[0], user_home=homes[1], hermes_home=homes[2]):
            continue
        if len(lines) > MAX_LISTING:
            left_out += 1
            continue
        line, descend = _entry_line(entry, depth)
        lines.append(line)
        if descend and depth < MAX_DEPTH:
            left_out += _walk(path, depth + 1, lines, homes)
    return left_out


def folder_listing(
    resolved: Resolved, *, user_home: Path, hermes_home: Path | None = None
) -> tuple[str, int]:
    """A tree of a checked folder: ``(text, entries left out because of the bound)``.
    Sensitive entries are left out without a trace, and never descended into."""
    os.close(open_inside(resolved, directory=True))  # still the checked, link-free folder
    lines = [f"{resolved.shown.rstrip('/') or '.'}/"]
    left_out = _walk(resolved.real, 1, lines, (resolved.root, user_home, hermes_home))
    if left_out:
        lines.append(f"... and {left_out} more entries (name a subfolder to see them)")
    return "\n".join(lines), left_out
