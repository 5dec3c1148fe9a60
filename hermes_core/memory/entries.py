"""The `§` file format of MEMORY.md and USER.md: parse, render, measure, round-trip.

Why a module of its own: every write re-reads the file and every read must agree on what an
entry is, and drift detection is exactly "does the file survive parse + render unchanged". The
format is the seed's, so a hermes-agent home reads the same: entries joined by newline, ``§``,
newline; an entry may span lines and may hold a bare ``§`` inside a line.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = [
    "ENTRY_DELIMITER",
    "TARGET_FILES",
    "entry_problem",
    "escape_controls",
    "normal_content",
    "parse_entries",
    "render_entries",
    "round_trips",
    "size_of",
    "usage_text",
    "without_controls",
]

ENTRY_DELIMITER: Final = "\n§\n"
#: The two targets and the file each is kept in.
TARGET_FILES: Final = {"memory": "MEMORY.md", "user": "USER.md"}
_BOM: Final = "\ufeff"
_LINE_ENDS: Final = re.compile(r"\r\n?")
#: A line holding only ``§`` (spaces around it allowed): a separator, or one mistyped by hand.
_SEPARATOR_LINE: Final = re.compile(r"^[ \t]*§[ \t]*$", re.MULTILINE)
#: Characters a terminal acts on instead of showing (C0 controls but tab and newline, DEL,
#: C1 controls) and the bidirectional embeddings, overrides and isolates, which reorder what
#: is shown: either can hide text from the person who reviews memory.
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: A terminal escape sequence (CSI, OSC or a two-character escape), as a whole.
_TERMINAL_SEQUENCE: Final = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, "conceal"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, links
    r"|\x1b[@-_]"  # any other two-character escape
)
_CONTROL_NAMES: Final = {
    0x00: "NUL",
    0x07: "BEL",
    0x08: "BACKSPACE",
    0x0B: "VERTICAL TAB",
    0x0C: "FORM FEED",
    0x0D: "CARRIAGE RETURN",
    0x1B: "ESC",
    0x7F: "DELETE",
    0x9B: "CSI",
    0x9D: "OSC",
}


def _unique(entries: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(e for e in entries if e))


def parse_entries(text: str) -> list[str]:
    """The entries of a file's text: split on the delimiter, stripped, empties dropped,
    duplicates dropped (the first kept). A leading BOM and Windows line ends are tolerated."""
    text = text.removeprefix(_BOM).replace("\r\n", "\n")
    return _unique(part.strip() for part in text.split(ENTRY_DELIMITER))


def render_entries(entries: Sequence[str]) -> str:
    """The file text for ``entries`` (no trailing newline, as the seed writes it)."""
    return ENTRY_DELIMITER.join(entries)


def size_of(entries: Sequence[str]) -> int:
    """Characters the entries take in the file, delimiters included (what the limit counts)."""
    return len(render_entries(entries))


def normal_content(content: str) -> str:
    """Content as it will be stored: every line end a ``\n``, stripped, no leading BOM
    (anything else would not survive its own round trip through the file)."""
    return _LINE_ENDS.sub("\n", content).strip().removeprefix(_BOM).strip()


def entry_problem(entry: str) -> str | None:
    """Why ``entry`` (normalised) cannot be stored as one entry, or None."""
    try:
        entry.encode("utf-8")
    except UnicodeEncodeError:
        return "content holds characters that are not valid Unicode text (lone surrogates)."
    if _SEPARATOR_LINE.search(entry):
        return "content may not hold a line with only '§': that line separates entries."
    if control := _CONTROLS.search(entry):
        char = control.group()
        return (
            f"content holds the control character {_name(char)} at character "
            f"{control.start() + 1:,}: terminal control codes and bidirectional overrides can "
            "hide or reorder text for the person who reviews memory. Remove it and try again."
        )
    return None


def _name(char: str) -> str:
    code = ord(char)
    name = _CONTROL_NAMES.get(code) or unicodedata.name(char, "")
    return f"U+{code:04X}" + (f" ({name})" if name else "")


def escape_controls(text: str) -> str:
    """``text`` safe to print on a terminal: every control character (but tab and newline)
    and bidirectional override shown as an escape (``\\x1b``, ``\\u202e``); Windows line ends
    become newlines first."""
    text = text.replace("\r\n", "\n")
    return _CONTROLS.sub(lambda m: _escape(m.group()), text)


def without_controls(text: str) -> str:
    """``text`` with terminal escape sequences and control characters (but tab and newline)
    replaced by spaces: how a payload wrapped in them reads (``\\x1b[8mIgnore`` is
    ``Ignore``), for a rescan of an entry planted by hand."""
    return _CONTROLS.sub(" ", _TERMINAL_SEQUENCE.sub(" ", text))


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def round_trips(text: str) -> bool:
    """Whether the file is exactly what this format would write for its own entries (a BOM
    and one final newline aside) and no entry holds a separator-like line (`` § ``, or a
    trailing ``§``). False means someone edited it by other means: drift."""
    body = text.removeprefix(_BOM)
    if body.endswith("\n"):
        body = body[:-1]
    entries = parse_entries(body)
    if any(_SEPARATOR_LINE.search(entry) for entry in entries):
        return False
    return render_entries(entries) == body


def usage_text(used: int, limit: int) -> str:
    """``63% — 1,386/2,200 chars``: how full a target is, as the snapshot header shows it."""
    percent = int(used * 100 / limit) if limit > 0 else 100
    return f"{percent}% — {used:,}/{limit:,} chars"
