"""Where a skill lives and which names and paths a caller may use: the pure rules.

Why strict: a skill name, a category and a support-file path all come from a model (or a
hand-edited home) and each becomes a path under ``$HERMES_HOME/skills``. Names are short
lower-case words (no separators, no dots at the start), so they can never climb out; a
support-file path is a relative POSIX path under one of four folders, without ``..``,
``.``, empty or hidden parts, so it can never leave its skill. Whether a path on disk goes
through a symbolic link is checked separately (:mod:`hermes_core.skills.files`).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "MAX_FILE_PATH_CHARS",
    "MAX_NAME_CHARS",
    "MAX_SKILL_CHARS",
    "MAX_SUPPORT_BYTES",
    "MAX_SUPPORT_FILES",
    "MAX_SUPPORT_TOTAL_BYTES",
    "SKILL_FILE",
    "SUPPORT_DIRS",
    "category_problem",
    "describe",
    "escape_invisible",
    "file_path_parts",
    "has_controls",
    "has_invisible",
    "name_problem",
    "without_invisible",
]

SKILL_FILE: Final = "SKILL.md"
#: The only folders of a skill that hold support files.
SUPPORT_DIRS: Final = ("references", "templates", "scripts", "assets")
MAX_NAME_CHARS: Final = 64
#: SKILL.md, front matter included, in characters.
MAX_SKILL_CHARS: Final = 100_000
#: One support file, in bytes (UTF-8).
MAX_SUPPORT_BYTES: Final = 1024 * 1024
#: Support files one skill holds at most (a write that adds one more is refused).
MAX_SUPPORT_FILES: Final = 100
#: Bytes all support files of one skill hold together at most.
MAX_SUPPORT_TOTAL_BYTES: Final = 10 * 1024 * 1024
MAX_FILE_PATH_CHARS: Final = 512
_MAX_DEPTH: Final = 8
_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_PART: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._ +@,=-]{0,127}")
# C0 and C1 controls (tab and newline aside), DEL, and bidirectional overrides
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# What no screen shows but can reorder or split text: the Arabic letter mark, zero-width
# spaces and joiners, LRM/RLM, bidi embeddings, overrides and isolates, word joiners and
# invisible operators, the BOM (ZWNBSP) and tag characters. Refused in a description, since
# the description goes into every system prompt.
_INVISIBLE: Final = re.compile(
    "[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_SHOWN_ESCAPED: Final = re.compile(_INVISIBLE.pattern[:-1] + "\x7f-\x9f]")


def describe(value: object) -> str:
    """A short, safe rendering of what a caller sent, for an error message."""
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return repr(_CONTROLS.sub("?", shown))
    if value is None or isinstance(value, bool):
        return repr(value)
    return f"a {type(value).__name__}"


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a control character (tab and newline aside) or a bidi override."""
    return _CONTROLS.search(text) is not None


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds an invisible formatting character (zero-width, a direction
    mark, a bidi control, a tag character)."""
    return _INVISIBLE.search(text) is not None


def without_invisible(text: str) -> str:
    """``text`` with its invisible formatting characters removed (``Ig<ZWSP>nore`` reads
    ``Ignore``) and other control characters turned into spaces: how a description planted
    by hand is shown in the index."""
    return _CONTROLS.sub(" ", _INVISIBLE.sub("", text))


def escape_invisible(text: str) -> str:
    """``text`` with every invisible formatting character, DEL and C1 control written as an
    escape (``\\u200f``): what ``json.dumps(..., ensure_ascii=False)`` leaves raw, so the
    result is still valid JSON (C0 controls are left to the caller's own escaping)."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        if code > 0xFFFF:  # JSON has no 6-digit escape: write the surrogate pair
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"

    return _SHOWN_ESCAPED.sub(escape, text)


def name_problem(name: object, what: str = "skill name") -> str | None:
    """What is wrong with a skill name, or None: 1-64 characters of lower-case letters,
    digits, ``.``, ``_`` and ``-``, starting with a letter or a digit."""
    if not isinstance(name, str) or not name:
        return f"a {what} is required: a string such as 'deploy-staging', got {describe(name)}."
    if len(name) > MAX_NAME_CHARS:
        return f"the {what} is {len(name)} characters long; at most {MAX_NAME_CHARS} are allowed."
    if has_controls(name):
        return f"the {what} {describe(name)} holds a control character; use plain text."
    if not _NAME.fullmatch(name):
        return (
            f"invalid {what} {describe(name)}: use lower-case letters, digits, '.', '_' and '-' "
            "(no '/', no spaces), starting with a letter or a digit."
        )
    return None


def category_problem(category: object) -> str | None:
    """What is wrong with a category (one folder name, the rules of a skill name), or None."""
    if category is None:
        return None
    if isinstance(category, str) and "/" in category:
        return (
            f"category {describe(category)} must be one folder name, not a path: skills nest "
            "at most one category deep."
        )
    return name_problem(category, "category")


def file_path_parts(file_path: object) -> tuple[str, ...] | str:
    """The parts of a support-file path (``references/api.md`` -> ``("references",
    "api.md")``), or what is wrong with it: it must be relative, use ``/``, start with one of
    :data:`SUPPORT_DIRS`, name a file below it, and hold no ``..``, ``.``, empty or hidden
    part."""
    folders = ", ".join(f"{d}/" for d in SUPPORT_DIRS)
    if not isinstance(file_path, str) or not file_path.strip():
        return f"file_path is required: a path such as 'references/notes.md' under {folders}."
    if len(file_path) > MAX_FILE_PATH_CHARS:
        return f"file_path is {len(file_path):,} characters long; at most {MAX_FILE_PATH_CHARS}."
    if has_controls(file_path) or "\\" in file_path:
        return (
            f"file_path {describe(file_path)} holds a control character or a backslash; use a "
            "plain relative path with '/'."
        )
    if file_path.startswith("/") or re.match(r"[A-Za-z]:", file_path) or file_path[0] == "~":
        return (
            f"file_path {describe(file_path)} is absolute; give a path relative to the skill, "
            f"under {folders}."
        )
    parts = tuple(file_path.split("/"))
    if ".." in parts:
        return f"file_path {describe(file_path)} contains '..'; paths may not leave the skill."
    if any(part in ("", ".") for part in parts):
        return f"file_path {describe(file_path)} has an empty or '.' part; write it plainly."
    if parts[0] not in SUPPORT_DIRS:
        return (
            f"file_path {describe(file_path)} is not under {folders}: support files live only "
            "there (SKILL.md itself changes with edit or patch)."
        )
    if len(parts) < 2:
        return (
            f"file_path {describe(file_path)} names a folder; add a file name ('{parts[0]}/x.md')."
        )
    if len(parts) > _MAX_DEPTH:
        return f"file_path {describe(file_path)} is nested more than {_MAX_DEPTH} levels deep."
    for part in parts[1:]:
        if not _PART.fullmatch(part):
            return (
                f"file_path part {describe(part)} is not allowed: use letters, digits and "
                "'._-' (no hidden names starting with '.', at most 128 characters)."
            )
    return parts
